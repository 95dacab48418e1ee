"""The job view's data from a real Redis holding jobs and phase events, no workers: a
compute phase still running counts as busy up to now, a cancelled job shows the partition
that still computes, Filecoin jobs carry their sector and miner."""

from __future__ import annotations

import time

import pytest
import redis

from client.view.snapshot import snapshot
from tasks.jobs import JobStore, content_digest
from workers.phase_events import EVENTS_STREAM, PhaseEvent


@pytest.fixture()
def store(redis_url):
    return JobStore(redis.Redis.from_url(redis_url), ttl_s=600, results_maxlen=100)


def _job(store: JobStore, job_id: str, proof_type: str, input_json: str, partitions=2) -> None:
    assert store.create(job_id, digest=content_digest(proof_type, input_json),
                        proof_type=proof_type, partitions=partitions, priority="normal",
                        input_json=input_json) == "created"


def _phases(store: JobStore, job: str, partition: int, until: float, phases: list[str],
            seconds: float = 0.5) -> None:
    """Ended phases of one partition, back to back, the last ending at ``until``."""
    start = until - seconds * len(phases)
    for phase in phases:
        event = PhaseEvent(job, partition, "w1", "gpu0", "host", phase, start, start + seconds)
        store.redis.xadd(EVENTS_STREAM, event.fields())
        start += seconds


def _device(view: dict) -> dict:
    [device] = view["devices"]
    return device


def test_a_running_compute_phase_counts_as_busy_up_to_now(store, rng):
    """Before: two minutes into a compute phase the device showed ~0.5% busy (only ended
    compute phases counted)."""
    computing_s = rng.uniform(60, 180)
    print("computing for", computing_s, "s")
    _job(store, "job-a", "porep-demo", "{}")
    assert store.begin_partition("job-a", 0, max_attempts=3) == ("run", 1)
    _phases(store, "job-a", 0, time.time() - computing_s,
            ["queued", "synthesize", "mem_wait", "mem", "compute_wait"])
    view = snapshot(store)
    [unit] = view["jobs"][0]["units"]
    assert unit["phases"][-1]["phase"] == "compute" and unit["phases"][-1]["running"]
    window = view["window"][1] - view["window"][0]
    assert _device(view)["busy_share"] == pytest.approx(computing_s / window, abs=0.02)
    assert _device(view)["busy_share"] > 0.9


def test_a_cancelled_job_shows_its_partition_still_computing(store):
    """Before: a cancelled job showed nothing running while its worker kept computing until
    the phase ended."""
    _job(store, "job-c", "porep-demo", "{}")
    for partition in (0, 1):
        assert store.begin_partition("job-c", partition, max_attempts=3)[0] == "run"
    _phases(store, "job-c", 0, time.time() - 30, ["queued", "synthesize", "mem_wait", "mem",
                                                    "compute_wait"])
    assert store.cancel("job-c") == "cancelled"
    time.sleep(0.01)
    # partition 1 reached its next phase after the cancel: it stopped there
    _phases(store, "job-c", 1, time.time(), ["queued", "synthesize"], seconds=0.001)
    [job] = snapshot(store)["jobs"]
    assert job["status"] == "cancelled" and job["still_running"] == 1
    running = {u["partition"]: u["phases"][-1] for u in job["units"]}
    assert running[0]["phase"] == "compute" and running[0].get("running")
    assert not running[1].get("running")
    assert _device(snapshot(store))["busy"][-1][2:] == ["job-c", 0]


def test_filecoin_jobs_carry_their_sector_and_miner(store, rng):
    sector, miner = rng.randrange(1 << 40), rng.randrange(1 << 20)
    print("sector", sector, "miner", miner)
    c1 = (f'{{"key":"official","c1":{{"SectorNum":{sector},"Phase1Out":"{"A" * 5000}",'
          f'"SectorSize":2048,"MinerId":{miner}}}}}')
    _job(store, "intake-1733347200000-0", "filecoin", c1)
    _job(store, "intake-1733347200000-1", "porep-demo", '{"sector_size":2048}')
    jobs = {job["job"]: job for job in snapshot(store)["jobs"]}
    assert (jobs["intake-1733347200000-0"]["sector"],
            jobs["intake-1733347200000-0"]["miner"]) == (sector, miner)
    assert "sector" not in jobs["intake-1733347200000-1"]
    assert store.cancel("intake-1733347200000-0") == "cancelled"  # its input is dropped
    assert store.redis.exists("proofq:job:intake-1733347200000-0:input") == 0
    jobs = {job["job"]: job for job in snapshot(store)["jobs"]}
    assert jobs["intake-1733347200000-0"]["sector"] == sector  # remembered by the view
