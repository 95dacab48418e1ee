"""Batch report lines and statistics, from job states as the pipeline records them."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from client.batch import Outcome, Summary, unit_of
from tasks.jobs import JobState


_IDS = itertools.count(1)


def _state(status: str, created: float, started: float | None, proved: float | None,
           finished: float, error: str | None = None) -> JobState:
    return JobState(job_id=f"job-{next(_IDS)}", status=status,
                    proof_type="porep-demo", partitions=2, priority="normal",
                    parts_done=2 if status == "done" else 1, created=created, started=started,
                    proved=proved, finished=finished, error=error)


def test_lines_report_wall_prove_and_queue_or_the_failure():
    ok = Outcome.from_state(1, _state("done", 100.0, 100.25, 102.0, 102.5))
    assert ok.line(3) == "[1/3] OK — 2.5s (prove=1750 ms, queue=250 ms)"
    failed = Outcome.from_state(2, _state("failed", 100.0, 100.5, None, 101.0,
                                          "partition 1: compute: out of device memory"))
    assert failed.line(3) == ("[2/3] FAILED — 1.0s: partition 1: compute: "
                              "out of device memory")
    never_started = Outcome.from_state(3, _state("cancelled", 100.0, None, None, 100.1,
                                                 "cancelled by request"))
    assert never_started.line(3) == "[3/3] FAILED — 0.1s: cancelled by request"


def test_summary_spreads_over_completed_proofs_only(rng):
    walls = [rng.uniform(1, 10) for _ in range(4)]
    proves = [w / 2 for w in walls]
    outcomes = [Outcome.from_state(i + 1, _state("done", 0.0, w - p, w - 0.01, w))
                for i, (w, p) in enumerate(zip(walls, proves))]
    outcomes.append(Outcome.from_state(5, _state("failed", 0.0, 1.0, None, 50.0, "x: y")))
    summary = Summary.of(outcomes, total_s=30.0)
    assert (summary.completed, summary.failed) == (4, 1)
    assert summary.wall[1:] == (min(walls), max(walls))
    assert abs(summary.wall[0] - sum(walls) / 4) < 1e-9
    assert abs(summary.prove[2] - (max(proves) - 0.01)) < 1e-9
    lines = summary.lines()
    assert lines[:4] == ["=== Batch Summary ===", "total time: 30.0s", "completed: 4",
                         "failed: 1"]
    # 4 jobs of 2 partitions in 30 s; steady state: the 3 after the first end, between
    # the first and the last end.
    assert lines[-2] == ("throughput, whole batch: 8.00 jobs/min, 16.0 partition proofs/min "
                         "(7.50 s/job, 4 jobs in 30.0s)")
    steady_s = max(walls) - min(walls)
    assert lines[-1] == ("throughput, steady state (after the first job's end): "
                         f"{180 / steady_s:.2f} jobs/min, {360 / steady_s:.1f} partition "
                         f"proofs/min ({steady_s / 3:.2f} s/job, 3 jobs in {steady_s:.1f}s)")
    assert summary.to_json()["steady"]["partitions"] == 6


def test_a_batch_with_no_completed_proof_still_summarises():
    summary = Summary.of([Outcome.from_state(1, _state("failed", 0, None, None, 1, "a: b"))],
                         total_s=1.0)
    assert summary.wall is None and summary.s_per_proof is None
    assert "wall avg/min/max: - s" in summary.lines()
    assert summary.to_json()["completed"] == 0
    assert summary.lines()[-1].endswith("- (needs two completed jobs)")


def test_rates_say_one_job_and_name_circom_units_plain_proofs(rng):
    partitions = rng.randrange(1, 9)
    one = [dataclasses.replace(Outcome.from_state(1, _state("done", 0.0, 1.0, 2.0, 3.0)),
                               partitions=partitions)]
    porep = Summary.of(one, total_s=6.0).lines()[-2]
    assert porep.endswith(f"{10 * partitions:.1f} partition proofs/min (6.00 s/job, "
                          "1 job in 6.0s)")
    circom = Summary.of(one, total_s=6.0, unit=unit_of("circom")).lines()[-2]
    assert f"{10 * partitions:.1f} proofs/min" in circom and "partition" not in circom
    assert unit_of("filecoin") == "partition proofs"


def test_a_batch_without_workers_fails_at_once_naming_the_queue(redis_url):
    from client.api import Client
    from client.batch import NoWorkers, run_batch
    from config.settings import load_settings

    with Client(redis_url, load_settings(redis_url=redis_url)) as client:
        with pytest.raises(NoWorkers, match="no worker answers on redis://"):
            run_batch(client, "{}", count=1, in_flight=1)
        assert not client.store.redis.keys("proofq:job:*")  # nothing was submitted
