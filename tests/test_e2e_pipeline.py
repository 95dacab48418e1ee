"""End to end: a real redis-server, real ``celery -A tasks worker`` subprocesses, real proofs.

All tests share one porep-2KiB (K=1) proving key, made once for the module, and two CPU
workers of one pool process each (as two single-GPU workers would be). Every test uses
fresh random sectors and its own job ids on one Redis, and ends with the queues drained.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
import uuid

import pytest
import redis

import gpu

from client.api import Client, JobError
from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark.porep.c1 import fr_hex
from snark.params import record_circuit_id, shape_path
from snark.porep.prove import (circuit_id_for, circuit_shape, load_or_setup_key,
                                load_verifying_key, prove_partition, verify_c1)
from snark.porep.seal import seal
from tasks.jobs import RESULTS_STREAM, content_digest
from workers.gpu_binding import host_name
from workers.heartbeat import Heartbeat
from workers.locks import GpuId, GpuLock
from tasks.submission import SubmitError
from tests.timing import scaled

pytestmark = pytest.mark.slow

SECTOR, K = 2048, 1
WAIT_S = scaled(300)  # waits for proofs: tests/timing.py
MAX_RETRIES = 2
LOCK_LEASE_S = 4  # a killed worker's place in the lock queue is given up after this
PARK_LEASE_S = 120


def _c1(partitions: int = 2):
    return seal(SECTOR, partitions, K)


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    params = tmp_path_factory.mktemp("params")
    load_or_setup_key(_c1(), params)  # one setup for the whole module
    with EmbeddedRedis() as server:
        yield load_settings(redis_url=server.url, params_dir=params, backend="cpu")


def _start_workers(settings, count: int) -> list[WorkerProcess]:
    # One CPU "device" for the host, so a test can park partitions by holding its lock.
    env = {"PROOFQ_PARAMS_DIR": str(settings.params_dir), "PROOFQ_BACKEND": "cpu",
           "PROOFQ_TASK_MAX_RETRIES": str(MAX_RETRIES), "PROOFQ_RETRY_BACKOFF_S": "0.05",
           "PROOFQ_LOCK_LEASE_S": str(LOCK_LEASE_S), "PROOFQ_HEARTBEAT_S": "1",
           "PROOFQ_CPU_DEVICES": "1"}
    workers = []
    try:
        nodes = [f"w{n}-{uuid.uuid4().hex[:6]}@%h" for n in range(count)]
        for node in nodes:
            command = worker_command(gpu=None, concurrency=1, node=node)
            workers.append(WorkerProcess(settings.redis_url, command, log_dir=settings.params_dir,
                                         env=env).start())
        with Client(settings.redis_url, settings) as probe:
            for worker, node in zip(workers, nodes):
                worker.wait_ready(probe.app, 60, node=node)
    except BaseException:
        for worker in workers:
            worker.stop(graceful=False)
        raise
    return workers


@pytest.fixture(scope="module")
def workers(settings):
    started = _start_workers(settings, 2)
    yield started
    for worker in started:
        worker.stop(graceful=False)


@pytest.fixture()
def client(settings, workers):
    with Client(settings.redis_url, settings) as c:
        yield c
    for worker in workers:
        assert worker.alive(), f"a worker died:\n{worker.log_tail()}"


def _verifies(settings, c1, proof: bytes) -> bool:
    return verify_c1(c1, load_verifying_key(c1, settings.params_dir), proof)


def _results_for(client: Client, job_id: str) -> list[dict]:
    return [fields for _, fields in client.store.redis.xrange(RESULTS_STREAM)
            if fields[b"job"].decode() == job_id]


def test_two_partition_job_completes_and_verifies(settings, client):
    c1 = _c1(2)
    job = client.submit(c1)
    proof = client.result(job, timeout=WAIT_S)
    state = client.status(job)
    assert state.status == "done" and state.parts_done == 2
    assert len(proof) == 2 * 192
    assert _verifies(settings, c1, proof)
    assert state.queue_s >= 0 and state.prove_s > 0
    [entry] = _results_for(client, job)
    assert bytes.fromhex(entry[b"proof"].decode()) == proof


def test_five_concurrent_jobs_over_two_workers(settings, client):
    c1s = [_c1(2) for _ in range(5)]
    jobs = [client.submit(c1) for c1 in c1s]
    for job, c1 in zip(jobs, c1s):
        assert _verifies(settings, c1, client.result(job, timeout=WAIT_S))
    events = [f for _, f in client.store.redis.xrange("proofq:events")
              if f[b"job"].decode() in jobs]
    assert len({f[b"worker"].split(b"/")[0] for f in events}) == 2  # both workers proved some
    queued = [f for f in events if f[b"phase"] == b"queued"]
    assert len(queued) == 10 and all(float(f[b"end"]) >= float(f[b"start"]) for f in queued)


def test_resubmission_is_idempotent_and_conflicts_are_refused(settings, client):
    c1 = _c1(1)
    job_id = f"idem-{uuid.uuid4().hex}"
    assert client.submit(c1, job_id=job_id) == job_id
    assert client.submit(c1.to_json(), job_id=job_id) == job_id
    with pytest.raises(SubmitError, match="job_id: .* different content"):
        client.submit(_c1(1), job_id=job_id)
    assert _verifies(settings, c1, client.result(job_id, timeout=WAIT_S))
    assert len(_results_for(client, job_id)) == 1


def _tampered(c1, partition: int = 1) -> dict:
    """``c1`` with sibling 2 of one d_path changed: well-formed, but the path is wrong."""
    data = json.loads(c1.to_json())
    path = data["vanilla_proofs"][partition]["challenges"][0]["d_path"]
    path[2] = fr_hex((int(path[2], 16) + 1) % (1 << 250))
    return data


def test_malformed_input_is_refused_at_submit_while_other_jobs_complete(settings, client):
    good = [_c1(2) for _ in range(2)]
    jobs = [client.submit(c1) for c1 in good]
    bad_inputs = {
        "vanilla_proofs[1].challenges[0].d_path: expected 6 siblings, got 5": _short_path(),
        "not valid JSON": "{not json",
        "max_input_bytes": "x" * (settings.max_input_bytes + 1),
        "sector_size": {**json.loads(_c1(1).to_json()), "sector_size": 3000},
        "c1: expected JSON text, bytes, a dict or a C1, got list": [1, 2],
    }
    for message, raw in bad_inputs.items():
        job_id = f"bad-{uuid.uuid4().hex}"
        with pytest.raises(SubmitError, match=re.escape(message)):
            client.submit(raw, job_id=job_id)
        assert client.store.state(job_id) is None
    with pytest.raises(SubmitError, match="priority: unknown priority 'urgent'"):
        client.submit(good[0], priority="urgent")
    with pytest.raises(SubmitError, match="proof_type: unknown proof type 'winning'"):
        client.submit(good[0], proof_type="winning")
    with pytest.raises(SubmitError, match="proof_type: 'porep' is retired"):
        client.submit(good[0], proof_type="porep")
    for job, c1 in zip(jobs, good):
        assert _verifies(settings, c1, client.result(job, timeout=WAIT_S))


def _short_path() -> dict:
    data = json.loads(_c1(2).to_json())
    data["vanilla_proofs"][1]["challenges"][0]["d_path"].pop()
    return data


def test_a_forged_path_fails_its_job_naming_partition_challenge_and_field(settings, client):
    """Accepted (the producer does not hash), then refused where the partition's witness is
    built: the job fails for good with the reason and never yields a proof."""
    good = _c1(2)
    good_job = client.submit(good)
    bad_job = client.submit(_tampered(_c1(10), partition=3))
    with pytest.raises(JobError, match=re.escape(
            "partition 3: synthesize: C1Error: vanilla_proofs[3].challenges[0]: data_leaf "
            "with d_path does not hash to comm_d")):
        client.result(bad_job, timeout=WAIT_S)
    assert client.store.result(bad_job) is None
    assert _verifies(settings, good, client.result(good_job, timeout=WAIT_S))
    attempts = client.store.redis.hget(f"proofq:job:{bad_job}:attempts", 3)
    assert attempts == b"1"  # permanent: not retried


def test_a_challenge_not_derived_from_the_seed_fails_before_any_partition_runs(settings,
                                                                               client):
    c1 = _c1(2)
    data = json.loads(c1.to_json())
    challenge = data["vanilla_proofs"][1]["challenges"][0]
    challenge["index"] = (challenge["index"] + 1) % c1.nodes
    job = client.submit(data)
    with pytest.raises(JobError, match=re.escape(
            "failed: check: vanilla_proofs[1].challenges[0].index: ")):
        client.result(job, timeout=WAIT_S)
    assert client.status(job).parts_done == 0
    assert not client.store.redis.exists(f"proofq:job:{job}:attempts")  # nothing was proved


def test_partition_delivered_twice_assembles_once(settings, client):
    c1 = _c1(2)
    job = client.submit(c1)
    for partition in (0, 1, 0, 1):  # duplicates racing the job's own fan-out
        client.app.send_task("proofq.prove_partition", args=[job, partition], queue="gpu",
                              ignore_result=True)
    proof = client.result(job, timeout=WAIT_S)
    assert _verifies(settings, c1, proof)
    _drain(settings, client)
    assert len(_results_for(client, job)) == 1
    assert client.status(job).status == "done"


def test_transient_faults_are_retried_with_backoff_then_recorded(settings, client):
    """An unreadable key is an OSError (transient): retried in place, then given back for
    another worker; once both workers have, the job fails with it."""
    c1 = seal(SECTOR, 1, K + 1)  # a circuit of its own, so the broken key hurts no one else
    broken = settings.params_dir / circuit_id_for(c1)
    (broken / "manifest.json").mkdir(parents=True)
    # Recorded for its shape: the submit task finds it there, the workers fail to load it.
    record_circuit_id(settings.params_dir, circuit_shape(c1), circuit_id_for(c1))
    try:
        job = client.submit(c1)
        with pytest.raises(JobError, match=r"no worker can serve it \(2 refused\): "
                                           r"partition 0: synthesize: IsADirectoryError"):
            client.result(job, timeout=WAIT_S)
    finally:
        shutil.rmtree(broken)
        shape_path(settings.params_dir, c1.circuit_name).unlink()
    attempts = [f for _, f in client.store.redis.xrange("proofq:events")
                if f[b"job"].decode() == job and f[b"phase"] == b"synthesize"]
    # each worker's tries in place (a worker may take it back before the other refused)
    assert len(attempts) >= 2 * (MAX_RETRIES + 1) and len(attempts) % (MAX_RETRIES + 1) == 0
    assert all(f[b"error"] for f in attempts)


def _park_compute(client: Client) -> tuple:
    """Hold the CPU device's compute lock here: partitions wait in compute_wait."""
    heartbeat = Heartbeat(1.0)
    # A long lease: on a loaded machine a short one could lapse between two renewals and
    # let a parked partition compute.
    lock = GpuLock(client.store.redis, GpuId(host_name(), "cpu.0"), "compute",
                   lease_s=PARK_LEASE_S, heartbeat=heartbeat)
    return lock.acquire("test"), heartbeat


def test_a_partition_whose_worker_dies_is_delivered_again_in_front(settings, client):
    """kill -9 a pool process mid-partition: the task is re-delivered at the front of its
    queue (before: at the back, behind everything queued since) and the job completes."""
    held, heartbeat = _park_compute(client)
    try:
        c1 = _c1(3)
        job = client.submit(c1)
        # Both workers park a partition; the third waits in the queue.
        parked = _poll(lambda: len(ev := _phase_events(client, job, "mem")) == 2 and ev)
        victim = parked[0]
        victim_pid = int(victim[b"worker"].decode().rsplit("/", 1)[1])
        os.kill(victim_pid, signal.SIGKILL)
        # The victim's worker starts a new pool process, which takes the queue's front.
        [again] = _poll(lambda: [f for f in _phase_events(client, job, "synthesize")
                                 if f[b"worker"] not in {p[b"worker"] for p in parked}])
        assert again[b"partition"] == victim[b"partition"]
    finally:
        held.release()
        heartbeat.close()
    assert _verifies(settings, c1, client.result(job, timeout=WAIT_S))


def test_gpu_option_names_the_worker_and_binds_its_processes(settings):
    """``--gpu 1``: worker gpu1@host; on a machine without that GPU it proves on the CPU."""
    with EmbeddedRedis() as server, Client(server.url, settings) as own:
        env = {"PROOFQ_PARAMS_DIR": str(settings.params_dir), "PROOFQ_BACKEND": "auto"}
        worker = WorkerProcess(server.url, worker_command(gpu=1, concurrency=1),
                               log_dir=settings.params_dir, env=env).start()
        try:
            node = worker.wait_ready(own.app, 60)
            c1 = _c1(1)
            job = own.submit(c1)
            assert _verifies(settings, c1, own.result(job, timeout=WAIT_S))
        finally:
            worker.stop(graceful=False)
        assert node == f"gpu1@{socket.gethostname()}"
        events = [f for _, f in own.store.redis.xrange("proofq:events")
                  if f[b"job"].decode() == job]
        assert {f[b"worker"].decode().split("/")[0] for f in events} == {node}
        if gpu.device.device_count()[0] < 2:  # no GPU 1 here: a CPU stand-in for it
            assert {f[b"gpu"] for f in events} == {b"cpu-1"}


def test_a_running_partition_is_abandoned_when_its_job_is_cancelled(settings, client):
    """Parked in compute_wait (the compute lock is held here), the partition sees the cancel
    and leaves without computing; the job says cancelled."""
    held, heartbeat = _park_compute(client)
    try:
        job = client.submit(_c1(1))
        _poll(lambda: _worker_pids(client, job, "mem"))
        assert client.cancel(job) == "cancelled"
        [waited] = _poll(lambda: _phase_events(client, job, "compute_wait"))
    finally:
        held.release()
        heartbeat.close()
    assert b"cancel" in waited[b"error"]
    _drain(settings, client)
    assert _phase_events(client, job, "compute") == []
    state = client.status(job)
    assert (state.status, state.parts_done) == ("cancelled", 0)


def _phase_events(client: Client, job: str, phase: str) -> list[dict]:
    return [f for _, f in client.store.redis.xrange("proofq:events")
            if f[b"job"].decode() == job and f[b"phase"] == phase.encode()]


def _worker_pids(client: Client, job: str, phase: str) -> list[int]:
    """Pool processes that ended ``phase`` of the job, from the worker names in the events."""
    return [int(f[b"worker"].decode().rsplit("/", 1)[1])
            for f in _phase_events(client, job, phase)]


def test_assembly_left_unfinished_by_a_dead_worker_is_finished_on_redelivery(settings, client):
    """The set was completed (status assembling) but the worker died before publishing: a
    plain duplicate leaves it alone, the broker's re-delivery finishes the assembly, once."""
    c1 = _c1(2)
    key = load_or_setup_key(c1, settings.params_dir)
    text = c1.to_json()
    job = f"orphan-{uuid.uuid4().hex}"
    client.store.create(job, digest=content_digest("porep-demo", text), proof_type="porep-demo",
                        partitions=2, priority="normal", input_json=text)
    outcomes = [client.store.store_part(job, p, prove_partition(c1, p, key)) for p in (0, 1)]
    assert outcomes == ["stored", "complete"]
    client.app.send_task("proofq.prove_partition", args=[job, 1], ignore_result=True)
    _drain(settings, client)
    assert client.status(job).status == "assembling"
    for _ in range(2):
        client.app.send_task("proofq.prove_partition", args=[job, 1], ignore_result=True,
                             delivery_info={"redelivered": True})
    assert _verifies(settings, c1, client.result(job, timeout=WAIT_S))
    _drain(settings, client)
    assert len(_results_for(client, job)) == 1


def _drain(settings, client: Client) -> None:
    """Every message sent so far has been taken once a job submitted after them is done."""
    c1 = _c1(1)
    assert _verifies(settings, c1, client.result(client.submit(c1), timeout=WAIT_S))


def test_cancelled_job_stops_and_says_so(settings, client):
    partitions = 8
    job = client.submit(_c1(partitions))
    deadline = time.monotonic() + WAIT_S
    while client.status(job).parts_done == 0:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert client.cancel(job) == "cancelled"
    at_cancel = client.status(job).parts_done
    _drain(settings, client)
    state = client.status(job)
    assert state.status == "cancelled" and state.error == "cancelled by request"
    assert state.parts_done == at_cancel < partitions
    with pytest.raises(JobError, match="cancelled"):
        client.result(job)
    assert [f[b"status"] for f in _results_for(client, job)] == [b"cancelled"]


def test_high_priority_overtakes_queued_normal_work(settings, client):
    normal = [client.submit(_c1(2)) for _ in range(6)]
    urgent = client.submit(_c1(2), priority="high")
    client.wait(urgent, timeout=WAIT_S)
    for job in normal:
        client.wait(job, timeout=WAIT_S)
    finished = {job: client.status(job).finished for job in [*normal, urgent]}
    overtaken = [job for job in normal if finished[job] > finished[urgent]]
    assert len(overtaken) >= 3, finished


def test_job_state_survives_a_fresh_client(settings, client):
    c1 = _c1(1)
    job = client.submit(c1)
    client.wait(job, timeout=WAIT_S)
    with Client(settings.redis_url, settings) as other:
        assert other.result(job) == client.result(job)
    raw = redis.Redis.from_url(settings.redis_url).hgetall(f"proofq:job:{job}")
    assert raw[b"status"] == b"done" and raw[b"proof_type"] == b"porep-demo"


def test_a_job_stored_under_the_demos_retired_name_is_still_proved(settings, client):
    """Queued before the demo type became 'porep-demo', a 'porep' job still runs."""
    c1 = _c1(2)
    text = c1.to_json()
    job = f"retired-{uuid.uuid4().hex}"
    client.store.create(job, digest=content_digest("porep", text), proof_type="porep",
                        partitions=2, priority="normal", input_json=text)
    client.app.send_task("proofq.submit", args=[job], ignore_result=True)
    assert _verifies(settings, c1, client.result(job, timeout=WAIT_S))


def test_flower_serves_its_pages_while_a_partition_is_held_mid_phase(settings, client, workers):
    """Before: a progress event's ``worker`` string overwrote Celery's ``Task.worker`` and
    its custom state matched no filter: every running task's page and the tasks table
    answered HTTP 500 while anything proved."""
    port = _free_port()
    env = {**os.environ, "PROOFQ_REDIS_URL": settings.redis_url,
           "FLOWER_UNAUTHENTICATED_API": "true"}
    flower = subprocess.Popen([sys.executable, "-m", "celery", "-A", "tasks", "flower",
                               f"--port={port}", "--address=127.0.0.1"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        _poll(lambda: _get(f"{base}/healthcheck") == "OK")
        time.sleep(2.0)  # Flower subscribes to the event stream after it starts serving
        c1 = _c1(2)
        held, heartbeat = _park_compute(client)
        try:
            job = client.submit(c1)
            # Both partitions hold the memory lock's work done and wait for compute.
            _poll(lambda: len(_phase_events(client, job, "mem")) == 2)

            def held_rows():
                rows = _flower_rows(base, job)
                return len(rows) == 2 and all(r["state"] == "STARTED" for r in rows) and rows
            rows = _poll(held_rows)
            assert sorted(r["args"] for r in rows) == [f"job={job} partition={p}"
                                                       for p in (0, 1)]
            assert {r["worker"] for r in rows} <= {w for w in _flower_workers(base)}
            for row in rows:
                page = _get(f"{base}/task/{row['uuid']}")
                assert f"job={job} partition=" in page and "STARTED" in page
            assert '"args"' in _get(f"{base}/tasks") or ">args<" in _get(f"{base}/tasks")
        finally:
            held.release()
            heartbeat.close()
        client.result(job, timeout=WAIT_S)
        _poll(lambda: [r["state"] for r in _flower_rows(base, job)] == ["SUCCESS"] * 2)
        names = json.loads(_get(f"{base}/api/workers?refresh=1"))
        assert len(names) >= len(workers)
    finally:
        os.killpg(flower.pid, signal.SIGTERM)
        flower.wait(timeout=30)


def _flower_rows(base: str, job: str) -> list[dict]:
    """The job's partition tasks as Flower's tasks table lists them (its datatable call)."""
    query = urllib.parse.urlencode({"draw": 1, "start": 0, "length": 100,
                                    "search[value]": "", "order[0][column]": 0,
                                    "order[0][dir]": "asc", "columns[0][data]": "received"})
    table = json.loads(_post(f"{base}/tasks/datatable", query))
    return [r for r in table["data"] if r["name"] == "proofq.prove_partition"
            and f"job={job} " in r["args"]]


def _flower_workers(base: str) -> set[str]:
    return set(json.loads(_get(f"{base}/api/workers")))


def test_partition_progress_reaches_celery_event_consumers(settings, client):
    seen: list[dict] = []
    with client.app.connection_for_read() as connection:
        receiver = client.app.events.Receiver(connection, handlers={"*": seen.append})
        # wakeup: workers answer with a heartbeat event once the receiver is subscribed.
        thread = threading.Thread(target=receiver.capture, kwargs={"wakeup": True})
        thread.start()
        try:
            _poll(lambda: seen)
            job = client.submit(_c1(2))
            client.result(job, timeout=WAIT_S)
            _poll(lambda: {(e["partition"], e["phase"]) for e in seen
                           if e["type"] == "proofq-phase" and e["job"] == job}
                  >= {(p, ph) for p in (0, 1) for ph in ("synthesize", "compute", "verify")})
        finally:
            receiver.should_stop = True
            thread.join(timeout=10)


def _poll(condition, timeout_s: float = WAIT_S):
    """The condition's first truthy value, checked every 0.2 s."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            value = condition()
            if value:
                return value
        except OSError:
            pass
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.2)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def _post(url: str, form: str) -> str:
    with urllib.request.urlopen(url, data=form.encode(), timeout=10) as response:
        return response.read().decode()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
