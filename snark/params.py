"""Proving keys cached by circuit id under the params directory, and found by shape.

Several worker processes may ask for the same missing key at once; each may run setup, but
``ProvingKey.save`` renames atomically and the first key to land wins: everyone returns the
key that is on disk, so all partitions of a job are proved and verified with one key.

The circuit id hashes the compiled matrices, and compiling a large circuit takes minutes
(Python builds every constraint). So once a key of a named shape is loaded or made, the
shape's circuit id is recorded in ``shapes/<name>.json``, with the circuit code version and
the sizes; later processes find the key through it without compiling::

    {"format": "proofq-shape/1", "name": "porep-2KiB-k20", "circuit_version": 1,
     "circuit_id": "<hex>", "num_inputs": 24, "num_aux": …, "num_constraints": …}

A record of another code version, or one that disagrees with the shape's sizes or with the
key it names, is refused (``KeyFileError`` naming the file) rather than trusted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from snark.files import write_atomic
from snark.groth16 import FixedBaseMul, SetupProgress, setup
from snark.keys import KeyFileError, ProvingKey
from snark.r1cs import R1CS

SHAPE_FORMAT = "proofq-shape/1"
SHAPES_DIR = "shapes"
_CIRCUIT_ID = re.compile(r"[0-9a-f]{32}")


def key_dir(params_dir: Path, circuit_id: str) -> Path:
    return Path(params_dir) / circuit_id


def load_key(params_dir: Path, circuit_id: str) -> ProvingKey:
    """Load a key, checking hashes; ``KeyFileError`` names the file if anything is off."""
    return ProvingKey.load(key_dir(params_dir, circuit_id))


def load_or_setup(r1cs: R1CS, params_dir: Path, *, fixed_base: FixedBaseMul | None = None,
                  progress: SetupProgress | None = None) -> ProvingKey:
    """The key for ``r1cs``: from disk if present, else a fresh development setup, saved."""
    circuit_id = r1cs.circuit_id()
    directory = key_dir(params_dir, circuit_id)
    if not directory.exists():
        key = setup(r1cs, fixed_base=fixed_base, progress=progress)
        if progress is not None:
            progress("save", 0, None)
        key.save(params_dir)
    key = ProvingKey.load(directory)
    if key.r1cs.num_constraints != r1cs.num_constraints:
        raise KeyFileError(f"{directory}: key was made for another circuit")
    return key


@dataclass(frozen=True)
class CircuitShape:
    """What a circuit of one named shape is, known without compiling it."""

    name: str
    circuit_version: int
    num_inputs: int
    num_aux: int
    num_constraints: int

    def sizes(self) -> tuple[int, int, int]:
        return self.num_inputs, self.num_aux, self.num_constraints


def shape_path(params_dir: Path, name: str) -> Path:
    return Path(params_dir) / SHAPES_DIR / f"{name}.json"


def recorded_circuit_id(params_dir: Path, shape: CircuitShape) -> str | None:
    """The circuit id recorded for ``shape``, or None if there is no record yet."""
    path = shape_path(params_dir, shape.name)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KeyFileError(f"{path}: not valid JSON ({exc.msg})") from None
    if not isinstance(record, dict) or record.get("format") != SHAPE_FORMAT:
        raise KeyFileError(f"{path}: not a {SHAPE_FORMAT} record")
    if record.get("circuit_version") != shape.circuit_version:
        raise KeyFileError(f"{path}: recorded for circuit code version "
                           f"{record.get('circuit_version')!r}, this code builds version "
                           f"{shape.circuit_version}; remove the file to look the key up again")
    expected = asdict(shape)
    got = {field: record.get(field) for field in expected}
    if got != expected:
        field = next(f for f in expected if got[f] != expected[f])
        raise KeyFileError(f"{path}: {field} is {got[field]!r}, {shape.name} has "
                           f"{expected[field]!r} (a record of another circuit)")
    circuit_id = record.get("circuit_id")
    if not isinstance(circuit_id, str) or not _CIRCUIT_ID.fullmatch(circuit_id):
        raise KeyFileError(f"{path}: circuit_id is missing or not 32 hex digits")
    return circuit_id


def record_circuit_id(params_dir: Path, shape: CircuitShape, circuit_id: str) -> None:
    """Write the shape's record atomically (concurrent writers write the same content)."""
    path = shape_path(params_dir, shape.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"format": SHAPE_FORMAT, **asdict(shape), "circuit_id": circuit_id}
    write_atomic(path, (json.dumps(record, indent=1) + "\n").encode())


def load_or_setup_shape(shape: CircuitShape, params_dir: Path, compile_r1cs: Callable[[], R1CS],
                        *, fixed_base: FixedBaseMul | None = None,
                        progress: SetupProgress | None = None) -> ProvingKey:
    """The key of ``shape``: through its record without compiling; else (no record, or one
    naming a key that is gone) compiled, made if missing, and recorded. Either way the key's
    sizes must be the shape's."""
    circuit_id = recorded_circuit_id(params_dir, shape)
    if circuit_id is not None and key_dir(params_dir, circuit_id).exists():
        key = load_key(params_dir, circuit_id)
        check_shape(key, shape, f"{shape_path(params_dir, shape.name)}: names key "
                                f"{circuit_id}, which")
        return key
    if progress is not None:
        progress("compile the circuit", 0, None)
    key = load_or_setup(compile_r1cs(), params_dir, fixed_base=fixed_base, progress=progress)
    check_shape(key, shape, f"{key_dir(params_dir, key.circuit_id)}")
    record_circuit_id(params_dir, shape, key.circuit_id)
    return key


def check_shape(key: ProvingKey, shape: CircuitShape, where: str) -> None:
    """Refuse a key whose sizes are not the shape's; ``where`` starts the message."""
    r1cs = key.r1cs
    got = (r1cs.num_inputs, r1cs.num_aux, r1cs.num_constraints)
    if got != shape.sizes():
        raise KeyFileError(f"{where} was made for another circuit; {shape.name} needs (inputs, "
                           f"aux, constraints) {shape.sizes()}, the key has {got}")
