"""A unit's work between the worker's phases: what synthesize left, how it reaches the
backend, and what the prover then reads.

Each proof type's ``work`` returns one of these, so the path a unit takes (a witness built
on the CPU, or compact inputs a device turns into one) is decided once, where the work is
made, and the worker runtime just calls ``stage`` and ``handle`` under its locks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from snark import groth16
from snark.backend import Capability, ProverBackend
from snark.keys import ProvingKey
from snark.proof import Proof

Staged = TypeVar("Staged")
#: What a type's device steps read of a unit: its compact inputs.
Inputs = TypeVar("Inputs")


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


class DeviceWitnessSteps(Protocol):
    """A type's device steps: a unit's witness computed on the device from the unit's
    compact inputs, so the worker neither builds nor uploads the whole witness. A type
    names them by its own capability (``device_witness``) and names their GPU class in its
    plug-in record (``snark.plugins``).

    memory phase   load(key, inputs)     the witness's buffer, the inputs uploaded → staged
    compute phase  witness(key, staged)  written and checked (the type's error names what
                                         does not hold) → the handle ``evaluate_abc`` takes
    """

    def load(self, key: ProvingKey, inputs: Any) -> Any: ...

    def witness(self, key: ProvingKey, staged: Any) -> Any: ...


class FencedWitness:
    """``DeviceWitnessSteps`` that call ``check()`` (the held lock's lease) before each."""

    def __init__(self, steps: DeviceWitnessSteps, check: Callable[[], None]) -> None:
        self._steps = steps
        self._check = check

    def load(self, key: ProvingKey, inputs: Any) -> Any:
        self._check()
        return self._steps.load(key, inputs)

    def witness(self, key: ProvingKey, staged: Any) -> Any:
        self._check()
        return self._steps.witness(key, staged)


def device_witness(name: str) -> Capability[DeviceWitnessSteps]:
    """A type's device-witness capability, under ``name`` (its record's ``capability``)."""
    return Capability(name, FencedWitness)


@dataclass(frozen=True)
class WitnessOnDevice(Generic[Inputs]):
    """A unit's compact inputs, for the device steps of ``capability`` to turn into its
    witness: uploaded in the memory phase, the witness written in the compute phase."""

    capability: Capability[DeviceWitnessSteps]
    inputs: Inputs

    def stage(self, key: ProvingKey, backend: ProverBackend) -> Any:
        backend.prepare(key)
        return self._steps(backend).load(key, self.inputs)

    def handle(self, key: ProvingKey, staged: Any, backend: ProverBackend) -> Any:
        return self._steps(backend).witness(key, staged)

    def _steps(self, backend: ProverBackend) -> DeviceWitnessSteps:
        steps = backend.extension(self.capability)
        if steps is None:  # the work was made for another backend
            raise TypeError(f"{backend.name} backend: has no {self.capability.name} steps")
        return steps


def prove_work(key: ProvingKey, work: UnitWork, backend: ProverBackend) -> Proof:
    """A unit's proof in one go, outside the worker's phases (the local commands)."""
    staged = work.stage(key, backend)
    try:
        witness = work.handle(key, staged, backend)
    except BaseException:
        backend.release(staged)
        raise
    return groth16.finalize(key, groth16.compute(key, witness, backend))
