"""One renewal thread per worker process for every lease it holds (locks, VRAM reservations,
the setup lock).

A lease is only as good as its renewals: the thread renews everything registered each
``period_s``. A renewal that Redis refuses (the lease was lost) or that has not succeeded
within the lease's own length marks the lease lost; the pipeline checks that flag before it
touches the GPU again. Leases therefore survive a long kernel as long as the process lives,
and expire on their own when it dies.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger(__name__)


class Renewable(Protocol):
    def renew(self) -> None:
        """Extend the lease in Redis; mark itself lost if Redis says it is gone."""


#: While renewals keep failing (Redis down, or refusing writes), one warning per this long.
LOG_EVERY_S = 30.0


class Heartbeat:
    def __init__(self, period_s: float, name: str = "proofq-heartbeat") -> None:
        self.period_s = period_s
        self._failures = 0
        self._logged_at: float | None = None
        self._items: set[Renewable] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def register(self, item: Renewable) -> None:
        with self._lock:
            self._items.add(item)

    def unregister(self, item: Renewable) -> None:
        with self._lock:
            self._items.discard(item)

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            with self._lock:
                items = list(self._items)
            for item in items:
                try:
                    item.renew()
                except Exception as exc:  # Redis unreachable: the lease's own deadline decides
                    self._failed(item, exc)

    def _failed(self, item: Renewable, exc: Exception) -> None:
        """A warning, at most one per ``LOG_EVERY_S`` (counting the ones not logged)."""
        self._failures += 1
        now = time.monotonic()
        if self._logged_at is None or now - self._logged_at >= LOG_EVERY_S:
            log.warning("lease renewal failed for %r (%d failures since the last line): %s",
                        item, self._failures, " ".join(str(exc).split())[:200])
            self._logged_at, self._failures = now, 0

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.period_s + 1)


class Lease:
    """A lease held in Redis, renewed by the heartbeat: the one renewal rule for GPU locks,
    VRAM reservations and the setup lock.

    ``extend`` asks Redis to extend it and says whether Redis still had it. The local
    deadline counts from when a request was *sent*, so it never outlives the lease Redis
    holds; a renewal refused, or none confirmed within ``lease_s`` (a stalled process, Redis
    unreachable), marks it lost, and whoever holds it checks before acting on it again.
    """

    def __init__(self, lease_s: float, sent_at: float, extend: Callable[[], bool],
                 what: str) -> None:
        self.lease_s = lease_s
        self._valid_until = sent_at + lease_s
        self._extend = extend
        self._what = what
        self._lost_reason: str | None = None

    def renew(self) -> None:
        sent = time.monotonic()
        if self._extend():
            self._valid_until = sent + self.lease_s
        else:
            self.mark_lost(f"{self._what} (expired or taken)")

    def mark_lost(self, reason: str) -> None:
        self._lost_reason = self._lost_reason or reason

    @property
    def lost_reason(self) -> str | None:
        """Why the lease is gone, or None while it is valid."""
        if self._lost_reason is None and time.monotonic() >= self._valid_until:
            return f"not renewed within its {self.lease_s:g} s lease"
        return self._lost_reason
