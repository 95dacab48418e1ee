"""The worker runtime on a real GPU: a failed pre-stage allocation falls back to streaming.

Needs a GPU; the CPU tests cover the ledger's refusals, this covers the device's.
"""

from __future__ import annotations

import pytest
import redis

import gpu
from config.settings import load_settings
from snark.porep.proof_type import PorepType
from snark.porep.prove import load_or_setup_key, verify_partition
from snark.porep.seal import seal
from workers.events import read_events
from workers.gpu_binding import PINNED_ENV
from workers.runtime import WorkerRuntime

GPU_OK, GPU_WHY = gpu.available()
POREP = PorepType()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)]


def _fill_device(cupy) -> list:
    """Allocate device memory until nothing of 64 KiB or more is left; return the blocks."""
    blocks, size = [], 1 << 32
    while size >= 1 << 16:
        try:
            blocks.append(cupy.empty(size, dtype=cupy.uint8))
        except cupy.cuda.memory.OutOfMemoryError:
            size >>= 1
    return blocks


def test_device_oom_while_staging_streams_inside_compute(redis_url, tmp_path, monkeypatch):
    import cupy

    for name in ("CUDA_VISIBLE_DEVICES", PINNED_ENV):  # restore what pinning writes
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    c1 = seal(2048, 2, 1)
    key = load_or_setup_key(c1, tmp_path)
    runtime = WorkerRuntime.start(redis_url=redis_url, gpu=0, worker_name="gpu-oom",
                                  settings=load_settings(backend="gpu", params_dir=tmp_path))
    filler: list = []

    def free_filler(phase: str, info: dict) -> None:
        if phase == "compute_wait":
            filler.clear()  # back to the pool: the compute phase streams into it

    try:
        # bases resident
        runtime.prove_partition(job_id="warm", partition=0, proof_type=POREP, job_input=c1)
        filler.extend(_fill_device(cupy))
        proof = runtime.prove_partition(job_id="oom", partition=1, proof_type=POREP, job_input=c1,
                                        progress=free_filler)
    finally:
        filler.clear()
        runtime.close()
    assert verify_partition(c1, 1, key.vk, proof)
    events = read_events(redis.Redis.from_url(redis_url), job="oom")
    assert [(e.phase, e.path) for e in events if e.phase in ("mem", "compute")] == \
        [("mem", "stream"), ("compute", "stream")]
