"""A batch of identical proof jobs with a bounded number in flight, and its statistics.

Times come from the job state (Redis's clock): ``queue`` is submission → first partition
started, ``prove`` is first partition started → last partition proved, and ``wall`` is
submission → the job's end, so they compare across hosts and include assembly.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from client.api import Client
from tasks.jobs import JobState

_POLL_S = 0.05


@dataclass(frozen=True)
class Outcome:
    index: int            # completion order, 1-based
    job_id: str
    ok: bool
    wall_s: float
    prove_s: float | None
    queue_s: float | None
    error: str | None

    @classmethod
    def from_state(cls, index: int, state: JobState) -> "Outcome":
        return cls(index=index, job_id=state.job_id, ok=state.status == "done",
                   wall_s=state.finished - state.created, prove_s=state.prove_s,
                   queue_s=state.queue_s, error=None if state.status == "done" else state.error)

    def line(self, total: int) -> str:
        if self.ok:
            return (f"[{self.index}/{total}] OK — {self.wall_s:.1f}s "
                    f"(prove={_ms(self.prove_s)} ms, queue={_ms(self.queue_s)} ms)")
        return f"[{self.index}/{total}] FAILED — {self.wall_s:.1f}s: {self.error}"

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "job": self.job_id, "ok": self.ok, "wall_s": self.wall_s,
                "prove_s": self.prove_s, "queue_s": self.queue_s, "error": self.error}


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f}"


def run_batch(client: Client, job_input: Any, *, count: int, in_flight: int,
              priority: str = "normal", proof_type: str = "porep",
              on_outcome: Callable[[Outcome], None] | None = None,
              check: Callable[[], None] | None = None) -> tuple[list[Outcome], float]:
    """Submit ``count`` jobs, at most ``in_flight`` unfinished at once; outcomes and total s.

    ``check`` runs on every poll and may raise to abandon the batch (a dead worker).
    """
    started = time.monotonic()
    pending: list[str] = []
    outcomes: list[Outcome] = []
    submitted = 0
    while len(outcomes) < count:
        while submitted < count and len(pending) < in_flight:
            pending.append(client.submit(job_input, priority=priority, proof_type=proof_type))
            submitted += 1
        for job_id in list(pending):
            state = client.status(job_id)
            if state.terminal:
                pending.remove(job_id)
                outcome = Outcome.from_state(len(outcomes) + 1, state)
                outcomes.append(outcome)
                if on_outcome is not None:
                    on_outcome(outcome)
        if check is not None:
            check()
        time.sleep(_POLL_S)
    return outcomes, time.monotonic() - started


@dataclass(frozen=True)
class Summary:
    total_s: float
    completed: int
    failed: int
    wall: tuple[float, float, float] | None   # avg, min, max over completed proofs
    prove: tuple[float, float, float] | None

    @classmethod
    def of(cls, outcomes: list[Outcome], total_s: float) -> "Summary":
        done = [o for o in outcomes if o.ok]
        return cls(total_s=total_s, completed=len(done), failed=len(outcomes) - len(done),
                   wall=_spread([o.wall_s for o in done]),
                   prove=_spread([o.prove_s for o in done if o.prove_s is not None]))

    @property
    def proofs_per_min(self) -> float:
        return 60.0 * self.completed / self.total_s if self.completed else 0.0

    @property
    def s_per_proof(self) -> float | None:
        return self.total_s / self.completed if self.completed else None

    def lines(self) -> list[str]:
        s_per = "-" if self.s_per_proof is None else f"{self.s_per_proof:.2f}"
        return ["=== Batch Summary ===",
                f"total time: {self.total_s:.1f}s",
                f"completed: {self.completed}",
                f"failed: {self.failed}",
                f"wall avg/min/max: {_fmt(self.wall)} s",
                f"prove avg/min/max: {_fmt(self.prove)} s",
                f"throughput: {self.proofs_per_min:.2f} proofs/min ({s_per} s/proof)"]

    def to_json(self) -> dict[str, Any]:
        def spread(values):
            return None if values is None else dict(zip(("avg", "min", "max"), values))
        return {"total_s": self.total_s, "completed": self.completed, "failed": self.failed,
                "wall_s": spread(self.wall), "prove_s": spread(self.prove),
                "proofs_per_min": self.proofs_per_min, "s_per_proof": self.s_per_proof}


def _spread(values: list[float]) -> tuple[float, float, float] | None:
    return (statistics.fmean(values), min(values), max(values)) if values else None


def _fmt(spread: tuple[float, float, float] | None) -> str:
    return "-" if spread is None else "/".join(f"{v:.2f}" for v in spread)
