"""Faults that used to strand jobs for good (or for the 4 h visibility timeout), reproduced
with a real redis-server (AOF on), real ``celery -A tasks worker`` processes and real proofs.

A partition is parked in ``compute_wait`` by holding the CPU device's compute lock from the
test, so the fault always strikes mid-partition, whatever the machine's load; the fuller
version with many jobs is ``bench/chaos.py``.
"""

from __future__ import annotations

import os
import signal
import time
import uuid

import pytest
import redis

from client.api import Client
from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark.porep.prove import load_or_setup_key, load_verifying_key, verify_c1
from snark.porep.seal import seal
from tasks.jobs import RESULTS_STREAM
from workers.gpu_binding import host_name
from workers.heartbeat import Heartbeat
from workers.locks import GpuId, GpuLock

pytestmark = pytest.mark.slow

SECTOR, K = 2048, 1
WAIT_S = 300
REAP_AFTER_S = 5


@pytest.fixture(scope="module")
def params(tmp_path_factory):
    params = tmp_path_factory.mktemp("params")
    load_or_setup_key(seal(SECTOR, 1, K), params)
    return params


@pytest.fixture()
def server():
    with EmbeddedRedis(appendonly=True) as server:
        yield server


def _worker_env(params) -> dict[str, str]:
    return {"PROOFQ_PARAMS_DIR": str(params), "PROOFQ_BACKEND": "cpu",
            "PROOFQ_CPU_DEVICES": "1", "PROOFQ_LOCK_LEASE_S": "4", "PROOFQ_HEARTBEAT_S": "1",
            "PROOFQ_REAP_AFTER_S": str(REAP_AFTER_S), "PROOFQ_RETRY_BACKOFF_S": "0.05"}


def _start_worker(url: str, params, client: Client) -> WorkerProcess:
    node = f"f{uuid.uuid4().hex[:6]}@%h"
    worker = WorkerProcess(url, worker_command(gpu=None, concurrency=1, node=node),
                           log_dir=params, env=_worker_env(params)).start()
    try:
        worker.wait_ready(client.app, 120, node=node)
    except BaseException:
        worker.stop(graceful=False)
        raise
    return worker


class _Parked:
    """The CPU device's compute lock, held here: partitions wait in ``compute_wait``."""

    def __init__(self, url: str) -> None:
        self.heartbeat = Heartbeat(1.0)
        self.lock = GpuLock(redis.Redis.from_url(url), GpuId(host_name(), "cpu.0"), "compute",
                            lease_s=120, heartbeat=self.heartbeat)
        self.held = self.lock.acquire("test")

    def release(self) -> None:
        self.held.release()
        self.heartbeat.close()


def _events(client: Client, job: str, phase: str) -> list[dict]:
    return [f for _, f in client.store.redis.xrange("proofq:events")
            if f[b"job"].decode() == job and f[b"phase"] == phase.encode()]


def _pids(events: list[dict]) -> list[int]:
    return [int(f[b"worker"].decode().rsplit("/", 1)[1]) for f in events]


def _poll(condition, timeout_s: float = WAIT_S):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.2)
    return value


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def _done_once(client: Client, params, c1, job: str) -> None:
    proof = client.result(job, timeout=WAIT_S)
    assert verify_c1(c1, load_verifying_key(c1, params), proof)
    published = [f for _, f in client.store.redis.xrange(RESULTS_STREAM)
                 if f[b"job"].decode() == job]
    assert [f[b"status"] for f in published] == [b"done"]


def test_a_redis_restart_mid_partition_loses_nothing(server, params):
    """Before: the partition's next Redis call failed, the task failed and its message was
    acknowledged (or left to the visibility timeout): the job stayed 'proving' for good."""
    settings = load_settings(redis_url=server.url, params_dir=params)
    with Client(server.url, settings) as client:
        worker = _start_worker(server.url, params, client)
        try:
            parked = _Parked(server.url)
            c1 = seal(SECTOR, 1, K)
            job = client.submit(c1)
            _poll(lambda: _events(client, job, "mem"))  # now waiting for the compute lock
            server.shut_down()
            time.sleep(2.0)  # an outage the waiting partition meets (any length would do)
            server.restart()
            parked.release()
            _done_once(client, params, c1, job)
            assert worker.alive()
        finally:
            worker.stop(graceful=False)


def test_a_killed_worker_main_process_gives_its_partition_back_within_the_reap_time(
        server, params):
    """``kill -9`` of a worker's main process (its pool dies with it): before, its message
    waited for the 4 h visibility timeout; now another worker's reaper restores it once the
    dead worker's claim has lapsed (``reap_after_s``)."""
    settings = load_settings(redis_url=server.url, params_dir=params)
    with Client(server.url, settings) as client:
        workers = [_start_worker(server.url, params, client) for _ in range(2)]
        try:
            parked = _Parked(server.url)
            c1 = seal(SECTOR, 1, K)
            job = client.submit(c1)
            [victim] = _pids(_poll(lambda: _events(client, job, "mem")))
            os.kill(_parent(victim), signal.SIGKILL)
            killed_at = time.monotonic()
            parked.release()
            _done_once(client, params, c1, job)
            recovered_s = time.monotonic() - killed_at
            provers = _pids(_events(client, job, "synthesize"))
            assert provers[0] == victim and len(set(provers)) == 2
            print(f"partition back and proved {recovered_s:.1f} s after the kill "
                  f"(reap_after_s={REAP_AFTER_S})")
            assert sum(w.alive() for w in workers) == 1
        finally:
            for worker in workers:
                worker.stop(graceful=False)


def test_a_worker_waits_out_redis_at_maxmemory_and_loses_nothing(server, params):
    """Redis at ``maxmemory`` (noeviction) while a partition proves. Before: the task met
    the OOM at every run, ran again at once (85% of a core, ~11,300 commands/s, 30 MB of
    log in 35 s), and a worker that popped a message then died on its record. Now the
    worker waits, quietly, and the job is done once when Redis takes writes again."""
    settings = load_settings(redis_url=server.url, params_dir=params)
    admin = redis.Redis.from_url(server.url)
    with Client(server.url, settings) as client:
        worker = _start_worker(server.url, params, client)
        try:
            parked = _Parked(server.url)
            c1 = seal(SECTOR, 1, K)
            job = client.submit(c1)
            _poll(lambda: _events(client, job, "mem"))  # now waiting for the compute lock
            admin.config_set("maxmemory-policy", "noeviction")
            admin.config_set("maxmemory", 1)  # every write refused from now on
            parked.release()  # a delete: allowed when full
            logged, commands = worker.log_path.stat().st_size, _commands(admin)
            time.sleep(5.0)
            logged = worker.log_path.stat().st_size - logged
            commands = _commands(admin) - commands
            print(f"while full: {commands} Redis commands, {logged} bytes of log in 5 s")
            assert worker.alive()
            assert commands < 500 and logged < 20_000
            admin.config_set("maxmemory", 0)
            _done_once(client, params, c1, job)
            assert worker.alive()
        finally:
            admin.config_set("maxmemory", 0)
            worker.stop(graceful=False)


def _commands(client: redis.Redis) -> int:
    return int(client.info("stats")["total_commands_processed"])
