"""Reading a C1 that is laid out exactly as serde writes it, by comparison with a template.

Whatever the sector, the lifted skeleton (``c1_lift``) of a C1 written by serde_json (Curio's
and lotus' C1s) is the same text for a registered proof except for its integers. So instead
of parsing that skeleton as JSON and walking it, this compares it with the proof's template
and, if equal, reads every integer and field element from its known place by reshaping:
the structural part of reading a 32 GiB C1 becomes a few passes over 2 MB of text.

The template is the writer's own output (``c1_write``) for a miniature C1 of one challenge
whose integers and field elements are numbered: the numbers tell where each value of the
layout sits, so the layout is never written down twice. Anything else (fields in another
order, spaces, a value out of range) gives ``None`` and the general reader (``c1_schema``)
takes over, with its exact error messages.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace

import numpy as np

from snark.filecoin.c1 import COMMITMENTS, RAW_BYTES, VanillaProofs, map_arrays
from snark.filecoin.c1_lift import DIGITS_ONLY as _DIGITS_ONLY
from snark.filecoin.c1_write import challenge_texts, document, tail_fields
from snark.filecoin.domain import DOMAIN_BYTES, canonical
from snark.filecoin.registered_proofs import REGISTERED_PROOFS, RegisteredProof

_RUN = re.compile(rb"\d+")
_NUMBERED_FIELD = re.compile(rb'"D(\d+)"')
_NAME = re.compile(rb'\{"registered_proof":"(\w+)"')
#: Longest integer taken here (u64 fits in 20 digits; int64 arrays hold up to 18).
_MAX_DIGITS = 18


@dataclass(frozen=True)
class _Layout:
    template: bytes          # the whole skeleton, every digit run written as 0
    head_runs: int           # digit runs before the first challenge (the proof's name)
    numbered: VanillaProofs  # lead (1, 1): each array holds its elements' numbers
    int_order: np.ndarray    # per challenge: the number of each integer, in text order
    field_order: np.ndarray  # per challenge: the number of each field element, in text order
    with_ids: bool


def _numbered(proof: RegisteredProof) -> VanillaProofs:
    """One challenge's proofs with every integer and every field element numbered (a field
    element's number in its first four bytes)."""
    counts = {"ints": 0, "fields": 0}

    def number(array: np.ndarray) -> np.ndarray:
        if array.dtype == np.uint8:
            rows = array.size // DOMAIN_BYTES
            out = np.zeros_like(array).reshape(rows, DOMAIN_BYTES)
            out[:, :4] = (np.arange(rows, dtype="<u4") + counts["fields"]).view(np.uint8)\
                .reshape(rows, 4)
            counts["fields"] += rows
            return out.reshape(array.shape)
        counts["ints"] += array.size
        return (np.arange(array.size) + counts["ints"] - array.size).reshape(array.shape)

    return map_arrays(VanillaProofs.empty(proof, (1, 1)), number)


def _marker(values: np.ndarray) -> list[str]:
    ids = np.ascontiguousarray(values[..., :4]).reshape(-1, 4).view("<u4").reshape(-1)
    return [f'"D{i}"' for i in ids.tolist()]


@lru_cache(maxsize=32)
def _layout(proof: RegisteredProof, with_ids: bool) -> _Layout:
    numbered = _numbered(proof)
    challenge = challenge_texts(numbered, _marker)[0].encode()
    field_order = np.array([int(i) for i in _NUMBERED_FIELD.findall(challenge)])
    bare = _NUMBERED_FIELD.sub(b'""', challenge)
    int_order = np.array([int(i) for i in _RUN.findall(bare)])
    tail = SimpleNamespace(**{name: bytes(32) for name in (*COMMITMENTS, "prover_id")},
                           sector_id=0)
    text = document(proof, [bare.decode()] * proof.challenges,
                    tail_fields(tail, with_ids, lambda values: ['""'] * (values.size // 32)))
    template = _RUN.sub(b"0", text.encode())
    runs = len(_RUN.findall(template)) - proof.challenges * len(int_order) - with_ids
    return _Layout(template, runs, numbered, int_order, field_order, with_ids)


def read_canonical(skeleton: bytes, table: np.ndarray) -> dict | None:
    """The fields of a serde-laid-out C1 from its lifted skeleton and field elements, as
    ``c1_schema`` returns them; ``None`` for any other text or any value out of range."""
    name = _NAME.match(skeleton)
    proof = REGISTERED_PROOFS.get(name.group(1).decode()) if name else None
    if proof is None:
        return None
    q = proof.challenges
    with_ids = len(table) == q * len(_layout(proof, False).field_order) + len(COMMITMENTS) + 1
    layout = _layout(proof, with_ids)
    fields_per = len(layout.field_order)
    if len(table) != q * fields_per + len(COMMITMENTS) + with_ids:
        return None
    text = np.frombuffer(skeleton, dtype=np.uint8)
    digits = (text - 48) < 10
    starts = digits & ~np.concatenate([[False], digits[:-1]])
    normalised = np.where(starts, np.uint8(48), text)[~digits | starts]
    if normalised.tobytes() != layout.template or not _below_r(table, q * fields_per):
        return None
    first = np.flatnonzero(starts)[layout.head_runs:]
    ends = np.flatnonzero(digits & ~np.concatenate([digits[1:], [False]]))[layout.head_runs:] + 1
    if ((ends - first > _MAX_DIGITS) | ((ends - first > 1) & (text[first] == 48))).any():
        return None  # too long for an int64, or a leading zero (not JSON)
    with warnings.catch_warnings():  # fromstring's text mode: deprecated, still the fastest
        warnings.simplefilter("ignore", DeprecationWarning)
        ints = np.fromstring(skeleton[first[0]:].translate(_DIGITS_ONLY) if len(first) else b"",
                             dtype=np.int64, sep=" ")
    if len(ints) != len(first):
        return None
    per_challenge = ints[:q * len(layout.int_order)].reshape(q, -1)
    by_int = np.empty_like(per_challenge)
    by_int[:, layout.int_order] = per_challenge
    fields = table[:q * fields_per].reshape(q, fields_per, DOMAIN_BYTES)
    by_field = np.empty_like(fields)
    by_field[:, layout.field_order] = fields
    lead = (proof.partitions, proof.challenges_per_partition)

    def gather(numbers: np.ndarray) -> np.ndarray:
        if numbers.dtype == np.uint8:
            ids = np.ascontiguousarray(numbers[..., :4]).view("<u4")[..., 0]
            return by_field[:, ids.reshape(-1)].reshape(*lead, *numbers.shape[2:])
        return by_int[:, numbers.reshape(-1)].reshape(*lead, *numbers.shape[2:])

    vanilla = map_arrays(layout.numbered, gather)
    if not _in_range(vanilla, proof):
        return None
    tail = table[q * fields_per:]
    got = {"registered_proof": proof, "vanilla_proofs": vanilla}
    got |= {name: tail[i].tobytes() for i, name in enumerate(COMMITMENTS)}
    if with_ids:
        got["prover_id"] = tail[-1].tobytes()
        got["sector_id"] = int(ints[-1])
    return got


def _below_r(table: np.ndarray, tail_start: int) -> bool:
    """Every field element below r: all but the tail's raw bytes (ticket, seed, prover_id)."""
    tail = (*COMMITMENTS, "prover_id")[:len(table) - tail_start]
    below_r = canonical(table)
    below_r[[tail_start + i for i, name in enumerate(tail) if name in RAW_BYTES]] = True
    return bool(below_r.all())


def _in_range(v: VanillaProofs, proof: RegisteredProof) -> bool:
    """The integer fields' ranges (the ones ``c1_schema`` enforces; all are ≥ 0 here)."""
    ok = all((level.index < level.arity).all()
             for path in (v.comm_d, v.comm_r_last, v.columns.path) for level in path.levels)
    nodes = (v.columns.index, v.labeling.node, v.encoding.node)
    return ok and all((a < proof.nodes).all() for a in nodes) and all(
        (a < 1 << 32).all() for a in (v.labeling.layer_index, v.encoding.layer_index))
