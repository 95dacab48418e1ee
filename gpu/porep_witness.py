"""A porep partition's witness computed on the device (``kernels/porep_witness.cu``).

The CPU witness (``snark.porep.witness``, Python ints) takes ~12× the GPU's compute time
of a partition, so a worker that builds it on the CPU starves the GPU. Here the worker
uploads only the partition's compact inputs (``WitnessInputs``, < 1% of the witness) in
the memory phase and the kernel writes the whole (num_variables, 4) witness where the
prover reads it, in the compute phase. The kernel also runs the witness check: a challenge whose
values do not hash to the commitments is a ``C1Error`` naming it, before any MSM runs.

The tables (``schedule_table``, ``slot_table``) are plain numpy so the host build of the
kernel (``gpu.hostlib``) runs from the very same plan in CI.

``PorepWitnessDevice`` is porep's device steps (``snark.porep.staging.POREP_WITNESS``)
composed with a ``GpuBackend``: on its device and stream, freeing through its ``release``,
through its public surface only. porep-demo's plug-in record (``snark.porep.plugin``) names
it; ``gpu.extensions`` makes it for the backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from snark.fields import FR_MODULUS, to_montgomery
from snark.keys import ProvingKey
from snark.poseidon.fast import fast_schedule
from snark.porep.witness import WitnessInputs, challenge_layout, check_failures

if TYPE_CHECKING:
    from gpu.backend import GpuBackend

THREADS = 64
#: Slot table roles, in the kernel's order (``challenge_slots`` in porep_witness.cuh).
_SLOT_ORDER = ("bits", "data", "replica", "siblings", "swaps", "key", "hashes")


@lru_cache(maxsize=1)
def schedule_table() -> tuple[np.ndarray, int, int]:
    """The fast Poseidon schedule as Montgomery limbs in the kernel's order, with the
    number of half full rounds and of partial rounds."""
    s = fast_schedule()
    if len(s.mds) != 3 or s.alpha != 5:
        raise ValueError("the porep witness kernel implements Poseidon t = 3, x^5 only")
    half, partial = len(s.head_constants), len(s.partial_constants)
    values = [
        *(c for row in s.head_constants for c in row),
        *(m for matrix in s.head_matrices for row in matrix for m in row),
        *s.partial_constants,
        *(v for sr in s.sparse_rounds for v in (sr.a, *sr.w, *sr.v)),
        *(c for row in s.tail_constants for c in row),
        *(m for row in s.mds for m in row),
    ]
    return to_montgomery(values, FR_MODULUS, 4), half, partial


@lru_cache(maxsize=16)
def slot_table(sector_size: int) -> tuple[np.ndarray, int, int, int]:
    """One challenge's aux slots in the kernel's order, with depth, S-boxes per hash and
    the aux rows per challenge (the layout's stride)."""
    layout = challenge_layout(sector_size)
    depth = layout.slots["bits"].shape[0]
    sboxes = layout.slots["key"].shape[0]
    table = np.concatenate([layout.slots[name].reshape(-1) for name in _SLOT_ORDER])
    expected = 5 * depth + 2 + 3 * sboxes * (1 + 2 * depth)
    if table.size != expected:
        raise ValueError(f"slot table: {table.size} entries, the kernel reads {expected}")
    return table.astype(np.int32), depth, sboxes, layout.stride


@dataclass(frozen=True)
class KernelPlan:
    """Everything the kernel reads besides the partition's inputs, checked against them."""

    schedule: np.ndarray
    half: int
    partial: int
    slots: np.ndarray
    depth: int
    sboxes: int
    stride: int
    num_inputs: int
    num_variables: int


def kernel_plan(inputs: WitnessInputs, num_inputs: int, num_variables: int) -> KernelPlan:
    """The plan for ``inputs`` under a key with these counts (ValueError if they differ)."""
    schedule, half, partial = schedule_table()
    slots, depth, sboxes, stride = slot_table(inputs.sector_size)
    k = inputs.challenges
    shapes = {"public": (inputs.public, (num_inputs, 4)), "index": (inputs.index, (k,)),
              "commitments": (inputs.commitments, (3, 4)),
              "leaves": (inputs.leaves, (2, k, 4)), "siblings": (inputs.siblings, (2, depth, k, 4))}
    for name, (array, shape) in shapes.items():
        if array.shape != shape:
            raise ValueError(f"witness inputs: {name} has shape {array.shape}, expected {shape}")
    if num_inputs + k * stride != num_variables:
        raise ValueError(f"witness inputs: {k} challenges of {stride} aux rows and "
                         f"{num_inputs} inputs do not make this key's {num_variables} variables")
    return KernelPlan(schedule, half, partial, slots, depth, sboxes, stride, num_inputs,
                      num_variables)


class StagedWitness(NamedTuple):
    """Device buffers of one partition between the memory and the compute phase."""

    witness: Any       # (num_variables, 4), public rows filled, aux rows written by the kernel
    commitments: Any
    index: Any
    leaves: Any
    siblings: Any
    sector_size: int
    partition: int
    plan: KernelPlan

    def inputs(self) -> tuple:
        """The buffers the kernel only reads (freed once it has run)."""
        return self.commitments, self.index, self.leaves, self.siblings


class DeviceWitness:
    """The kernel on one device; callers hold the device and stream current."""

    def __init__(self, device_id: int) -> None:
        import cupy

        from gpu import module

        self._cupy = cupy
        self._kernel = module.function("porep_witness.cu", "porep_witness", device_id)
        self._tables: dict[int, tuple[Any, Any]] = {}

    def stage(self, inputs: WitnessInputs, num_inputs: int, num_variables: int) -> StagedWitness:
        """Memory phase: allocate the witness, upload the inputs (and once per sector
        size the schedule and slot tables)."""
        cupy = self._cupy
        plan = kernel_plan(inputs, num_inputs, num_variables)
        if inputs.sector_size not in self._tables:
            self._tables[inputs.sector_size] = (cupy.asarray(plan.schedule),
                                                cupy.asarray(plan.slots))
        witness = cupy.empty((num_variables, 4), dtype=cupy.uint64)
        witness[:num_inputs] = cupy.asarray(inputs.public)
        commitments, index, leaves, siblings = (cupy.asarray(a) for a in (
            inputs.commitments, inputs.index, inputs.leaves, inputs.siblings))
        return StagedWitness(witness, commitments, index, leaves, siblings,
                             inputs.sector_size, inputs.partition, plan)

    def run(self, staged: StagedWitness, stream) -> Any:
        """Compute phase: write the aux rows; ``C1Error`` for a challenge that fails the
        check. Returns the witness."""
        cupy = self._cupy
        plan = staged.plan
        schedule, slots = self._tables[staged.sector_size]
        k = staged.index.shape[0]
        flags = cupy.zeros(k, dtype=cupy.uint32)
        self._kernel(((3 * k + THREADS - 1) // THREADS,), (THREADS,), (
            schedule, np.uint32(plan.half), np.uint32(plan.partial), staged.commitments,
            staged.index, staged.leaves, staged.siblings, slots, np.uint32(plan.depth),
            np.uint32(plan.sboxes), np.uint32(k), np.uint32(plan.stride),
            np.uint64(plan.num_inputs), staged.witness, flags))
        check_failures(staged.partition, flags.get(stream=stream))
        return staged.witness


class PorepWitnessDevice:
    """porep's ``snark.unit_work.DeviceWitnessSteps`` on ``backend``'s device and stream."""

    def __init__(self, backend: GpuBackend) -> None:
        self._backend = backend
        self._kernel = DeviceWitness(backend.device_id)

    def load(self, key: ProvingKey, inputs: WitnessInputs) -> StagedWitness:
        """Memory phase: the witness buffer and a partition's compact inputs."""
        r1cs = key.r1cs
        with self._backend.on_device():
            return self._kernel.stage(inputs, r1cs.num_inputs, r1cs.num_variables)

    def witness(self, key: ProvingKey, staged: StagedWitness):
        """Compute phase: the witness handle, written by the kernel and checked."""
        if staged.witness.shape != (key.r1cs.num_variables, 4):
            raise ValueError(f"staged witness: shape {staged.witness.shape} does not fit this key")
        with self._backend.on_device():
            witness = self._kernel.run(staged, self._backend.stream)
        self._backend.release(staged.inputs())
        return witness
