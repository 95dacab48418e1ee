"""A batch of identical proof jobs with a bounded number in flight, and its statistics.

Times come from the job state (Redis's clock): ``queue`` is submission → first partition
started, ``prove`` is first partition started → last partition proved, and ``wall`` is
submission → the job's end, so they compare across hosts and include assembly.

Throughput is reported twice: over the whole batch, and in steady state — from the first
job's end to the last one's, which leaves out what only the first job pays (worker start,
key load or setup, bases made resident). Jobs per minute and partition proofs per minute
are separate figures: a job of P partitions is P proofs.

A batch never waits on a queue nobody reads: before submitting, and again whenever no job
has moved for ``stall_s``, it asks the workers which queues they consume and gives up with
``NoWorkers`` if a queue the jobs need has no consumer.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client.api import Client
from snark.registry import DEFAULT_TYPE, plugin
from tasks.application import GPU_QUEUE, JOBS_QUEUE
from tasks.jobs import JobState

_POLL_S = 0.05
#: Without any job moving for this long, the batch asks again whether workers are there.
STALL_S = 30.0


class NoWorkers(RuntimeError):
    """No worker consumes a queue the batch's jobs need: they would wait for ever."""


def check_workers(client: Client, timeout_s: float = 2.0) -> None:
    """Raise ``NoWorkers`` unless some worker consumes each of the jobs' queues."""
    replies = client.app.control.inspect(timeout=timeout_s).active_queues() or {}
    consumed = {queue["name"] for queues in replies.values() for queue in queues}
    missing = [q for q in (JOBS_QUEUE, GPU_QUEUE) if q not in consumed]
    if not replies:
        raise NoWorkers(f"no worker answers on {client.redis_url}: start one "
                        f"(celery -A tasks worker --gpu N), or the jobs wait for ever")
    if missing:
        raise NoWorkers(f"no worker consumes the {' and '.join(map(repr, missing))} queue"
                        f"{'s' if len(missing) > 1 else ''} on {client.redis_url} "
                        f"({len(replies)} worker(s) answer): the jobs would wait for ever")


@dataclass(frozen=True)
class Outcome:
    index: int            # completion order, 1-based
    job_id: str
    ok: bool
    wall_s: float
    prove_s: float | None
    queue_s: float | None
    error: str | None
    partitions: int
    finished: float       # Redis time of the job's end

    @classmethod
    def from_state(cls, index: int, state: JobState) -> "Outcome":
        """The outcome of a job that has ended (``state.finished`` set)."""
        if state.finished is None:
            raise ValueError(f"job {state.job_id} has not ended ({state.status})")
        return cls(index=index, job_id=state.job_id, ok=state.status == "done",
                   wall_s=state.finished - state.created, prove_s=state.prove_s,
                   queue_s=state.queue_s, error=None if state.status == "done" else state.error,
                   partitions=state.partitions, finished=state.finished)

    def line(self, total: int) -> str:
        if self.ok:
            return (f"[{self.index}/{total}] OK — {self.wall_s:.1f}s "
                    f"(prove={_ms(self.prove_s)} ms, queue={_ms(self.queue_s)} ms)")
        return f"[{self.index}/{total}] FAILED — {self.wall_s:.1f}s: {self.error}"

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "job": self.job_id, "ok": self.ok, "wall_s": self.wall_s,
                "prove_s": self.prove_s, "queue_s": self.queue_s, "error": self.error,
                "partitions": self.partitions, "finished": self.finished}


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def run_batch(client: Client, job_input: Any, *, count: int, in_flight: int,
              priority: str = "normal", proof_type: str = DEFAULT_TYPE,
              on_outcome: Callable[[Outcome], None] | None = None,
              check: Callable[[], None] | None = None,
              on_poll: Callable[[int, list[JobState]], None] | None = None,
              stall_s: float = STALL_S) -> tuple[list[Outcome], float]:
    """Submit ``count`` jobs, at most ``in_flight`` unfinished at once; outcomes and total s.

    ``check`` runs on every poll and may raise to abandon the batch (a dead worker);
    ``on_poll(ended, unfinished states)`` sees each poll (a status line);
    ``NoWorkers`` if no worker consumes the jobs' queues, at the start or after a stall.
    """
    check_workers(client)
    started = time.monotonic()
    pending: list[str] = []
    outcomes: list[Outcome] = []
    submitted = 0
    seen: dict[str, tuple[str, int]] = {}
    moved = time.monotonic()
    while len(outcomes) < count:
        while submitted < count and len(pending) < in_flight:
            pending.append(client.submit(job_input, priority=priority, proof_type=proof_type))
            submitted += 1
        unfinished: list[JobState] = []
        for job_id in list(pending):
            state = client.status(job_id)
            if seen.get(job_id) != (state.status, state.parts_done):
                seen[job_id] = (state.status, state.parts_done)
                moved = time.monotonic()
            if state.terminal:
                pending.remove(job_id)
                del seen[job_id]
                outcome = Outcome.from_state(len(outcomes) + 1, state)
                outcomes.append(outcome)
                if on_outcome is not None:
                    on_outcome(outcome)
            else:
                unfinished.append(state)
        if on_poll is not None:
            on_poll(len(outcomes), unfinished)
        if check is not None:
            check()
        if time.monotonic() - moved > stall_s:
            check_workers(client)  # still consumed: a long step (a key setup); wait on
            moved = time.monotonic()
        time.sleep(_POLL_S)
    return outcomes, time.monotonic() - started


@dataclass(frozen=True)
class Rate:
    """Jobs and partition proofs per minute over one stretch of time."""

    seconds: float
    jobs: int
    partitions: int
    unit: str = "partition proofs"  # what a job's units are: circom's are plain proofs

    @property
    def jobs_per_min(self) -> float:
        return 60.0 * self.jobs / self.seconds if self.seconds > 0 else 0.0

    @property
    def partitions_per_min(self) -> float:
        return 60.0 * self.partitions / self.seconds if self.seconds > 0 else 0.0

    def text(self) -> str:
        s_per_job = f"{self.seconds / self.jobs:.2f}" if self.jobs else "-"
        jobs = f"{self.jobs} job" + ("" if self.jobs == 1 else "s")
        return (f"{self.jobs_per_min:.2f} jobs/min, {self.partitions_per_min:.1f} {self.unit}"
                f"/min ({s_per_job} s/job, {jobs} in {self.seconds:.1f}s)")

    def to_json(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "jobs": self.jobs, "partitions": self.partitions,
                "jobs_per_min": self.jobs_per_min,
                "partitions_per_min": self.partitions_per_min}


@dataclass(frozen=True)
class Summary:
    total_s: float
    completed: int
    failed: int
    wall: tuple[float, float, float] | None   # avg, min, max over completed proofs
    prove: tuple[float, float, float] | None
    total: Rate
    steady: Rate | None  # first completed job's end → last one's; None below two jobs

    @classmethod
    def of(cls, outcomes: list[Outcome], total_s: float, unit: str = "partition proofs"
           ) -> "Summary":
        """``unit`` names a job's units of work in the rates (``unit_of``)."""
        done = [o for o in outcomes if o.ok]
        ends = sorted(done, key=lambda o: o.finished)
        steady = None if len(ends) < 2 else Rate(
            ends[-1].finished - ends[0].finished, len(ends) - 1,
            sum(o.partitions for o in ends[1:]), unit)
        return cls(total_s=total_s, completed=len(done), failed=len(outcomes) - len(done),
                   wall=_spread([o.wall_s for o in done]),
                   prove=_spread([o.prove_s for o in done if o.prove_s is not None]),
                   total=Rate(total_s, len(done), sum(o.partitions for o in done), unit),
                   steady=steady)

    @property
    def proofs_per_min(self) -> float:
        """Jobs (complete proofs, all partitions) per minute over the whole batch."""
        return self.total.jobs_per_min

    @property
    def s_per_proof(self) -> float | None:
        return self.total_s / self.completed if self.completed else None

    def lines(self) -> list[str]:
        return ["=== Batch Summary ===",
                f"total time: {self.total_s:.1f}s",
                f"completed: {self.completed}",
                f"failed: {self.failed}",
                f"wall avg/min/max: {_fmt(self.wall)} s",
                f"prove avg/min/max: {_fmt(self.prove)} s",
                f"throughput, whole batch: {self.total.text()}",
                "throughput, steady state (after the first job's end): "
                + ("- (needs two completed jobs)" if self.steady is None else self.steady.text())]

    def to_json(self) -> dict[str, Any]:
        def spread(values):
            return None if values is None else dict(zip(("avg", "min", "max"), values))
        return {"total_s": self.total_s, "completed": self.completed, "failed": self.failed,
                "wall_s": spread(self.wall), "prove_s": spread(self.prove),
                "proofs_per_min": self.proofs_per_min, "s_per_proof": self.s_per_proof,
                "total": self.total.to_json(),
                "steady": None if self.steady is None else self.steady.to_json()}


def unit_of(proof_type: str) -> str:
    """What the rates call a job's units, as its type names them (a circom job's witnesses
    are whole proofs each, porep's and Filecoin's partitions are partition proofs)."""
    return f"{plugin(proof_type).unit}s"


def _spread(values: list[float]) -> tuple[float, float, float] | None:
    return (statistics.fmean(values), min(values), max(values)) if values else None


def _fmt(spread: tuple[float, float, float] | None) -> str:
    return "-" if spread is None else "/".join(f"{v:.2f}" for v in spread)
