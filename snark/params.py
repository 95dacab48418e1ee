"""Proving keys cached by circuit id under the params directory.

Several worker processes may ask for the same missing key at once; each may run setup, but
``ProvingKey.save`` renames atomically and the first key to land wins: everyone returns the
key that is on disk, so all partitions of a job are proved and verified with one key.
"""

from __future__ import annotations

from pathlib import Path

from snark.groth16 import FixedBaseMul, setup
from snark.keys import KeyFileError, ProvingKey
from snark.r1cs import R1CS


def key_dir(params_dir: Path, circuit_id: str) -> Path:
    return Path(params_dir) / circuit_id


def load_key(params_dir: Path, circuit_id: str) -> ProvingKey:
    """Load a key, checking hashes; ``KeyFileError`` names the file if anything is off."""
    return ProvingKey.load(key_dir(params_dir, circuit_id))


def load_or_setup(r1cs: R1CS, params_dir: Path, *,
                  fixed_base: FixedBaseMul | None = None) -> ProvingKey:
    """The key for ``r1cs``: from disk if present, else a fresh development setup, saved."""
    circuit_id = r1cs.circuit_id()
    directory = key_dir(params_dir, circuit_id)
    if not directory.exists():
        setup(r1cs, fixed_base=fixed_base).save(params_dir)
    key = ProvingKey.load(directory)
    if key.r1cs.num_constraints != r1cs.num_constraints:
        raise KeyFileError(f"{directory}: key was made for another circuit")
    return key
