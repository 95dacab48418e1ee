"""Phase events on ``proofq:events`` and the worker's Prometheus metrics (docs/ARCHITECTURE.md §6).

Every phase of a partition appends one stream entry when it ends::

    job, partition, worker, gpu, host, phase, start, end, fence [, path] [, error]

``start``/``end`` are Unix seconds (float, as text); ``fence`` is the fencing token of the
lock held during the phase (0 for lock-free phases); ``path`` is ``prestage`` or ``stream``
on mem/compute events; ``error`` is set when the phase failed. The stream is capped at
``events_maxlen`` (approximate trimming, which Redis does cheaply).

Histograms are process-wide (prometheus-client's default registry); ``serve_metrics``
exposes them over HTTP when a port is configured.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

import redis
from prometheus_client import Counter, Histogram, start_http_server

log = logging.getLogger(__name__)

EVENTS_STREAM = "proofq:events"

PHASES = ("queued", "synthesize", "mem_wait", "mem", "compute_wait", "compute", "finalize",
          "verify")

# From a millisecond hand-over to multi-hour partitions at 2^27 constraints.
_BUCKETS = (0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600,
            1800, 3600, 7200, float("inf"))

PHASE_SECONDS = Histogram("proofq_phase_seconds", "duration of a partition phase",
                          ["phase"], buckets=_BUCKETS)
LOCK_WAIT_SECONDS = Histogram("proofq_lock_wait_seconds", "time queued for a GPU lock",
                              ["lock"], buckets=_BUCKETS)
LOCK_HOLD_SECONDS = Histogram("proofq_lock_hold_seconds", "time a GPU lock was held",
                              ["lock"], buckets=_BUCKETS)
STAGING = Counter("proofq_staging_total", "how partitions got their inputs onto the device",
                  ["path"])
PARTITION_FAILURES = Counter("proofq_partition_failures_total", "failed partitions",
                             ["phase", "transient"])


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


class EventLog:
    """Appends phase events and feeds the phase histogram."""

    def __init__(self, client: redis.Redis, maxlen: int) -> None:
        self.client = client
        self.maxlen = maxlen

    def record(self, event: PhaseEvent) -> None:
        PHASE_SECONDS.labels(phase=event.phase).observe(max(0.0, event.seconds))
        self.client.xadd(EVENTS_STREAM, event.fields(), maxlen=self.maxlen, approximate=True)


def read_events(client: redis.Redis, *, job: str | None = None) -> list[PhaseEvent]:
    """All events still in the stream (oldest first), optionally of one job."""
    events = [PhaseEvent.from_fields(fields) for _, fields in client.xrange(EVENTS_STREAM)]
    return [e for e in events if job is None or e.job == job]


def serve_metrics(port: int, address: str = "127.0.0.1", attempts: int = 64) -> WSGIServer:
    """Serve /metrics on ``address`` (loopback unless configured: the endpoint has no
    login), on the first free port at or above ``port``; return the server (its owner shuts
    it down).

    Several worker processes on one host share one configured port this way, each taking
    the next free one.
    """
    for candidate in range(port, port + attempts):
        try:
            server, _ = start_http_server(candidate, addr=address)
        except OSError:
            continue
        log.info("metrics on http://%s:%d/metrics", address, candidate)
        return server
    raise OSError(f"metrics_port: no free port in {port}..{port + attempts - 1}")
