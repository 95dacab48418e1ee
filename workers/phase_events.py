"""The ``proofq:events`` stream's entries: one per partition phase, appended when it ends.

Its fields::

    job, partition, worker, gpu, host, phase, start, end, fence [, path] [, error]

``start``/``end`` are Unix seconds (float, as text); ``fence`` is the fencing token of the
lock held during the phase (0 for lock-free phases); ``path`` is ``prestage`` or ``stream``
on mem/compute events; ``error`` is set when the phase failed.  Readers (``proofq view``,
the waiting commands' status line) import this module alone: no metrics, no worker code.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import redis

from config.redis_keys import DEFAULT_KEYS

EVENTS_STREAM = DEFAULT_KEYS.events  # the default namespace's (config.redis_keys)

class Phase(StrEnum):
    """A partition's phases, in order (docs/ARCHITECTURE.md §2): the words of the events,
    the metrics' labels and the job view's page (substituted into it, ``client.view``)."""

    QUEUED = "queued"
    SYNTHESIZE = "synthesize"
    MEM_WAIT = "mem_wait"
    MEM = "mem"
    COMPUTE_WAIT = "compute_wait"
    COMPUTE = "compute"
    FINALIZE = "finalize"
    VERIFY = "verify"


PHASES = tuple(Phase)
#: The phases spent waiting: for a worker, for the memory lock, for the compute lock.
WAITS = (Phase.QUEUED, Phase.MEM_WAIT, Phase.COMPUTE_WAIT)


@dataclass(frozen=True)
class PhaseEvent:
    job: str
    partition: int
    worker: str
    gpu: str
    host: str
    phase: str
    start: float
    end: float
    fence: int = 0
    path: str = ""
    error: str = ""

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def fields(self) -> dict[str, str]:
        out = {"job": self.job, "partition": str(self.partition), "worker": self.worker,
               "gpu": self.gpu, "host": self.host, "phase": self.phase,
               "start": repr(self.start), "end": repr(self.end), "fence": str(self.fence)}
        if self.path:
            out["path"] = self.path
        if self.error:
            out["error"] = self.error
        return out

    @classmethod
    def from_fields(cls, raw: dict[bytes, bytes]) -> "PhaseEvent":
        f = {k.decode(): v.decode() for k, v in raw.items()}
        return cls(f["job"], int(f["partition"]), f["worker"], f["gpu"], f.get("host", ""),
                   f["phase"], float(f["start"]), float(f["end"]), int(f.get("fence", 0)),
                   f.get("path", ""), f.get("error", ""))


def read_events(client: redis.Redis, *, job: str | None = None,
                stream: str = EVENTS_STREAM) -> list[PhaseEvent]:
    """All events still in the stream (oldest first), optionally of one job."""
    events = [PhaseEvent.from_fields(fields) for _, fields in client.xrange(stream)]
    return [e for e in events if job is None or e.job == job]


def recent_events(client: redis.Redis, count: int,
                  stream: str = EVENTS_STREAM) -> list[PhaseEvent]:
    """The newest ``count`` events (oldest first): what a live view reads each refresh."""
    return [PhaseEvent.from_fields(fields)
            for _, fields in reversed(client.xrevrange(stream, count=count))]


def current_phases(events: list[PhaseEvent], job: str) -> dict[int, str]:
    """Each unfinished partition's phase now, from its last ended one (a partition whose
    last phase failed reads ``<phase> failed``; one past ``verify`` is done, and left out)."""
    last: dict[int, PhaseEvent] = {}
    for event in events:
        if event.job == job:
            last[event.partition] = event
    now: dict[int, str] = {}
    for partition, event in last.items():
        if event.error:
            now[partition] = f"{event.phase} failed"
        elif event.phase in PHASES and event.phase != PHASES[-1]:
            now[partition] = PHASES[PHASES.index(event.phase) + 1]
    return now
