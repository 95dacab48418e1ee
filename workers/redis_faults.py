"""A Redis that answers but refuses: out of memory, a read-only replica, an ACL refusal.

These are not connection errors, so neither redis-py nor Celery waits them out: left alone,
Celery's consumer dies on them and a task meeting one runs again at once, thousands of times
a second. Here they are named (``refuses_writes``), waited out with a doubling pause and a
log line at most every ``log_every_s`` (``Backoff``), and kept away from the door: a
producer refuses new jobs while Redis's memory is above a high-water mark of its
``maxmemory`` (``MemoryGate``), long before writes start failing.
"""

from __future__ import annotations

import logging
import re
import time

import redis

#: The error replies that mean "this Redis does not take writes now": redis-py's classes
#: for OOM (maxmemory with noeviction), READONLY (a replica) and NOPERM (the ACL user's
#: rights), and the codes wherever they stand in a message: MISCONF (persistence failing)
#: and NOREPLICAS (min-replicas not met) keep theirs, a pipeline puts "Command # n (…)
#: caused error: " before the text, and a Lua script's refused call comes back as a plain
#: ResponseError, "Error running script (…): @user_script:25: -OOM command not allowed …".
REFUSAL_CLASSES = (redis.exceptions.OutOfMemoryError, redis.exceptions.ReadOnlyError,
                   redis.exceptions.NoPermissionError)
_REFUSAL_CODES = re.compile(r"(?:^|[\s:(-])(?:OOM|READONLY|NOPERM|MISCONF|NOREPLICAS) ")


def refuses_writes(exc: BaseException) -> bool:
    """Whether ``exc`` is Redis refusing a command it would take in better times."""
    return isinstance(exc, REFUSAL_CLASSES) or (
        isinstance(exc, redis.ResponseError) and _REFUSAL_CODES.search(str(exc)) is not None)


class Backoff:
    """Pauses doubling from ``first_s`` to ``longest_s`` and a log line at most every
    ``log_every_s`` (with how many refusals it stands for): a wait that neither spins nor
    floods the log."""

    def __init__(self, log: logging.Logger, what: str, *, first_s: float = 0.25,
                 longest_s: float = 5.0, log_every_s: float = 30.0) -> None:
        self.log, self.what = log, what
        self.first_s, self.longest_s, self.log_every_s = first_s, longest_s, log_every_s
        self.pause_s = first_s
        self._unlogged = 0
        self._logged_at: float | None = None

    def wait(self, exc: BaseException) -> None:
        """Log (rate-limited) and sleep the current pause, then double it."""
        self.note(exc)
        time.sleep(self.pause_s)
        self.pause_s = min(self.pause_s * 2, self.longest_s)

    def note(self, exc: BaseException) -> None:
        """Count a failure; log it if no line was logged in the last ``log_every_s``."""
        self._unlogged += 1
        now = time.monotonic()
        if self._logged_at is None or now - self._logged_at >= self.log_every_s:
            self.log.warning("%s: %s; next try in %.2g s (%d failures since the last line)",
                             self.what, " ".join(str(exc).split())[:200], self.pause_s,
                             self._unlogged)
            self._logged_at, self._unlogged = now, 0

    def reset(self) -> None:
        if self._logged_at is not None:
            self.log.warning("%s: Redis works again", self.what)
        self.pause_s, self._unlogged, self._logged_at = self.first_s, 0, None


#: The key a write probe sets (a key of proofq's own, so an ACL user limited to
#: ``proofq:*`` may write it).
PROBE_KEY = "proofq:probe:writable"


def takes_writes(client: redis.Redis) -> bool:
    """Whether Redis takes a (tiny, expiring) write now; an unreachable Redis raises."""
    try:
        client.set(PROBE_KEY, "1", px=1000)
        return True
    except redis.ResponseError as exc:
        if refuses_writes(exc):
            return False
        raise


def wait_until_writable(client: redis.Redis, log: logging.Logger, what: str, *,
                        should_stop=lambda: False, first_s: float = 0.25,
                        longest_s: float = 5.0) -> bool:
    """Block until Redis answers and takes a write (it may be down, full or a read-only
    replica when a process starts), with ``Backoff``'s pauses and rate-limited log line;
    False if ``should_stop()`` came first.  For every long-running door: the intake, the
    gRPC front door."""
    backoff = Backoff(log, what, first_s=first_s, longest_s=longest_s)
    while not should_stop():
        try:
            if takes_writes(client):
                backoff.reset()
                return True
            backoff.wait(redis.ResponseError("Redis refuses writes (OOM, READONLY or NOPERM)"))
        except redis.RedisError as exc:
            backoff.wait(exc)
    return False


class MemoryGate:
    """Refuses new jobs while ``used_memory`` is above ``high_water`` of ``maxmemory``.

    ``INFO memory`` is read at most once per ``cache_s`` (a producer submitting hundreds of
    jobs a second asks Redis once a second); a Redis without ``maxmemory``, or an ACL user
    that may not run ``INFO``, is not gated.
    """

    def __init__(self, client: redis.Redis, high_water: float, *, cache_s: float = 1.0) -> None:
        self.client = client
        self.high_water = high_water
        self.cache_s = cache_s
        self._read_at: float | None = None
        self._memory: tuple[int, int] | None = None  # used, max

    def _read(self) -> tuple[int, int] | None:
        now = time.monotonic()
        if self._read_at is None or now - self._read_at >= self.cache_s:
            try:
                info = self.client.info("memory")
                self._memory = int(info["used_memory"]), int(info.get("maxmemory", 0))
            except redis.ResponseError:  # NOPERM for INFO: not gated
                self._memory = None
            self._read_at = now
        return self._memory

    def refusal(self, job_bytes: int = 0) -> str | None:
        """Why a job of ``job_bytes`` is refused now (Redis would be above the mark), or
        None."""
        memory = self._read()
        if memory is None or memory[1] <= 0:
            return None
        used, limit = memory
        if used + job_bytes <= self.high_water * limit:
            return None
        return (f"redis: used_memory {used} + this job's ~{job_bytes} bytes is above "
                f"{self.high_water:.0%} of maxmemory {limit} (PROOFQ_REDIS_HIGH_WATER): new "
                f"jobs are refused until the queue drains; nothing stored")
