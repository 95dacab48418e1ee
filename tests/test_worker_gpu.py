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
from workers.telemetry import read_events
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


def test_a_key_preloaded_and_evicted_on_request_through_the_gpu_keeper(redis_url, tmp_path,
                                                                        monkeypatch, rng):
    """PreloadSRS's path on a device: a request on the stream makes a key resident through
    the GPU's key keeper (the one shared copy: its bytes leave the device's free memory, the
    keeper lists one holder), a second answers already resident, an eviction hands the copy
    back (the keeper frees it: the device has the key's bytes back)."""
    import time

    import cupy

    from config.redis_keys import RedisKeys
    from snark import groth16
    from tests.circuits import random_circuit
    from workers.card import read_cards
    from workers.key_requests import KeyRequest, ask, wait_for

    for name in ("CUDA_VISIBLE_DEVICES", PINNED_ENV):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    stem = f"tiny-{rng.getrandbits(32):08x}"
    circuit = random_circuit(num_inputs=2, num_constraints=20000, rng=rng)
    groth16.setup(circuit.compile(), circuit_id=stem).save(tmp_path)
    runtime = WorkerRuntime.start(redis_url=redis_url, gpu=0, worker_name="gpu-preload",
                                  settings=load_settings(backend="gpu", params_dir=tmp_path,
                                                         shared_keys=True))
    client, keys = redis.Redis.from_url(redis_url), RedisKeys()

    def through_the_stream(op: str):
        sent = ask(client, keys, KeyRequest(op, "filecoin", stem, stem, wait_s=120))
        return wait_for(client, keys, sent.request_id, {"gpu-preload"},
                        time.monotonic() + 180)["gpu-preload"]

    try:
        free_before = cupy.cuda.runtime.memGetInfo()[0]
        loaded = through_the_stream("preload")
        assert loaded.ok and not loaded.was_resident and loaded.shared, loaded
        assert loaded.milliseconds > 0 and loaded.nbytes > 0
        key = runtime.residency.resident_by_name()[("filecoin", stem)]
        keeper = runtime.backend.shared_keys.status()["keys"]
        assert keeper == {runtime.backend.shared_keys.name(key): {"holders": 1}}, keeper
        assert free_before - cupy.cuda.runtime.memGetInfo()[0] >= loaded.nbytes
        [card] = read_cards(client, keys.card_prefix)
        assert card.keys == {f"filecoin/{stem}": loaded.nbytes}
        again = through_the_stream("preload")
        assert again.ok and again.was_resident, again
        free_loaded = cupy.cuda.runtime.memGetInfo()[0]  # the keeper's own context stays
        evicted = through_the_stream("evict")
        assert evicted.ok and evicted.was_resident and not evicted.deferred, evicted
        assert runtime.backend.shared_keys.status()["keys"] == {}
        assert read_cards(client, keys.card_prefix)[0].keys == {}
        deadline = time.monotonic() + 60
        while cupy.cuda.runtime.memGetInfo()[0] - free_loaded < loaded.nbytes:
            assert time.monotonic() < deadline, "the keeper kept the key's memory"
            time.sleep(0.1)
    finally:
        runtime.close()
