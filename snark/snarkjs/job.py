"""A ``circom`` job's input: one imported snarkjs key and the witnesses to prove with it.

JSON, one proof per witness, in order::

    {"key": "<key id from proofq keys add>",
     "witnesses": [{"wtns": "<base64 of a .wtns file>"}, {"path": "batch7/w12.wtns"}, …]}

How a witness travels: a ``.wtns`` of at most ``max_inline_witness_bytes``
(``PROOFQ_MAX_INLINE_WITNESS_BYTES``, 4 MiB by default: 2^17 signals) rides inline in the job,
so in Redis; a larger one stays on shared storage that every worker mounts, named by its path
relative to ``witness_dir`` (``PROOFQ_WITNESS_DIR``; each host sets its own mount point). A
path may not leave that directory. The whole job JSON is bounded by ``max_input_bytes`` like
every job input. ``job_from_files`` picks the way for each file, as the client does.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from snark.errors import InvalidInput
from snark.job_input import load_json, resolve_shared, shared_relative_path, too_large
from snark.snarkjs.wtns import read_wtns

#: A key id: the first hex digits of the zkey's sha256 (``snark.snarkjs.keystore``).
ID_HEX_DIGITS = 32

_HEX = frozenset("0123456789abcdef")


class CircomJobError(InvalidInput):
    """A circom job input that cannot be used; the message names the field."""


@dataclass(frozen=True)
class WitnessRef:
    """One witness: the ``.wtns`` bytes themselves, or a path under the witness directory."""

    wtns: bytes | None = None
    path: str | None = None

    def to_json(self) -> dict[str, str]:
        if self.wtns is not None:
            return {"wtns": base64.b64encode(self.wtns).decode()}
        return {"path": self.shared_path()}

    def shared_path(self) -> str:
        """The path under the witness directory of a reference without its bytes."""
        if self.path is None:
            raise CircomJobError("witness: neither its wtns bytes nor a path")
        return self.path


@dataclass(frozen=True)
class CircomJob:
    key: str
    witnesses: tuple[WitnessRef, ...]

    def to_json(self) -> str:
        return json.dumps({"key": self.key, "witnesses": [w.to_json() for w in self.witnesses]},
                          separators=(",", ":"))


def parse_job(raw: str | bytes, *, max_bytes: int, max_inline: int) -> CircomJob:
    """Validate a job from JSON text (structure and sizes; the witnesses' contents are read
    where they are proved)."""
    if len(raw) > max_bytes:
        raise CircomJobError(too_large("job", len(raw), max_bytes))
    return _validate(load_json(raw, "job", CircomJobError), max_inline)


def _validate(raw: Any, max_inline: int) -> CircomJob:
    if not isinstance(raw, dict) or set(raw) != {"key", "witnesses"}:
        raise CircomJobError('job: expected a JSON object with exactly "key" and "witnesses"')
    key, witnesses = raw["key"], raw["witnesses"]
    if not isinstance(key, str) or len(key) != ID_HEX_DIGITS or not set(key) <= _HEX:
        raise CircomJobError(f"key: expected a key id of {ID_HEX_DIGITS} lowercase hex digits "
                              f"(proofq keys add prints it), got {key!r:.60}")
    if not isinstance(witnesses, list) or not witnesses:
        raise CircomJobError("witnesses: expected a non-empty list")
    return CircomJob(key, tuple(_witness(w, f"witnesses[{i}]", max_inline)
                                 for i, w in enumerate(witnesses)))


def _witness(value: Any, field: str, max_inline: int) -> WitnessRef:
    if not isinstance(value, dict) or len(value) != 1 or not set(value) <= {"wtns", "path"}:
        raise CircomJobError(f'{field}: expected {{"wtns": base64}} or {{"path": relative path}}')
    [(kind, text)] = value.items()
    if not isinstance(text, str):
        raise CircomJobError(f"{field}.{kind}: expected a string, got {type(text).__name__}")
    if kind == "path":
        return WitnessRef(path=shared_relative_path(text, f"{field}.path", CircomJobError))
    try:
        data = base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise CircomJobError(f"{field}.wtns: not base64 ({exc})") from None
    if len(data) > max_inline:
        raise CircomJobError(f"{field}.wtns: {len(data)} bytes exceeds max_inline_witness_bytes "
                              f"({max_inline}, PROOFQ_MAX_INLINE_WITNESS_BYTES): put the file "
                              f"under the shared witness_dir and pass its path")
    return WitnessRef(wtns=data)


def read_witness(job: CircomJob, index: int, witness_dir: Path | None) -> np.ndarray:
    """Witness ``index`` as standard-form limbs ``(nVars, 4)``; errors name ``witnesses[i]``."""
    ref, field = job.witnesses[index], f"witnesses[{index}]"
    if ref.wtns is not None:
        return read_wtns(ref.wtns, field)
    path = resolve_shared(witness_dir, ref.shared_path(), f"{field}.path", CircomJobError)
    return read_wtns(path, f"{field} ({ref.path})")


def job_from_files(key: str, witnesses: Iterable[str | Path | bytes], *, max_inline: int,
                   witness_dir: Path | None) -> CircomJob:
    """A job proving each witness (``.wtns`` files or their bytes) with ``key``: small ones
    inline, larger ones by their path under ``witness_dir``."""
    refs = []
    for witness in witnesses:
        if isinstance(witness, bytes):
            refs.append(WitnessRef(wtns=witness))
            continue
        path = Path(witness)
        if path.stat().st_size <= max_inline:
            refs.append(WitnessRef(wtns=path.read_bytes()))
            continue
        root = None if witness_dir is None else Path(witness_dir).resolve()
        if root is None or not path.resolve().is_relative_to(root):
            raise CircomJobError(
                f"{path}: {path.stat().st_size} bytes is above max_inline_witness_bytes "
                f"({max_inline}, PROOFQ_MAX_INLINE_WITNESS_BYTES) and not under witness_dir "
                f"({witness_dir}, PROOFQ_WITNESS_DIR): put it on the shared storage")
        refs.append(WitnessRef(path=path.resolve().relative_to(root).as_posix()))
    return _validate({"key": key, "witnesses": [ref.to_json() for ref in refs]}, max_inline)
