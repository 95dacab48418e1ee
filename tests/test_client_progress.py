"""The waiting commands' status line: its words, from job states and phase events."""

from __future__ import annotations

import dataclasses

from client.progress import StatusLine, job_line
from tasks.jobs import JobState, JobStatus
from workers.phase_events import PHASES, PhaseEvent, current_phases


def _state(**changes) -> JobState:
    base = JobState(job_id="j1", status=JobStatus.PROVING, proof_type="porep-demo",
                    partitions=4, priority="normal", parts_done=1, created=0.0, started=1.0,
                    proved=None, finished=None, error=None)
    return dataclasses.replace(base, **changes)


def _event(partition: int, phase: str, error: str = "", job: str = "j1") -> PhaseEvent:
    return PhaseEvent(job, partition, "w@h/1", "cpu.0", "h", phase, 0.0, 1.0, error=error)


def test_each_partition_is_in_the_phase_after_its_last_ended_one(rng):
    ends = {p: rng.randrange(len(PHASES) - 1) for p in range(5)}
    events = [_event(p, PHASES[i]) for p, last in ends.items() for i in range(last + 1)]
    events += [_event(9, "verify"), _event(7, "compute", error="out of memory"),
               _event(0, "compute", job="other")]
    events.sort(key=lambda e: PHASES.index(e.phase))  # partitions interleaved, each in order
    assert current_phases(events, "j1") == {**{p: PHASES[i + 1] for p, i in ends.items()},
                                           7: "compute failed"}


def test_the_line_names_stage_partitions_and_what_runs():
    phases = {0: "compute", 2: "compute_wait", 3: "compute_wait"}
    assert job_line(_state(), phases, 12.4) == (
        "job j1: proving 1/4 partitions · compute 1, compute_wait 2 · 12s")
    assert job_line(_state(status=JobStatus.QUEUED, parts_done=0), {}, 3) == (
        "job j1: queued 0/4 partitions · 3s")
    assert job_line(_state(status=JobStatus.QUEUED, parts_done=0, setup=5.0), {}, 61) == (
        "job j1: setup: making its proving key · 61s")


def test_outside_a_terminal_nothing_is_drawn_and_output_stays_plain(redis_url, capsys):
    import redis

    line = StatusLine(redis.Redis.from_url(redis_url))
    assert not line.enabled  # pytest's captured stderr is no terminal
    line.job(_state())
    line.batch(1, 3, [_state()])
    line.echo("[1/3] OK")
    line.close()
    captured = capsys.readouterr()
    assert captured.out == "[1/3] OK\n" and captured.err == ""
