"""The device witness kernel (gpu/kernels/porep_witness.cu) equals the CPU witness, checks
the C1 the same way, and runs inside the worker pipeline.

Host tests run the kernel's code built with g++ (``gpu.hostlib``) from the very plan the
GPU driver uses; GPU tests run it on the device. Fresh random sectors every run.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import redis

import gpu
from config.settings import load_settings
from snark.cpu_backend import CpuBackend
from snark.fields import FR_MODULUS
from snark.porep.c1 import C1Error
from snark.porep.proof_type import PorepType
from snark.porep.prove import load_or_setup_key, verify_partition
from snark.porep.seal import seal
from snark.porep.staging import POREP_WITNESS, partition_work
from snark.porep.witness import (WitnessInputs, check_failures, partition_witness,
                                 witness_inputs)
from snark.unit_work import WitnessOnDevice
from workers.telemetry import read_events
from workers.gpu_binding import bind_cpu
from workers.failures import PartitionFailed
from workers.runtime import WorkerRuntime

GPU_OK, GPU_WHY = gpu.available()
POREP = PorepType()
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
needs_gpu = pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)

#: (sector size, partitions, challenges): depths 6, 7 and 8; several partitions.
SHAPES = [(2048, 2, 3), (4096, 1, 4), (8192, 2, 2)]


def _host_witness(c1, partition: int) -> tuple[np.ndarray, np.ndarray]:
    from gpu import hostlib

    inputs = witness_inputs(c1, partition)
    reference_rows = partition_witness(c1, partition).shape[0]
    return hostlib.porep_witness(inputs, inputs.public.shape[0], reference_rows)


def _forge(c1, partition: int, challenge: int, field: str, rng):
    """``c1`` with one value of one challenge replaced by a fresh random one."""
    proofs = [p.model_copy(deep=True) for p in c1.vanilla_proofs]
    ch = proofs[partition].challenges[challenge]
    value = rng.randrange(FR_MODULUS)
    if field.endswith("_path"):
        path = list(getattr(ch, field))
        path[rng.randrange(len(path))] = value
        value = path
    object.__setattr__(ch, field, value)
    return c1.model_copy(update={"vanilla_proofs": proofs})


def _cpu_check_message(c1, partition: int) -> str:
    with pytest.raises(C1Error) as caught:
        partition_witness(c1, partition, check=True)
    return str(caught.value)


FORGED_FIELDS = ["data_leaf", "replica_leaf", "d_path", "r_path"]


# -- host build ---------------------------------------------------------------------------
@needs_gxx
@pytest.mark.parametrize("sector_size,partitions,challenges", SHAPES)
def test_host_kernel_witness_equals_the_cpu_witness(sector_size, partitions, challenges):
    c1 = seal(sector_size, partitions, challenges)
    for partition in range(partitions):
        witness, flags = _host_witness(c1, partition)
        assert not flags.any()
        assert np.array_equal(witness, partition_witness(c1, partition))


@needs_gxx
@pytest.mark.parametrize("field", FORGED_FIELDS)
def test_host_kernel_check_names_the_challenge_like_the_cpu_check(field, rng):
    c1 = seal(2048, 2, 3)
    forged = _forge(c1, 1, 2, field, rng)
    _, flags = _host_witness(forged, 1)
    assert np.flatnonzero(flags).tolist() == [2]
    with pytest.raises(C1Error) as caught:
        check_failures(1, flags)
    assert str(caught.value) == _cpu_check_message(forged, 1)
    assert "vanilla_proofs[1].challenges[2]" in str(caught.value)


@needs_gxx
def test_kernel_plan_names_inputs_that_do_not_fit_the_key():
    from gpu.porep_witness import kernel_plan

    inputs = witness_inputs(seal(2048, 1, 2), 0)
    rows = partition_witness(seal(2048, 1, 2), 0).shape[0]
    with pytest.raises(ValueError, match="do not make this key's"):
        kernel_plan(inputs, inputs.public.shape[0], rows + 1)
    cut = WitnessInputs(**{**inputs.__dict__, "siblings": inputs.siblings[:, 1:]})
    with pytest.raises(ValueError, match="siblings has shape"):
        kernel_plan(cut, inputs.public.shape[0], rows)


class HostKernelSteps:
    """porep's device steps (``snark.unit_work.DeviceWitnessSteps``) by the witness
    kernel's host build, composed with a CPU backend."""

    def __init__(self, backend: CpuBackend) -> None:
        self.backend = backend
        self.calls: list[str] = []

    def load(self, key, inputs: WitnessInputs):
        self.calls.append("load")
        return inputs

    def witness(self, key, inputs: WitnessInputs):
        from gpu import hostlib

        self.calls.append("witness")
        witness, flags = hostlib.porep_witness(inputs, key.r1cs.num_inputs,
                                               key.r1cs.num_variables)
        check_failures(inputs.partition, flags)
        return self.backend.load_witness(key, witness)


class HostKernelBackend(CpuBackend):
    """The CPU backend with the host kernel as its porep extension: the worker's
    device-witness path on machines without a GPU."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = HostKernelSteps(self)

    def extension(self, capability):
        return self.steps if capability is POREP_WITNESS else None


@needs_gxx
def test_worker_pipeline_proves_with_the_device_witness_path(redis_url, tmp_path, rng):
    c1 = seal(2048, 3, 2)
    key = load_or_setup_key(c1, tmp_path)
    settings = load_settings(backend="cpu", params_dir=tmp_path)
    runtime = WorkerRuntime(client=redis.Redis.from_url(redis_url), settings=settings,
                            worker_name="host-kernel", binding=bind_cpu(0),
                            backend=HostKernelBackend())
    try:
        work = partition_work(c1, 1, runtime.backend)
        assert isinstance(work, WitnessOnDevice) and work.capability is POREP_WITNESS
        proof = runtime.prove_partition(job_id="dw", partition=1, proof_type=POREP, job_input=c1)
        assert runtime.backend.steps.calls == ["load", "witness"]
        forged = _forge(c1, 2, 1, "r_path", rng)
        with pytest.raises(PartitionFailed) as caught:
            runtime.prove_partition(job_id="dw-bad", partition=2, proof_type=POREP,
                                    job_input=forged)
    finally:
        runtime.close()
    assert verify_partition(c1, 1, key.vk, proof)
    failure = caught.value
    assert failure.phase == "compute" and not failure.transient
    assert "vanilla_proofs[2].challenges[1]: replica_leaf with r_path" in failure.reason
    phases = [e.phase for e in read_events(redis.Redis.from_url(redis_url), job="dw-bad")]
    assert "finalize" not in phases


# -- device -------------------------------------------------------------------------------
@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("sector_size,partitions,challenges", SHAPES)
def test_device_witness_equals_the_cpu_witness(sector_size, partitions, challenges, tmp_path, rng):
    backend = gpu.get_backend(device_id=0)
    steps = backend.extension(POREP_WITNESS)
    assert gpu.get_backend(device_id=0, device_steps=False).extension(POREP_WITNESS) is None
    c1 = seal(sector_size, partitions, challenges)
    key = load_or_setup_key(c1, tmp_path)
    for partition in range(partitions):
        staged = steps.load(key, witness_inputs(c1, partition))
        witness = steps.witness(key, staged)
        assert np.array_equal(witness.get(), partition_witness(c1, partition))
        backend.release(witness)
    forged = _forge(c1, 0, 1, "d_path", rng)
    staged = steps.load(key, witness_inputs(forged, 0))
    with pytest.raises(C1Error, match=r"challenges\[1\]: data_leaf with d_path"):
        steps.witness(key, staged)
    backend.release(staged)

