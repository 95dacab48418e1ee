"""A pool process whose device context is lost gives its work back and ends, and its pool
starts a fresh one: the job is proved and verified, even with this one worker on the queue
(the loss is the process's, not a refusal of the worker's), and the worker keeps its number
of processes (``tasks.pipeline._retire``).

An embedded redis-server and one real ``celery -A tasks worker -c 2``; the loss comes from
the test-only ``toy-lost-device`` type (``tests.lost_device_type``), whose first unit
raises ``DeviceLost`` as a GPU backend raises it after a kernel fault. The same loss from a
real faulting kernel is ``tests/test_gpu_backend.py``'s."""

from __future__ import annotations

import time
import uuid

import pytest

from bench.chaos import process_gone
from client.api import Client
from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark import groth16
from snark.fields import FR_MODULUS
from snark.proof import split_proofs
from snark.proof_types import Storage
from tests.lost_device_type import LostDeviceSettings, LostDeviceWorker
from tests.toy_distribution import toy_distribution

pytestmark = pytest.mark.slow

WAIT_S = 300
ENTRY_POINTS = {"toy-lost-device": "tests.lost_device_type:PLUGIN"}


def _pool(client: Client, node: str) -> list[int]:
    stats = client.app.control.inspect([node], timeout=10).stats() or {}
    return list(stats.get(node, {}).get("pool", {}).get("processes", []))


def test_a_process_that_lost_its_device_is_replaced_and_its_job_still_done(tmp_path, rng):
    marker = tmp_path / "lost"
    params = tmp_path / "params"
    settings_here = LostDeviceSettings(marker=str(marker))
    LostDeviceWorker(Storage(params), settings_here).load_key(None)  # the key, made once
    env = {"PROOFQ_BACKEND": "cpu", "PROOFQ_PARAMS_DIR": str(params),
           "PROOFQ_TOY_LOST_DEVICE_MARKER": str(marker), "PROOFQ_REFUSAL_PAUSE_S": "0.2",
           "PROOFQ_HEARTBEAT_S": "1"}
    with toy_distribution(tmp_path / "site", ENTRY_POINTS) as path, EmbeddedRedis() as server:
        node = f"lost-{uuid.uuid4().hex[:6]}@%h"
        worker = WorkerProcess(server.url, worker_command(gpu=None, concurrency=2, node=node),
                               log_dir=tmp_path, env={**env, "PYTHONPATH": path}).start()
        try:
            settings = load_settings(redis_url=server.url, params_dir=params, backend="cpu")
            with Client(server.url, settings) as client:
                name = worker.wait_ready(client.app, 180, node=node)
                before = _pool(client, name)
                assert len(before) == 2, before
                pairs = [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)]
                         for _ in range(4)]
                job = client.submit({"pairs": pairs}, proof_type="toy-lost-device")
                result = client.result(job, timeout=WAIT_S)
                vk = LostDeviceWorker(Storage(params), settings_here).load_key(None).vk
                for (x, y), proof in zip(pairs, split_proofs(result, len(pairs))):
                    assert groth16.verify(vk, [x * y % FR_MODULUS], proof)
                lost = int(marker.read_text())
                assert lost in before
                deadline = time.monotonic() + 60
                while not (process_gone(lost) and len(after := _pool(client, name)) == 2
                           and lost not in after):
                    assert time.monotonic() < deadline, (lost, _pool(client, name))
                    time.sleep(0.5)
                assert client.store.refusals(job) == {}  # the worker itself never refused
            log = worker.log_path.read_text(errors="replace")
            assert "the process exits so that its pool starts a fresh one" in log
            assert worker.alive()
        finally:
            worker.stop(graceful=False)
