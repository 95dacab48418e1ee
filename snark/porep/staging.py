"""A partition's witness through the prover's phases, built on the CPU or on the device.

``partition_work`` decides, once per partition, which path it takes:

- ``HostWitness`` (``snark.unit_work``): the witness built and checked on the CPU, uploaded
  whole;
- ``WitnessOnDevice`` (``snark.unit_work``): for a backend with porep's device steps
  (``POREP_WITNESS``: ``gpu.porep_witness``), only the compact inputs (leaves, paths,
  indices: < 1% of the witness), uploaded in the memory phase; the device writes and checks
  the witness in the compute phase (``C1Error`` naming a bad challenge).
"""

from __future__ import annotations

from snark.backend import ProverBackend
from snark.porep.c1 import C1
from snark.porep.witness import WitnessInputs, partition_witness, witness_inputs
from snark.unit_work import HostWitness, WitnessOnDevice, device_witness

#: porep's device steps: ``load`` takes a partition's ``WitnessInputs``.
POREP_WITNESS = device_witness("porep-witness")

PartitionWork = HostWitness | WitnessOnDevice[WitnessInputs]


def partition_work(c1: C1, partition: int, backend: ProverBackend) -> PartitionWork:
    """The partition's work for ``backend``: compact inputs where it computes the witness."""
    if backend.extension(POREP_WITNESS) is not None:
        return WitnessOnDevice(POREP_WITNESS, witness_inputs(c1, partition))
    return HostWitness(partition_witness(c1, partition, check=True))
