"""A partition's witness through the prover's phases, built on the CPU or on the device.

    partition_work   synthesize (CPU): the checked witness, or, for a backend that computes
                     it itself (``PorepWitnessBackend``, below), only the compact inputs
    stage            memory phase: the key resident, the work uploaded
    witness_handle   compute phase: the handle the prover reads; a device writes and checks
                     the witness here (``C1Error`` naming a bad challenge)

The worker runtime runs these (as ``PorepType``'s steps) inside its lock phases;
``prove.prove_partition`` in a row.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from snark import groth16
from snark.backend import ProverBackend
from snark.keys import ProvingKey
from snark.porep.c1 import C1
from snark.porep.witness import WitnessInputs, partition_witness, witness_inputs

#: What the synthesize phase leaves: full standard-form witness limbs, or compact inputs.
Work = np.ndarray | WitnessInputs


@runtime_checkable
class PorepWitnessBackend(Protocol):
    """Optional: a backend that computes a porep partition's witness itself from its
    compact inputs, so the worker neither builds nor uploads the full witness
    (``gpu.porep_witness``).

    memory phase   load_porep_inputs   (allocate the witness, upload the inputs)
    compute phase  porep_witness       (write and check it; ``C1Error`` names a bad
                                        challenge) → the handle ``evaluate_abc`` takes
    """

    def load_porep_inputs(self, key: ProvingKey, inputs: WitnessInputs) -> Any: ...

    def porep_witness(self, key: ProvingKey, staged: Any) -> Any: ...


def computes_witness(backend: ProverBackend) -> bool:
    return isinstance(backend, PorepWitnessBackend)


def partition_work(c1: C1, partition: int, *, on_device: bool) -> Work:
    return witness_inputs(c1, partition) if on_device else partition_witness(
        c1, partition, check=True)


def stage(key: ProvingKey, work: Work, backend: ProverBackend) -> Any:
    if isinstance(work, WitnessInputs):
        backend.prepare(key)
        return backend.load_porep_inputs(key, work)
    return groth16.stage(key, work, backend)


def witness_handle(key: ProvingKey, work: Work, staged: Any, backend: ProverBackend) -> Any:
    """The witness handle; on failure the staged buffers are the caller's to release."""
    if isinstance(work, WitnessInputs):
        return backend.porep_witness(key, staged)
    return staged
