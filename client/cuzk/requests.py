"""Curio's request ids as proofq job ids, and the answers to requests that made no job.

``request_id`` is the idempotency key: a request seen before attaches to its job while that
job runs or is done (within ``job_ttl_s``), so a retry after a gateway restart, or a second
``Prove`` of the same sector, never proves twice and gets the same bytes. The job id is the
request id itself where it can name Redis keys (Curio's ``porep-<miner>-<sector>`` can),
else ``cuzk-`` and a digest of it. A request whose job failed or was cancelled is proved
again on its next submission, under ``<job id>.<attempt>``; the attempt number is kept in
``proofq:cuzk:attempt:<job id>``.

A refused request (a kind proofq does not prove, a C1 that does not match the request) makes
no job; its answer is kept under ``proofq:cuzk:refused:<job id>`` for ``job_ttl_s``, so
``AwaitProof`` of the id that ``SubmitProof`` gave answers ``FAILED`` with it.
"""

from __future__ import annotations

import hashlib
import uuid

import redis

from tasks.jobs import JobStatus, JobStore, check_job_id

ATTEMPT_PREFIX = "proofq:cuzk:attempt:"
REFUSED_PREFIX = "proofq:cuzk:refused:"

# KEYS: attempt counter.  ARGV: the attempt the caller saw ended, ttl.  The next attempt's
# number, made once however many callers saw the same one end.
_NEXT_ATTEMPT = """
local now = tonumber(redis.call('GET', KEYS[1]) or '1')
if now == tonumber(ARGV[1]) then
  now = now + 1
  redis.call('SET', KEYS[1], now)
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return now
"""


def base_job_id(request_id: str) -> str:
    """The job id of a request's first attempt (a fresh one for an empty request id)."""
    if not request_id:
        return uuid.uuid4().hex
    try:
        if len(request_id) <= 120:
            return check_job_id(request_id)
    except ValueError:
        pass
    return "cuzk-" + hashlib.sha256(request_id.encode()).hexdigest()[:40]


def attempt_job_id(base: str, attempt: int) -> str:
    return base if attempt <= 1 else f"{base}.{attempt}"


class RequestJobs:
    """Which job answers a request id now, on one cluster's job store."""

    def __init__(self, store: JobStore) -> None:
        self.store = store
        self.redis: redis.Redis = store.redis
        self._next_attempt = self.redis.register_script(_NEXT_ATTEMPT)

    def job_for(self, request_id: str) -> str:
        """The job id a submission of ``request_id`` goes to: the current attempt's, or the
        next one's if the current attempt's job failed or was cancelled."""
        base = base_job_id(request_id)
        raw = self.redis.get(ATTEMPT_PREFIX + base)
        attempt = int(raw) if raw is not None else 1
        job_id = attempt_job_id(base, attempt)
        if self.store.status(job_id) in (JobStatus.FAILED, JobStatus.CANCELLED):
            attempt = int(self._next_attempt(keys=[ATTEMPT_PREFIX + base],
                                             args=[attempt, self.store.ttl_s]))
            job_id = attempt_job_id(base, attempt)
        return job_id

    def refuse(self, job_id: str, message: str) -> None:
        self.redis.set(REFUSED_PREFIX + job_id, message, ex=self.store.ttl_s)

    def refusal(self, job_id: str) -> str | None:
        raw = self.redis.get(REFUSED_PREFIX + job_id)
        return None if raw is None else raw.decode()

    def accepted(self, job_id: str, request_id: str) -> None:
        """A job now answers the request: an older refusal under its id is void, and the
        job's hash names the request (``proofq view``, ``proofq status``)."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(REFUSED_PREFIX + job_id)
            pipe.hset(self.store.key(job_id), "request_id", request_id)
            pipe.execute()
