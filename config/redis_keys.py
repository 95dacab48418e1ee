"""Every Redis key and prefix proofq writes, under one namespace (``PROOFQ_NAMESPACE``).

Two clusters may share one Redis database when their namespaces differ: each one's jobs,
locks, ledger, events, claims, quarantines and intake live under ``<namespace>:…``, and
Celery's own keys (the queues, kombu's record of unacknowledged messages, its bindings and
pub/sub channels: events, control) under the prefix ``<namespace>:broker:`` given to kombu
(``broker_prefix``; its queue ``jobs`` would otherwise be the jobs index). The default
namespace, ``proofq``, keeps every name a cluster had before namespaces existed, Celery's
unprefixed ones included, so a running cluster keeps its state across the upgrade. One key
is shared on purpose: the probe a worker writes to learn whether Redis takes writes again
(``workers.redis_faults.PROBE_KEY``, a value that expires in a second and means nothing).
docs/ARCHITECTURE.md §6 says what each key holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

DEFAULT_NAMESPACE = "proofq"
NAMESPACE_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class _Namespaced(Protocol):
    namespace: str


@dataclass(frozen=True)
class RedisKeys:
    """The keys of one cluster, by what they hold."""

    namespace: str = DEFAULT_NAMESPACE

    @classmethod
    def of(cls, settings: _Namespaced) -> "RedisKeys":
        return cls(settings.namespace)

    def _key(self, name: str) -> str:
        return f"{self.namespace}:{name}"

    # -- jobs (tasks/jobs.py) -------------------------------------------------------------
    @property
    def job_prefix(self) -> str:
        """``<ns>:job:``: a job's hash is the prefix and its id; its other keys add a suffix."""
        return self._key("job:")

    def job(self, job_id: str) -> str:
        return self.job_prefix + job_id

    @property
    def results(self) -> str:
        """Stream: one entry per ended job, and the intake's refusals."""
        return self._key("results")

    @property
    def totals(self) -> str:
        """Hash: jobs ended, by final status (done, failed, cancelled), counted once by the
        script that ends each; kept when the jobs themselves expire."""
        return self._key("totals")

    @property
    def jobs_index(self) -> str:
        """Sorted set: job id by creation time."""
        return self._key("jobs")

    @property
    def unsent(self) -> str:
        """Sorted set: jobs stored whose submit message was not sent yet."""
        return self._key("unsent")

    def setup_lock(self, circuit: str) -> str:
        """The lock held while a circuit's key is made."""
        return self._key(f"setup:{circuit}")

    # -- recovery (tasks/recovery.py) -----------------------------------------------------
    def claim(self, delivery_tag: str) -> str:
        """A live worker's claim on a message it holds."""
        return self._key(f"claim:{delivery_tag}")

    @property
    def broker_prefix(self) -> str:
        """What kombu puts before each of its keys ('' in the default namespace)."""
        return "" if self.namespace == DEFAULT_NAMESPACE else self._key("broker:")

    # -- one device (workers/locks.py, workers/ledger.py) ---------------------------------
    def gpu(self, host: str, uuid: str) -> str:
        """The base of a device's lock pair, fence and VRAM ledger keys."""
        return self._key(f"gpu:{host}:{uuid}")

    # -- workers (workers/phase_events.py, workers/quarantine.py) -------------------------
    @property
    def events(self) -> str:
        """Stream: one entry per partition phase."""
        return self._key("events")

    @property
    def quarantine(self) -> str:
        return self._key("quarantine")

    @property
    def faults(self) -> str:
        return self._key("faults")

    def workers(self, queue: str) -> str:
        """Sorted set: the workers seen alive consuming ``queue``."""
        return self._key(f"workers:{queue}")

    @property
    def card_prefix(self) -> str:
        """``<ns>:card:``: a worker process's card (a hash, ``workers/card.py``) is the
        prefix and the worker's name."""
        return self._key("card:")

    @property
    def key_requests(self) -> str:
        """Stream: requests to make a key resident ahead of work or to let it go, read by
        every worker process (``workers/key_requests.py``)."""
        return self._key("key-requests")

    def key_replies(self, request_id: str) -> str:
        """Hash: each worker's answer to one key request (worker → JSON)."""
        return self._key(f"key-replies:{request_id}")

    # -- producers (client/intake.py) -----------------------------------------------------
    @property
    def intake(self) -> str:
        """Stream: jobs from producers that do not speak Celery."""
        return self._key("intake")

    @property
    def intake_account(self) -> str:
        """Hash: the intake's accounting of deletions from its stream (``client/intake.py``)."""
        return self._key("intake:account")

    @property
    def intake_group(self) -> str:
        return f"{self.namespace}-intake"


#: The default namespace's keys.
DEFAULT_KEYS = RedisKeys()
