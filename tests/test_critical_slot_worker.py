"""A real ``celery -A tasks worker -c 2 --critical-slots 1`` on the CPU: while its other
process waits for the device with a PoRep partition and more PoRep work is queued, a
critical job still finds a process, and its partition is granted the device's compute lock
before the PoRep partition that queued for it first (band order through the pipeline)."""

from __future__ import annotations

import time
import uuid

import pytest

from client.api import Client
from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark.porep.prove import load_or_setup_key
from snark.porep.seal import seal
from tests.timing import scaled
from workers.gpu_binding import host_name
from workers.heartbeat import Heartbeat
from workers.locks import GpuId, GpuLock

pytestmark = pytest.mark.slow

WAIT_S = scaled(300)
QUIET_S = 3.0  # long enough for a worker to take a message it should not


def _poll(condition, timeout_s: float = WAIT_S):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.1)
    return value


def _events(client: Client, job: str, phase: str) -> list[dict]:
    return [f for _, f in client.store.redis.xrange("proofq:events")
            if f[b"job"].decode() == job and f[b"phase"] == phase.encode()]


def test_a_critical_job_takes_the_free_slot_and_the_lock_first(tmp_path):
    params = tmp_path / "params"
    normal_c1, critical_c1 = seal(2048, 3, 1), seal(2048, 1, 1)
    load_or_setup_key(normal_c1, params)
    env = {"PROOFQ_PARAMS_DIR": str(params), "PROOFQ_BACKEND": "cpu",
           "PROOFQ_CPU_DEVICES": "1"}  # the processes share one lock pair, as on a GPU
    node = f"crit-{uuid.uuid4().hex[:6]}@%h"
    with EmbeddedRedis() as server:
        settings = load_settings(redis_url=server.url, params_dir=params, backend="cpu")
        command = worker_command(gpu=None, concurrency=2, node=node) + ["--critical-slots", "1"]
        worker = WorkerProcess(server.url, command, log_dir=tmp_path, env=env).start()
        heartbeat = Heartbeat(1.0)
        try:
            with Client(server.url, settings) as client:
                worker.wait_ready(client.app, 120, node=node)
                held = GpuLock(client.store.redis, GpuId(host_name(), "cpu.0"), "compute",
                               lease_s=120, heartbeat=heartbeat).acquire("test")
                normal = client.submit(normal_c1)
                _poll(lambda: _events(client, normal, "mem"))  # one partition waits for compute
                time.sleep(QUIET_S)
                # the other process is kept: no second PoRep partition was taken into it
                assert len(_events(client, normal, "synthesize")) == 1
                critical = client.submit(critical_c1, priority="critical")
                _poll(lambda: _events(client, critical, "mem"))  # it found a process
                held.release()
                client.wait(critical, WAIT_S)
                client.wait(normal, WAIT_S)
                assert client.status(critical).status == "done"
                assert client.status(normal).status == "done"
                [crit] = _events(client, critical, "compute")
                first_normal = min(float(e[b"start"]) for e in _events(client, normal, "compute"))
                # granted before the PoRep partition that had waited for the lock longer
                assert float(crit[b"start"]) < first_normal
        finally:
            heartbeat.close()
            worker.stop(graceful=False)
    assert worker.log_tail(200).count("1 of 2 processes kept for critical work") == 1
