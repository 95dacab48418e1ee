"""One way in for a job's input: whatever form a producer hands over becomes JSON text,
checked against the limits of whoever reads it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from config.settings import Settings


@dataclass(frozen=True)
class InputLimits:
    """How large a job's input may be: its whole JSON text, and one witness carried in it
    (a larger witness travels as a path on shared storage). Passed to every parse, so a
    producer applies its own settings (``Client(redis_url, settings)``) and a worker its."""

    max_input_bytes: int
    max_inline_witness_bytes: int

    @classmethod
    def of(cls, settings: Settings) -> "InputLimits":
        return cls(settings.max_input_bytes, settings.max_inline_witness_bytes)


@dataclass(frozen=True)
class Admission:
    """What a producer stores for an accepted job: one JSON text per input value (the
    stored input, and what idempotency compares) and its number of units of work."""

    canonical_json: str
    partitions: int


def as_json_text(raw: Any, model: type, error: type[ValueError], field: str) -> str | bytes:
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


def too_large(field: str, size: int, limit: int) -> str:
    """The one message for an input over ``max_input_bytes``."""
    return (f"{field}: {size} bytes exceeds max_input_bytes ({limit}, "
            f"PROOFQ_MAX_INPUT_BYTES)")
