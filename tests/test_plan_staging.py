"""Filecoin PoRep's, SnapDeals' and PoSt's partitions through the plan's device path
(``snark.plan_staging``): here the CPU backend with the host build of the tape kernel as
its ``PLAN_WITNESS`` steps (the worker's device-witness path on machines without a GPU),
and on a GPU (marked gpu) ``gpu.plan_witness`` itself. The witness is the CPU path's, a
proof from it verifies, and one whose public inputs are not the request's is refused on
the device path too."""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest

import gpu
from snark.cpu_backend import CpuBackend
from snark.fields import limbs_to_ints
from snark.filecoin.errors import FilecoinError
from snark.filecoin.params import load_proving_key, load_verifying_key, make_development_key
from snark.filecoin.post import generate as post_generate
from snark.filecoin.post.prove import Partition, prove_partition, verify_partition
from snark.filecoin.post.registered_proofs import post_proof
from snark.filecoin.registered_proofs import registered_proof
from snark.filecoin.seal import random_fields, seal
from snark.filecoin.staging import partition_work as porep_partition_work
from snark.filecoin.snap import generate as snap_generate
from snark.filecoin.snap.prove import partition_work
from snark.filecoin.snap.shape import SnapShape
from snark.plan_staging import PLAN_WITNESS, PlanInputs
from snark.unit_work import HostWitness, WitnessOnDevice, prove_work
from tests.test_gpu_tape import host_run

GPU_OK, GPU_WHY = gpu.available()
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


def planned(work) -> bool:
    """Whether ``work`` is a plan's inputs for the device steps (not a witness made here)."""
    return isinstance(work, WitnessOnDevice) and isinstance(work.inputs, PlanInputs)


class HostPlanSteps:
    """``DeviceWitnessSteps`` of plans by the host kernel: the values kept, the tapes run on
    the CPU."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def load(self, key, work: PlanInputs):
        self.calls.append("load")
        return work

    def witness(self, key, work: PlanInputs) -> np.ndarray:
        self.calls.append("witness")
        aux, inputs = host_run(work.plan(), work.values)
        work.check(limbs_to_ints(inputs[1:]))
        return np.concatenate([inputs, aux])


class HostPlanBackend(CpuBackend):
    def __init__(self) -> None:
        super().__init__()
        self.steps = HostPlanSteps()

    def extension(self, capability):
        return self.steps if capability is PLAN_WITNESS else None


def window_partition(np_rng) -> Partition:
    """A 2 KiB WindowPoSt partition (its second) of two whole test sectors."""
    proof = post_proof(10)
    randomness = random_fields(np_rng, 1)[0].tobytes()
    made = [post_generate.whole_sector(proof, np_rng, 10 + i) for i in range(2)]
    return Partition(post_generate.vanilla_proofs(proof, made, randomness, 1), randomness, 1)


def other_randomness(partition: Partition) -> Partition:
    return dataclasses.replace(partition, randomness=bytes([partition.randomness[0] ^ 4])
                               + partition.randomness[1:])


@needs_gxx
def test_a_post_partition_proves_through_the_plan_device_path(np_rng, tmp_path):
    partition = window_partition(np_rng)
    proof = partition.sectors.proof
    params_path, vk_path = make_development_key(proof, tmp_path)
    key = load_proving_key(proof, params_path)
    backend = HostPlanBackend()
    assert planned(partition.work(backend))
    assert isinstance(partition.work(CpuBackend()), HostWitness)
    proof_bytes = prove_partition(partition, key, backend)
    assert backend.steps.calls == ["load", "witness"]
    assert verify_partition(partition, load_verifying_key(vk_path), proof_bytes)
    # vanilla proofs for other challenges: unchecked here, the witness's inputs refuse them
    with pytest.raises(FilecoinError, match="public inputs are not the ones the randomness"):
        prove_work(key, other_randomness(partition).work(backend), backend)


def through_the_device_path(work_of) -> tuple[HostPlanSteps, WitnessOnDevice]:
    """A unit's work for the host-kernel backend (``work_of(backend)``), its witness by the
    device steps checked equal to the CPU path's: the steps and the work."""
    backend = HostPlanBackend()
    work = work_of(backend)
    assert planned(work)
    steps = backend.steps
    on_cpu = work_of(CpuBackend())
    assert np.array_equal(steps.witness(None, steps.load(None, work.inputs)), on_cpu.witness)
    return steps, work


@needs_gxx
def test_a_snap_partition_through_the_plan_device_path_is_the_cpu_witness(np_rng):
    update = snap_generate.generate_update(SnapShape(64), np_rng)
    steps, work = through_the_device_path(lambda backend: partition_work(update, 0, backend))
    values = work.inputs.values.copy()
    values[0] += 1  # k_and_h_select: the witness's first public input moves
    with pytest.raises(FilecoinError, match="partition 0: the witness's public input 0"):
        steps.witness(None, dataclasses.replace(work.inputs, values=values))


@needs_gxx
def test_a_filecoin_partition_through_the_plan_device_path_is_the_cpu_witness(np_rng):
    c1 = seal(registered_proof("StackedDrg2KiBV1_1"), np_rng)
    steps, _ = through_the_device_path(lambda backend: porep_partition_work(c1, 0, backend))
    other = porep_partition_work(dataclasses.replace(c1, seed=bytes([c1.seed[0] ^ 1])
                                                     + c1.seed[1:]), 0, HostPlanBackend())
    with pytest.raises(FilecoinError, match="partition 0: the witness's public input"):
        steps.witness(None, steps.load(None, other.inputs))  # another seed's challenges


# -- device -------------------------------------------------------------------------------
def on_gpu(test):
    return pytest.mark.gpu(pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)(test))


@on_gpu
def test_a_post_partition_proves_on_the_gpu_through_the_plan(np_rng, tmp_path):
    from gpu.fixed_base import GpuFixedBase

    backend = gpu.get_backend(device_id=0)
    assert backend.extension(PLAN_WITNESS) is not None
    assert gpu.get_backend(device_id=0, device_steps=False).extension(PLAN_WITNESS) is None
    partition = window_partition(np_rng)
    proof = partition.sectors.proof
    params_path, vk_path = make_development_key(proof, tmp_path, fixed_base=GpuFixedBase())
    key = load_proving_key(proof, params_path)
    assert planned(partition.work(backend))
    assert verify_partition(partition, load_verifying_key(vk_path),
                            prove_partition(partition, key, backend))
    with pytest.raises(FilecoinError, match="public inputs are not the ones the randomness"):
        prove_work(key, other_randomness(partition).work(backend), backend)


@on_gpu
@pytest.mark.slow  # the 2 KiB update circuit's key (1.7 M constraints) set up first
def test_a_snap_update_proves_on_the_gpu_through_the_plan(np_rng, tmp_path):
    from gpu.fixed_base import GpuFixedBase
    from snark.filecoin.snap.job import SnapJob
    from snark.filecoin.snap.prove import prove_update
    from snark.filecoin.settings import FilecoinSettings
    from snark.filecoin.snap.worker import SnapWorker
    from snark.proof_types import Storage

    backend = gpu.get_backend(device_id=0)
    update = snap_generate.generate_update(SnapShape(64), np_rng)
    assert planned(partition_work(update, 0, backend))
    worker, job = SnapWorker(Storage(tmp_path), FilecoinSettings()), SnapJob("development", update)
    key = worker.load_key(job, fixed_base=GpuFixedBase())
    assert worker.verify(job, prove_update(update, key, backend))


@on_gpu
@pytest.mark.slow  # an 8 MiB update (4 partitions of 10 M constraints): its key, a CPU proof
def test_an_8mib_update_proves_on_the_gpu_byte_identically_to_the_cpu(np_rng, rng, tmp_path):
    """A whole 8 MiB test update: a partition proved on the GPU through the plan (the
    witness on the device) verifies, and the same witness proved on the GPU and on the CPU
    for the same r, s gives the same bytes."""
    from gpu.fixed_base import GpuFixedBase
    from snark import groth16
    from snark.filecoin.settings import FilecoinSettings
    from snark.filecoin.snap.circuit import witness
    from snark.filecoin.snap.inputs import partition_data
    from snark.filecoin.snap.job import SnapJob
    from snark.filecoin.snap.prove import prove_partition
    from snark.filecoin.snap.worker import SnapWorker
    from snark.proof_types import Storage

    backend = gpu.get_backend(device_id=0)
    update = snap_generate.generate_update(SnapShape.of_size(8 << 20), np_rng)
    worker, job = SnapWorker(Storage(tmp_path), FilecoinSettings()), SnapJob("development", update)
    key = worker.load_key(job, fixed_base=GpuFixedBase())
    k = rng.randrange(update.shape.partitions)
    assert planned(partition_work(update, k, backend))
    prove_partition(update, k, key, backend)  # verified inside, or it raises
    assignment = witness(update.shape, partition_data(update, k)).assignment()
    r, s = rng.randrange(1, 1 << 250), rng.randrange(1, 1 << 250)
    on_gpu = groth16.prove(key, assignment, backend, r, s)
    on_cpu = groth16.prove(key, assignment, CpuBackend(), r, s)
    assert on_gpu.to_bytes() == on_cpu.to_bytes()
