"""Writing phase events to ``proofq:events`` (their fields: ``workers.phase_events``) and
the worker's Prometheus metrics (docs/ARCHITECTURE.md §6).

The stream is capped at ``events_maxlen`` (approximate trimming, which Redis does cheaply).

Histograms are process-wide (prometheus-client's default registry); ``serve_metrics``
exposes them over HTTP when a port is configured.
"""

from __future__ import annotations

import logging
from wsgiref.simple_server import WSGIServer

import redis
from prometheus_client import Counter, Histogram, start_http_server

from workers.phase_events import EVENTS_STREAM, PHASES, PhaseEvent, read_events

__all__ = ["EVENTS_STREAM", "PHASES", "PhaseEvent", "read_events", "EventLog", "serve_metrics"]

log = logging.getLogger(__name__)

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
CACHE_RETURNED = Counter("proofq_cache_returned_total", "compute phases that gave their "
                         "scratch back to the device (no room in the ledger to keep it)")
PARTITION_FAILURES = Counter("proofq_partition_failures_total", "failed partitions",
                             ["phase", "transient"])


class EventLog:
    """Appends phase events and feeds the phase histogram."""

    def __init__(self, client: redis.Redis, maxlen: int, stream: str = EVENTS_STREAM) -> None:
        self.client = client
        self.maxlen = maxlen
        self.stream = stream

    def record(self, event: PhaseEvent) -> None:
        PHASE_SECONDS.labels(phase=event.phase).observe(max(0.0, event.seconds))
        self.client.xadd(self.stream, event.fields(), maxlen=self.maxlen, approximate=True)


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
