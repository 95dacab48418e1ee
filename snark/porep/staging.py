"""A partition's witness through the prover's phases, built on the CPU or on the device.

``partition_work`` decides, once per partition, which path it takes:

- ``HostWitness`` (``snark.unit_work``): the witness built and checked on the CPU, uploaded
  whole;
- ``DeviceInputs``: for a backend with porep's device steps (``POREP_WITNESS``, below), only
  the compact inputs (leaves, paths, indices: < 1% of the witness), uploaded
  in the memory phase; the device writes and checks the witness in the compute phase
  (``C1Error`` naming a bad challenge).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from snark.backend import Capability, ProverBackend
from snark.keys import ProvingKey
from snark.porep.c1 import C1
from snark.porep.witness import WitnessInputs, partition_witness, witness_inputs
from snark.unit_work import HostWitness


class PorepWitnessSteps(Protocol):
    """porep's device steps (``POREP_WITNESS``): a partition's witness computed by the
    device from its compact inputs, so the worker neither builds nor uploads the full
    witness (``gpu.porep_witness``).

    memory phase   load_porep_inputs   (allocate the witness, upload the inputs)
    compute phase  porep_witness       (write and check it; ``C1Error`` names a bad
                                        challenge) → the handle ``evaluate_abc`` takes
    """

    def load_porep_inputs(self, key: ProvingKey, inputs: WitnessInputs) -> Any: ...

    def porep_witness(self, key: ProvingKey, staged: Any) -> Any: ...


class FencedPorepWitness:
    """``PorepWitnessSteps`` that call ``check()`` (the held lock's lease) before each step."""

    def __init__(self, steps: PorepWitnessSteps, check: Callable[[], None]) -> None:
        self._steps = steps
        self._check = check

    def load_porep_inputs(self, key: ProvingKey, inputs: WitnessInputs) -> Any:
        self._check()
        return self._steps.load_porep_inputs(key, inputs)

    def porep_witness(self, key: ProvingKey, staged: Any) -> Any:
        self._check()
        return self._steps.porep_witness(key, staged)


POREP_WITNESS: Capability[PorepWitnessSteps] = Capability("porep-witness", FencedPorepWitness)


@dataclass(frozen=True)
class DeviceInputs:
    """A partition's compact inputs, for the device to turn into its witness."""

    inputs: WitnessInputs

    def stage(self, key: ProvingKey, backend: ProverBackend) -> Any:
        backend.prepare(key)
        return _steps(backend).load_porep_inputs(key, self.inputs)

    def handle(self, key: ProvingKey, staged: Any, backend: ProverBackend) -> Any:
        return _steps(backend).porep_witness(key, staged)


def _steps(backend: ProverBackend) -> PorepWitnessSteps:
    steps = backend.extension(POREP_WITNESS)
    if steps is None:  # the work was made for another backend
        raise TypeError(f"{backend.name} backend: has no porep device witness steps")
    return steps


PartitionWork = HostWitness | DeviceInputs


def partition_work(c1: C1, partition: int, backend: ProverBackend) -> PartitionWork:
    """The partition's work for ``backend``: compact inputs where it computes the witness."""
    if backend.extension(POREP_WITNESS) is not None:
        return DeviceInputs(witness_inputs(c1, partition))
    return HostWitness(partition_witness(c1, partition, check=True))
