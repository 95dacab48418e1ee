"""The scale bench's sector records: what a Filecoin run reports in the sector goals' shape."""

from __future__ import annotations

import random

from bench import scale


def _run(jobs: int, failures: list[str], idle_walls: list[float] | None,
         steady: float | None = 3.1) -> dict:
    idle = None if idle_walls is None else {"wall_s": idle_walls, "failures": [],
                                            "accept_median_ms": 1250.0}
    return {"jobs": jobs, "failures": failures, "compute_median_s": 1.8,
            "jobs_per_min": steady, "jobs_per_min_total": 2.5, "gpu_busy": {"0": 0.99},
            "idle": idle}


def _result(runs: dict) -> dict:
    return {"device": "NVIDIA H200", "commit": "abc1234", "command": "python bench/scale.py",
            "concurrency_per_gpu": 2, "runs": runs, "key": {"setup_s": 95.0}}


def test_a_record_per_gpu_count_with_the_idle_median_and_verified_only_without_failures():
    seed = random.randrange(1 << 32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    walls = [round(rng.uniform(10, 20), 3) for _ in range(3)]
    records = scale.sector_records(_result({"1": _run(4, [], walls),
                                            "2": _run(8, ["job x: failed"], None)}))
    one, two = records
    assert one["gpus"] == 1 and one["workers"] == 2 and one["partition_gpu_s"] == 1.8
    assert one["created_to_verified_s"] == sorted(walls)[1]  # the idle sectors' median
    assert one["sector_wall_s"] == 1.25 + sorted(walls)[1]  # the request's accept first
    assert one["verified"] is True and one["sectors"] == 4 + 3
    assert one["key_setup_s"] == 95.0 and one["scratch_bytes"] is None
    assert two["sector_wall_s"] is None  # not run idle
    assert two["verified"] is False  # a failed sector: not every proof came back verified


def test_no_sector_done_is_not_verified():
    [record] = scale.sector_records(_result({"1": _run(0, [], [])}))
    assert record["verified"] is False and record["sector_wall_s"] is None


def test_the_rate_is_the_whole_window_where_no_steady_state_was_reached():
    steady, whole = scale.sector_records(_result({"1": _run(9, [], None),
                                                  "2": _run(3, [], None, steady=None)}))
    assert (steady["sectors_per_min"], steady["sectors_per_min_over"]) == (3.1, "steady state")
    assert (whole["sectors_per_min"], whole["sectors_per_min_over"]) == (2.5, "whole window")


def test_a_timeline_splits_each_wall_at_its_compute_phases():
    from workers.phase_events import PhaseEvent

    def compute(job: str, start: float, end: float) -> PhaseEvent:
        return PhaseEvent(job, 0, "w", "0", "h", "compute", start, end)

    done = [{"job": "a", "finished": 110.0, "wall_s": 10.0},    # created at 100
            {"job": "b", "finished": 220.0, "wall_s": 20.0}]    # created at 200
    computes = [compute("a", 102.0, 104.0), compute("a", 104.5, 107.0),
                compute("b", 201.0, 215.0)]
    assert scale.timeline(done, computes) == {
        "to_first_compute_s": 1.5, "compute_s": 9.25, "between_computes_s": 0.25,
        "after_last_compute_s": 4.0}
    assert scale.timeline(done, []) is None


def test_every_sector_record_carries_the_goal_fields_first():
    from bench.sector_goals import FIELDS

    [record] = scale.sector_records(_result({"1": _run(2, [], [30.0])}))
    assert tuple(record)[:len(FIELDS)] == FIELDS
    assert record["keygen_points_per_s"] is None and record["scratch_bytes"] is None
    assert record["partition_gpu_s"] is not None and record["verified"] is True
