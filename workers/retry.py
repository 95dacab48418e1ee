"""The one retry policy of a partition, for every way of running the pipeline.

A transient failure (``PartitionFailed.transient``: the lease, the device, Redis) is tried
again in place, after an exponential backoff, until ``task_max_retries`` retries are used;
a permanent one (bad input, a proof that does not verify) ends the job at once. Retrying in
place keeps the partition's message in the worker's hands, so it keeps its place in the
queue and needs no broker to be retried.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import redis

from config.settings import Settings


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int
    backoff_s: float

    @classmethod
    def from_settings(cls, settings: Settings) -> "RetryPolicy":
        return cls(settings.task_max_retries, settings.retry_backoff_s)

    @property
    def max_attempts(self) -> int:
        return self.max_retries + 1

    def retries(self, transient: bool, attempt: int) -> bool:
        """Whether attempt number ``attempt`` (from 1), having failed, gets another."""
        return transient and attempt < self.max_attempts

    def delay_s(self, attempt: int) -> float:
        """The pause after failed attempt ``attempt``: backoff, doubled per attempt."""
        return self.backoff_s * 2 ** (attempt - 1)


def caused_by_redis(exc: BaseException) -> bool:
    """An error that says Redis could not be reached or answered, directly or as the cause."""
    return isinstance(exc, redis.RedisError) or isinstance(exc.__cause__, redis.RedisError)


def wait_for_redis(client: redis.Redis, *, first_s: float = 0.25, longest_s: float = 5.0,
                   log=None) -> None:
    """Block until Redis answers a PING again, pausing longer each time (no deadline: while
    Redis is gone, nothing that a worker could do next would be recorded)."""
    pause = first_s
    while True:
        try:
            client.ping()
            return
        except redis.RedisError as exc:
            if log is not None:
                log.warning("Redis unreachable (%s); next try in %.2g s", exc, pause)
        time.sleep(pause)
        pause = min(pause * 2, longest_s)
