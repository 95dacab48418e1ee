"""The Redis-stream intake against a real redis-server: submit, refuse, reclaim after a crash."""

from __future__ import annotations

import pytest

from client.api import Client
from client.intake import GROUP, INTAKE_STREAM, Intake
from config.settings import load_settings
from snark.porep.seal import seal
from tasks.jobs import RESULTS_STREAM


@pytest.fixture()
def client(redis_url):
    with Client(redis_url, load_settings(redis_url=redis_url)) as c:
        yield c


def _intake_jobs(client: Client) -> list[str]:
    """Ids of jobs named after their intake entry (the job hashes, not their sub-keys)."""
    keys = client.store.redis.keys("proofq:job:intake-*")
    return [k.decode().removeprefix("proofq:job:") for k in keys if k.count(b":") == 2]


def _queued_messages(client: Client) -> int:
    """Messages waiting on the jobs queue (all priority steps)."""
    return sum(client.store.redis.llen(key) for key in client.store.redis.keys("jobs*"))


def test_requests_become_jobs_and_bad_ones_are_published_as_rejected(client):
    intake = Intake(client, name="a", block_s=0.1)
    c1 = seal(2048, 2, 1)
    r = client.store.redis
    r.xadd(INTAKE_STREAM, {"job": "from-go", "type": "porep", "priority": "high",
                           "c1": c1.to_json()})
    r.xadd(INTAKE_STREAM, {"c1": c1.to_json()})
    bad_id = r.xadd(INTAKE_STREAM, {"job": "broken", "c1": "{\"format\": 1}"}).decode()
    r.xadd(INTAKE_STREAM, {"job": "odd", "type": "winning", "c1": c1.to_json()})
    assert intake.process_once() == 4
    state = client.status("from-go")
    assert (state.status, state.priority, state.partitions) == ("queued", "high", 2)
    [derived] = _intake_jobs(client)
    assert client.status(derived).priority == "normal"
    assert _queued_messages(client) == 2
    rejected = {f[b"job"].decode(): f for _, f in r.xrange(RESULTS_STREAM)}
    assert rejected["broken"][b"status"] == b"rejected"
    assert rejected["broken"][b"entry"].decode() == bad_id
    assert b"format" in rejected["broken"][b"error"]
    assert b"unknown proof type 'winning'" in rejected["odd"][b"error"]
    assert client.store.state("broken") is None
    assert r.xpending(INTAKE_STREAM, GROUP)["pending"] == 0


def test_a_request_read_by_a_crashed_consumer_is_reclaimed_once(client):
    r = client.store.redis
    crashed = Intake(client, name="crashed", block_s=0.1)
    r.xadd(INTAKE_STREAM, {"c1": seal(2048, 1, 1).to_json()})
    # The crashed consumer read the entry and died before submitting or acknowledging it.
    r.xreadgroup(GROUP, crashed.name, {INTAKE_STREAM: ">"}, count=1)
    assert r.xpending(INTAKE_STREAM, GROUP)["pending"] == 1
    patient = Intake(client, name="patient", reclaim_idle_s=3600, block_s=0.1)
    assert patient.process_once() == 0  # not idle long enough to be claimed
    rescuer = Intake(client, name="rescuer", reclaim_idle_s=0, block_s=0.1)
    assert rescuer.process_once() == 1
    assert r.xpending(INTAKE_STREAM, GROUP)["pending"] == 0
    [job] = _intake_jobs(client)
    assert client.status(job).status == "queued"
    assert _queued_messages(client) == 1


def test_bytes_that_are_not_utf8_are_refused_not_left_pending(client):
    # Before: decoding raised in process_once, the entry stayed pending and crashed every
    # intake process that reclaimed it.
    r = client.store.redis
    intake = Intake(client, name="a", block_s=0.1)
    r.xadd(INTAKE_STREAM, {"job": b"bad\xff", "c1": seal(2048, 1, 1).to_json()})
    r.xadd(INTAKE_STREAM, {"job": "garbled", "c1": b"{\"format\": \"\xff\xfe\"}"})
    assert intake.process_once() == 2
    rejected = [f for _, f in r.xrange(RESULTS_STREAM)]
    assert [f[b"status"] for f in rejected] == [b"rejected", b"rejected"]
    assert rejected[0][b"error"].startswith(b"job_id: ")
    assert rejected[1][b"job"] == b"garbled" and rejected[1][b"error"].startswith(b"c1")
    assert client.store.state("garbled") is None
    assert r.xpending(INTAKE_STREAM, GROUP)["pending"] == 0


def test_a_pending_request_trimmed_from_the_stream_is_dropped_not_crashed_on(client):
    r = client.store.redis
    crashed = Intake(client, name="crashed", block_s=0.1)
    gone = r.xadd(INTAKE_STREAM, {"c1": seal(2048, 1, 1).to_json()})
    r.xreadgroup(GROUP, crashed.name, {INTAKE_STREAM: ">"}, count=1)
    r.xdel(INTAKE_STREAM, gone)  # trimmed (MAXLEN) while pending
    r.xadd(INTAKE_STREAM, {"c1": seal(2048, 1, 1).to_json()})
    rescuer = Intake(client, name="rescuer", reclaim_idle_s=0, block_s=0.1)
    # The trimmed one is acknowledged with nothing to submit; the live request is served.
    assert rescuer.process_once() == 1
    assert r.xpending(INTAKE_STREAM, GROUP)["pending"] == 0
    assert len(_intake_jobs(client)) == 1
