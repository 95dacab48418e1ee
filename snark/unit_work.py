"""A unit's work between the worker's phases: what synthesize left, how it reaches the
backend, and what the prover then reads.

Each proof type's ``work`` returns one of these, so the path a unit takes (a witness built
on the CPU, or compact inputs a device turns into one) is decided once, where the work is
made, and the worker runtime just calls ``stage`` and ``handle`` under its locks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from snark import groth16
from snark.backend import ProverBackend
from snark.keys import ProvingKey
from snark.proof import Proof

Staged = TypeVar("Staged")


class UnitWork(Protocol[Staged]):
    def stage(self, key: ProvingKey, backend: ProverBackend) -> Staged:
        """Memory phase: the key resident, the work uploaded (``DeviceMemoryError`` if it
        does not fit: the caller stages it in the compute phase instead)."""

    def handle(self, key: ProvingKey, staged: Staged, backend: ProverBackend) -> Any:
        """Compute phase: the witness handle ``groth16.compute`` reads; on failure the
        staged buffers are the caller's to release."""


@dataclass(frozen=True)
class HostWitness:
    """A unit's whole witness, built and checked on the CPU: standard-form limbs
    ``(num_variables, 4)``, uploaded as they are."""

    witness: np.ndarray

    def stage(self, key: ProvingKey, backend: ProverBackend) -> Any:
        return groth16.stage(key, self.witness, backend)

    def handle(self, key: ProvingKey, staged: Any, backend: ProverBackend) -> Any:
        return staged


def prove_work(key: ProvingKey, work: UnitWork, backend: ProverBackend) -> Proof:
    """A unit's proof in one go, outside the worker's phases (the local commands)."""
    staged = work.stage(key, backend)
    try:
        witness = work.handle(key, staged, backend)
    except BaseException:
        backend.release(staged)
        raise
    return groth16.finalize(key, groth16.compute(key, witness, backend))
