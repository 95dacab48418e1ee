"""C1: the input of a ``porep`` job, as strict pydantic models (docs/ARCHITECTURE.md §5).

A C1 is what the sealer hands to the prover: the public commitments of one sealed sector
and, per partition and challenge, the vanilla proof (leaves and Merkle siblings) that the
circuit turns into a SNARK. JSON layout (``proofq-porep-c1/1``)::

    {"format": "proofq-porep-c1/1",
     "sector_size": 2048,            # bytes, a power of two, 2KiB…1TiB; nodes = sector_size / 32
     "partitions": P, "challenges": K,
     "comm_d": F, "comm_r": F, "replica_id": F, "seed": F, "ticket": F,
     "vanilla_proofs": [             # P entries, in partition order
        {"challenges": [             # K entries, in challenge order
           {"index": i,              # leaf index, 0 <= i < nodes
            "data_leaf": F, "replica_leaf": F,
            "d_path": [F, ...],      # log2(nodes) siblings, leaf level first
            "r_path": [F, ...]}]}]}

Every ``F`` is an Fr element written ``0x`` + 64 hex digits, big-endian, and canonical
(< r). Parsing only checks shape and types; ``snark.porep.vanilla`` checks the values.
The raw JSON is refused above ``Settings.max_input_bytes`` (``PROOFQ_MAX_INPUT_BYTES``) before
it is parsed, so an oversized job cannot exhaust a worker's memory.

One schema, two element types: ``C1`` holds ints (what the circuit and the checks compute
with, on a worker); ``C1Hex`` keeps the checked hex text (what a producer stores), so that
accepting a job makes no Python call per element: pydantic-core checks each one against
``FR_HEX_PATTERN`` natively. Both refuse the same inputs with the same messages and write
the same canonical JSON.
"""

from __future__ import annotations

import re
import string
from typing import Annotated, Any, Final, Generic, Literal, TypeVar

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer,
                      StringConstraints, ValidationError, model_validator)

from snark.errors import InvalidInput
from snark.fields import FR_MODULUS
from snark.job_input import load_json, too_large

C1_FORMAT: Final = "proofq-porep-c1/1"
NODE_BYTES = 32
MIN_SECTOR_SIZE = 2048
#: Far above Filecoin's 64GiB; keeps node indices within int64 for the vectorised checks.
MAX_SECTOR_SIZE = 1 << 40

_HEX = re.compile(r"0x[0-9a-fA-F]{64}")
_UNITS = {"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}


class C1Error(InvalidInput):
    """A C1 is malformed or its vanilla proofs are wrong; one line naming the field."""


def fr_hex(value: int) -> str:
    return f"0x{value:064x}"


def _below_modulus_pattern() -> str:
    """A regex for the 64-digit hex strings below r: a prefix of r's digits, then one digit
    smaller than r's next, then any digits (64 alternatives; a DFA, so one pass per value)."""
    digits = f"{FR_MODULUS:064x}"
    alternatives = []
    for i, digit in enumerate(digits):
        smaller = "0123456789abcdef"[:int(digit, 16)]
        if smaller:
            tail = f"[0-9a-f]{{{63 - i}}}" if i < 63 else ""
            alternatives.append(f"{digits[:i]}[{smaller}]{tail}")
    return f"^0x(?i:{'|'.join(alternatives)})$"


FR_HEX_PATTERN = _below_modulus_pattern()


def _fr_problem(value: Any) -> str:
    """Why ``value`` is not a canonical Fr hex string (the message both models give)."""
    if not isinstance(value, str):
        return f"expected a 0x-prefixed hex string of 64 digits, got {type(value).__name__}"
    if not _HEX.fullmatch(value):
        return f"malformed hex: {_hex_problem(value)}"
    return "non-canonical field element: value is not below the modulus r"


def _parse_fr(value: Any) -> int:
    if not (isinstance(value, str) and _HEX.fullmatch(value)) or int(value, 16) >= FR_MODULUS:
        raise ValueError(_fr_problem(value))
    return int(value, 16)


#: An Fr element: parsed from canonical hex, held as an int, written back as hex.
Fr = Annotated[int, BeforeValidator(_parse_fr), PlainSerializer(fr_hex, return_type=str)]
#: An Fr element kept as its canonical hex text (lower case), checked without Python.
FrHex = Annotated[str, StringConstraints(strict=True, pattern=FR_HEX_PATTERN, to_lower=True)]
Count = Annotated[int, Field(strict=True, ge=1)]
F = TypeVar("F")


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _OfElements(_Strict):
    """Names a parametrized model as the rest of the code does: ``C1``, ``C1Hex``, …"""

    @classmethod
    def model_parametrized_name(cls, params: tuple[Any, ...]) -> str:
        return cls.__name__.removesuffix("Of") + ("Hex" if params == (FrHex,) else "")


class ChallengeProofOf(_OfElements, Generic[F]):
    index: Annotated[int, Field(strict=True, ge=0)]
    data_leaf: F
    replica_leaf: F
    d_path: list[F]
    r_path: list[F]


class PartitionProofOf(_OfElements, Generic[F]):
    challenges: list[ChallengeProofOf[F]]


class C1Of(_OfElements, Generic[F]):
    format: Literal["proofq-porep-c1/1"] = C1_FORMAT
    sector_size: Annotated[int, Field(strict=True)]
    partitions: Count
    challenges: Count
    comm_d: F
    comm_r: F
    replica_id: F
    seed: F
    ticket: F
    vanilla_proofs: list[PartitionProofOf[F]]

    @property
    def nodes(self) -> int:
        return self.sector_size // NODE_BYTES

    @property
    def depth(self) -> int:
        """Merkle tree height = siblings per path = index bits."""
        return self.nodes.bit_length() - 1

    @property
    def circuit_name(self) -> str:
        return circuit_name(self.sector_size, self.challenges)

    def to_json(self) -> str:
        return self.model_dump_json()

    @model_validator(mode="after")
    def _check_shape(self) -> "C1Of":
        """Counts and lengths that depend on other fields (values are vanilla.py's job)."""
        check_sector_size(self.sector_size)
        nodes, depth = self.nodes, self.depth
        if len(self.vanilla_proofs) != self.partitions:
            raise C1Error(f"vanilla_proofs: expected {self.partitions} partitions "
                          f"(the partitions field), got {len(self.vanilla_proofs)}")
        for p, part in enumerate(self.vanilla_proofs):
            where = f"vanilla_proofs[{p}].challenges"
            if len(part.challenges) != self.challenges:
                raise C1Error(f"{where}: expected {self.challenges} challenges "
                              f"(the challenges field), got {len(part.challenges)}")
            for j, ch in enumerate(part.challenges):
                if ch.index >= nodes:
                    raise C1Error(f"{where}[{j}].index: {ch.index} is out of range "
                                  f"for a sector of {nodes} nodes")
                if len(ch.d_path) != depth or len(ch.r_path) != depth:
                    name = "d_path" if len(ch.d_path) != depth else "r_path"
                    raise C1Error(f"{where}[{j}].{name}: expected {depth} siblings, "
                                  f"got {len(getattr(ch, name))}")
        return self


def check_sector_size(sector_size: int) -> None:
    bounds = f"{size_name(MIN_SECTOR_SIZE)} to {size_name(MAX_SECTOR_SIZE)}"
    if sector_size <= 0 or sector_size & (sector_size - 1):
        raise C1Error(f"sector_size: {sector_size} is not a power of two from {bounds}")
    if not MIN_SECTOR_SIZE <= sector_size <= MAX_SECTOR_SIZE:
        raise C1Error(f"sector_size: {sector_size} ({size_name(sector_size)}) is outside {bounds}")


ChallengeProof = ChallengeProofOf[Fr]
PartitionProof = PartitionProofOf[Fr]
C1 = C1Of[Fr]
C1Hex = C1Of[FrHex]


def parse_c1(raw: bytes | str | dict, *, max_bytes: int | None = None) -> C1:
    """Validate a C1 from JSON text or a decoded dict; raise ``C1Error`` naming the field.

    ``max_bytes`` bounds JSON text (the caller's ``max_input_bytes`` setting); the model is
    settings-free, so a library user parses with no configuration at all."""
    return _validated(C1, raw, max_bytes)


def parse_c1_hex(raw: bytes | str | dict, *, max_bytes: int | None = None) -> C1Hex:
    """``parse_c1``'s checks and errors, elements left as hex: a producer's parse."""
    return _validated(C1Hex, raw, max_bytes)


def _validated(model: type[C1Of], raw: bytes | str | dict, max_bytes: int | None) -> C1Of:
    try:
        if isinstance(raw, dict):
            return model.model_validate(raw)
        if isinstance(raw, str):
            try:
                raw = raw.encode()
            except UnicodeEncodeError as exc:  # lone surrogates: no JSON text has them
                raise C1Error(f"c1: not valid JSON text (character {exc.start} is "
                              f"{raw[exc.start]!r}, not encodable as UTF-8)") from None
        if max_bytes is not None and len(raw) > max_bytes:
            raise C1Error(too_large("c1", len(raw), max_bytes))
        load_json(raw, "c1", C1Error)  # what pydantic lets through: duplicate keys, long numbers
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise C1Error(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    """Every missing field of one object in one clause, else the first problem as
    ``field.path[i]: message``; then how many more problems there are."""
    errors = exc.errors(include_url=False)
    parent = errors[0]["loc"][:-1]
    missing = [e for e in errors if e["type"] == "missing" and e["loc"][:-1] == parent]
    if errors[0]["type"] == "missing" and len(missing) > 1:
        where = _field_path(parent) or "c1"
        names = ", ".join(str(e["loc"][-1]) for e in missing)
        rest = len(errors) - len(missing)
        more = f" (and {rest} more problems)" if rest else ""
        return f"{where}: {len(missing)} required fields are missing: {names}{more}"
    first = errors[0]
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, C1Error):
        return f"{cause}{more}"
    where = _field_path(first["loc"]) or "c1"
    kind = first["type"]
    if kind == "missing":
        message = "required field is missing"
    elif kind == "extra_forbidden":
        message = "unknown field"
    elif kind == "json_invalid":
        message = f"not valid JSON ({first['ctx'].get('error', first['msg'])})"
    elif kind == "value_error":
        message = str(cause) if cause is not None else first["msg"]
    elif kind in ("string_type", "string_pattern_mismatch"):  # FrHex: the only str fields
        message = _fr_problem(first["input"])
    elif kind.endswith("_type"):
        message = f"{first['msg'].lower()}, got {type(first['input']).__name__}"
    else:
        message = first["msg"]
    return f"{where}: {message}{more}"


def _field_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _hex_problem(text: str) -> str:
    """What is wrong with a would-be Fr hex string (two mistakes never read the same)."""
    if not text.startswith("0x"):
        return f"expected 0x and 64 hex digits, got {len(text)} characters not starting with 0x"
    digits = text[2:]
    if len(digits) != 64:
        return f"expected 0x and 64 hex digits, got {len(digits)} digits"
    position = next(i for i, char in enumerate(digits) if char not in string.hexdigits)
    return f"{digits[position]!r} at digit {position} is not a hex digit"


# -- sizes ------------------------------------------------------------------------------

def parse_size(text: str) -> int:
    """``"2KiB"`` / ``"512MiB"`` / ``"1TiB"`` / ``"2048"`` → bytes (every unit ``size_name``
    writes is read back)."""
    match = re.fullmatch(r"\s*(\d+)\s*(B|KiB|MiB|GiB|TiB)?\s*", text)
    if not match:
        raise C1Error(f"sector_size: cannot read {text!r} (examples: 2KiB, 4MiB, 1TiB, 2048)")
    return int(match.group(1)) * _UNITS[match.group(2) or ""]


def size_name(size: int) -> str:
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        if size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return f"{size}B"


def circuit_name(sector_size: int, challenges: int) -> str:
    """Human name of a porep circuit, e.g. ``porep-2KiB-k2`` (the circuit id is the hash)."""
    return f"porep-{size_name(sector_size)}-k{challenges}"
