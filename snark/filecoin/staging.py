"""A Filecoin partition's witness through the prover's phases: on the CPU, or on the device.

``partition_work`` decides once per partition, as porep's staging does:

- ``HostWitness`` (``snark.unit_work``): the witness evaluated on the CPU by the shape's
  plan (``circuit.witness``) and uploaded whole (4 GB at 32 GiB);
- ``WitnessOnDevice`` (``snark.unit_work``) of ``DeviceInputs``: for a backend with
  Filecoin's device steps (``FILECOIN_WITNESS``), only the partition's private data (the
  C1's challenged values: about a megabyte at 32 GiB), uploaded in the memory phase; the
  device runs the plan's tapes in the compute phase (``gpu.filecoin_witness``).

Either way the witness's public inputs are the ones the verifier derives, or the
partition is refused before it is proved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.backend import ProverBackend
from snark.filecoin.c1 import FilecoinC1
from snark.filecoin.circuit import StackedShape, witness, witness_plan
from snark.filecoin.circuit.inputs import partition_data, public_inputs
from snark.filecoin.errors import FilecoinError
from snark.unit_work import HostWitness, WitnessOnDevice, device_witness

#: Filecoin's device steps: ``load`` takes a partition's ``DeviceInputs``; ``witness``
#: raises ``FilecoinError`` where the witness's public inputs are not its ``public`` (a C1
#: whose proofs open other challenges).
FILECOIN_WITNESS = device_witness("filecoin-witness")


@dataclass(frozen=True)
class DeviceInputs:
    """A partition's private values, flat, for the device's tapes, and the public inputs
    its witness must come to."""

    partition: int
    shape: StackedShape
    values: np.ndarray
    public: list[int]


PartitionWork = HostWitness | WitnessOnDevice[DeviceInputs]


def partition_work(c1: FilecoinC1, partition: int, backend: ProverBackend) -> PartitionWork:
    """The partition's work for ``backend``."""
    shape = StackedShape.of(c1.proof)
    data = partition_data(c1, partition)
    expected = public_inputs(c1, partition)
    if backend.extension(FILECOIN_WITNESS) is not None:
        witness_plan(shape)  # made here, outside the locks, the first time a shape is seen
        return WitnessOnDevice(FILECOIN_WITNESS,
                               DeviceInputs(partition, shape, data.flatten(), expected))
    assignment = witness(shape, data)
    check_public_inputs(partition, assignment.public_inputs(), expected)
    return HostWitness(assignment.assignment())


def check_public_inputs(partition: int, got: list[int], expected: list[int]) -> None:
    if got != expected:
        first = next(i for i, (g, e) in enumerate(zip(got + [None], expected + [None]))
                     if g != e)
        raise FilecoinError(f"partition {partition}: the witness's public input {first} is not "
                            "the one the seed and the graph derive (the C1's proofs open other "
                            "nodes)")
