"""One way in for a job's input: whatever form a producer hands over becomes JSON text,
checked against the limits of whoever reads it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from config.settings import Settings


@dataclass(frozen=True)
class InputLimits:
    """How large a job's input may be: its whole JSON text, and one witness carried in it
    (a larger witness travels as a path on shared storage). Passed to every parse, so a
    producer applies its own settings (``Client(redis_url, settings)``) and a worker its."""

    max_input_bytes: int
    max_inline_witness_bytes: int
    max_units: int = 16_384
    max_amplification: float = 16.0

    @classmethod
    def of(cls, settings: Settings) -> "InputLimits":
        return cls(settings.max_input_bytes, settings.max_inline_witness_bytes,
                   settings.max_units_per_job, settings.max_amplification)


@dataclass(frozen=True)
class Admission:
    """What a producer stores for an accepted job: one JSON text per input value (the
    stored input, and what idempotency compares) and its number of units of work."""

    canonical_json: str
    partitions: int


class JsonModel(Protocol):
    """A job input model: its canonical JSON text."""

    def to_json(self) -> str: ...


def as_json_text(raw: Any, model: type[JsonModel], error: type[ValueError],
                 field: str) -> str | bytes:
    """``raw`` as JSON text. Models and dicts go through JSON text too, so one size limit and
    one validation apply to every way in (a model may have been built without validation)."""
    if isinstance(raw, model):
        return raw.to_json()
    if isinstance(raw, dict):
        return json.dumps(raw)
    if isinstance(raw, (str, bytes)):
        return raw
    raise error(f"{field}: expected JSON text, bytes, a dict or a {model.__name__}, "
                f"got {type(raw).__name__}")


# -- JSON text: one strict reading ------------------------------------------------------------
#: Longest integer literal read (Python's own limit for int(str)); a longer one is refused,
#: naming its field, instead of failing the whole parse with no field.
MAX_NUMBER_DIGITS = 4300


class _Flagged:
    """A value the hooks refused, carried up to the objects that name its place."""

    __slots__ = ("path", "problem")

    def __init__(self, path: list, problem: str) -> None:
        self.path, self.problem = path, problem


def _flagged_in(value: Any) -> _Flagged | None:
    """The first refused value in ``value`` (objects were flagged by their own hook)."""
    if isinstance(value, _Flagged):
        return value
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _flagged_in(item)
            if found is not None:
                return _Flagged([index, *found.path], found.problem)
    return None


def _where(path: list) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def load_json(raw: str | bytes, field: str, error: type[ValueError]) -> Any:
    """JSON text as Python values, refusing what ``json.loads`` lets through or dies on,
    each as one line naming the place: a duplicate key (``json`` keeps the last one), an
    integer longer than ``MAX_NUMBER_DIGITS`` digits, nesting deeper than the parser's
    stack (``RecursionError``). ``field`` names the whole text."""
    seen_flag = False

    def integer(text: str) -> Any:
        nonlocal seen_flag
        if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
            seen_flag = True
            return _Flagged([], f"a number of {len(text.lstrip('-'))} digits (at most "
                                f"{MAX_NUMBER_DIGITS})")
        return int(text)

    def obj(pairs: list[tuple[str, Any]]) -> Any:
        nonlocal seen_flag
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                seen_flag = True
                return _Flagged([key], "duplicate key")
            result[key] = value
        if seen_flag:
            for key, value in result.items():
                found = _flagged_in(value)
                if found is not None:
                    return _Flagged([key, *found.path], found.problem)
        return result

    try:
        value = json.loads(raw, object_pairs_hook=obj, parse_int=integer)
    except (json.JSONDecodeError, UnicodeError) as exc:
        raise error(f"{field}: not valid JSON ({exc})") from None
    except RecursionError:
        raise error(f"{field}: not valid JSON (nested too deeply)") from None
    found = _flagged_in(value) if seen_flag else None
    if found is not None:
        raise error(f"{_where(found.path) or field}: {found.problem}")
    return value


def too_large(field: str, size: int, limit: int) -> str:
    """The one message for an input over ``max_input_bytes``."""
    return (f"{field}: {size} bytes exceeds max_input_bytes ({limit}, "
            f"PROOFQ_MAX_INPUT_BYTES)")


# -- inputs too large for Redis: paths on shared storage --------------------------------------
# A job names such an input by its path relative to the storage every worker mounts
# (``Settings.witness_dir``, each host at its own mount point): the producer checks the
# path's form, the worker resolves it under its own mount. ``error`` is the type's own
# ValueError, so a type's input errors stay one class.

def shared_relative_path(text: str, field: str, error: type[ValueError]) -> str:
    """``text`` as a path that cannot leave the shared directory (producer side)."""
    path = PurePosixPath(text)
    if not text or path.is_absolute() or ".." in path.parts or "\0" in text:
        raise error(f"{field}: {text!r:.80} must be a relative path inside the witness "
                    f"directory (no leading /, no ..)")
    return str(path)


def resolve_shared(root: Path | None, relative: str, field: str,
                   error: type[ValueError]) -> Path:
    """Where ``relative`` is on this worker's mount ``root`` (links followed: a link that
    leads outside is refused). A path that names no file is the input's mistake, refused
    here (permanent), not an error of the file system to try again; the message names the
    path as the job does, never where this worker mounts it."""
    if root is None:
        raise error(f"{field}: this worker has no witness_dir (PROOFQ_WITNESS_DIR) to find "
                    f"{relative!r} in")
    base = Path(root).resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise error(f"{field}: {relative!r} leads outside the witness directory")
    if not path.is_file():
        raise error(f"{field}: no file {relative!r} in the witness directory")
    return path
