"""One way in for a job's input: whatever form a producer hands over becomes JSON text."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


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
