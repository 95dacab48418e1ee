"""The task graph: submit → prove one partition (× P) → assemble, with state in ``tasks.jobs``.

Every task is safe to run twice: Celery's late acks re-deliver a message whose worker died,
and the Redis scripts turn a second delivery into a no-op ('duplicate').  Only the call that
stores the last missing partition assembles, so a job is verified and published once.
Cancel and permanent failure are just job statuses: a queued partition finds the job no
longer proving and is dropped; a running one sees it through ``cancelled()`` at the next
phase boundary and is abandoned.
"""

from __future__ import annotations

import functools
import time
from typing import Any

import redis
import redis.lock
from celery import Task

from config.settings import get_settings
from tasks.application import GPU_QUEUE, PRIORITIES, app, redis_url
from tasks.jobs import JobStore
from tasks.proof_types import ProofType, proof_type
from tasks.worker import runtime
from workers.backend_choice import fixed_base_for
from workers.heartbeat import Heartbeat

@functools.cache
def job_store() -> JobStore:
    """One store (one connection pool) per process."""
    settings = get_settings()
    return JobStore(redis.Redis.from_url(redis_url(settings)), ttl_s=settings.job_ttl_s,
                    results_maxlen=settings.results_maxlen)


class JobEnded(LookupError):
    """The job ended (cancelled or failed) after this task was sent: its input is gone."""


def job_input(job_id: str) -> Any:
    """The parsed input of a job; a process proving several partitions parses it once.

    Cached by content digest too: a job id may be used again once the old job's keys
    have expired, and must then not find the old input.
    """
    digest, kind = job_store().redis.hmget(JobStore.key(job_id), "digest", "proof_type")
    if digest is None or kind is None:
        raise JobEnded(f"job {job_id}: no such job (it has ended and expired)")
    return _parsed_input(job_id, digest.decode(), kind.decode())


@functools.lru_cache(maxsize=4)
def _parsed_input(job_id: str, digest: str, kind: str) -> Any:
    raw = job_store().input_json(job_id)
    if raw is None:
        raise JobEnded(f"job {job_id}: input is gone (the job has ended)")
    return proof_type(kind).parse(raw)


@app.task(name="proofq.submit", bind=True)
def submit(self: Task, job_id: str) -> dict:
    """Check the job as a whole, make sure the proving key exists, then send one task per
    partition.  A job that fails the check fails for good (no retry): its input is wrong."""
    store = job_store()
    state = store.state(job_id)
    if (state is None or state.status != "queued" or store.fanned_out(job_id)
            or not store.claim_fan_out(job_id, self.request.id or "")):
        return {"job": job_id, "outcome": "skipped"}
    kind = proof_type(state.proof_type)
    try:
        job = job_input(job_id)
    except JobEnded:  # cancelled before its fan-out
        return {"job": job_id, "outcome": "abandoned"}
    try:
        kind.check(job)
    except ValueError as exc:  # the input is wrong
        return {"job": job_id, "outcome": store.fail(job_id, f"check: {exc}")}
    except Exception as exc:  # never leave the job queued with its fan-out claimed
        store.fail(job_id, f"check: {type(exc).__name__}: {exc}")
        raise
    try:
        _ensure_key(store, kind, job)
    except Exception as exc:
        store.fail(job_id, f"setup: {exc}")
        raise
    for partition in range(state.partitions):
        prove_partition.apply_async((job_id, partition), {"queued_at": time.time()},
                                    queue=GPU_QUEUE, priority=PRIORITIES[state.priority])
    store.mark_fanned_out(job_id)
    return {"job": job_id, "outcome": "fanned_out", "partitions": state.partitions}


class _LeaseRenewal:
    """A redis-py lock as a heartbeat item: its TTL is reset while the holder lives."""

    def __init__(self, lock: redis.lock.Lock) -> None:
        self.lock = lock

    def renew(self) -> None:
        self.lock.reacquire()


def setup_lock(client: redis.Redis, circuit: str, lease_s: float) -> redis.lock.Lock:
    """The per-circuit setup lock.  Its token is shared across threads: redis-py keeps it
    thread-local by default, and then the heartbeat thread could not renew the lease."""
    return client.lock(f"proofq:setup:{circuit}", timeout=lease_s, thread_local=False)


def _ensure_key(store: JobStore, kind: ProofType, job_input: Any) -> None:
    """Set up a missing key once: jobs of the same new circuit wait for the first setup.

    Concurrent setups would only be wasted work (the first key saved wins).  The lock is
    leased and renewed while setup runs, so a worker that dies mid-setup holds up the others
    for one lease, not for the length of a setup.
    """
    settings = get_settings()
    if kind.has_key(job_input, settings.params_dir):
        return
    lock = setup_lock(store.redis, kind.circuit_name(job_input), settings.lock_lease_s)
    with lock:
        heartbeat = Heartbeat(settings.heartbeat_s, name="proofq-setup-lease")
        heartbeat.register(_LeaseRenewal(lock))
        try:
            if not kind.has_key(job_input, settings.params_dir):
                # On the device this worker proves on (workers.backend_choice).
                kind.make_key(job_input, settings.params_dir,
                              fixed_base=fixed_base_for(runtime().backend))
        finally:
            heartbeat.close()


@app.task(name="proofq.prove_partition", bind=True)
def prove_partition(self: Task, job_id: str, partition: int,
                    queued_at: float | None = None) -> dict:
    """Prove one partition; ``queued_at`` (sender's Unix time) times its ``queued`` phase."""
    from workers.runtime import PartitionCancelled, PartitionFailed

    store = job_store()
    settings = get_settings()
    max_attempts = settings.task_max_retries + 1
    outcome, attempt = store.begin_partition(job_id, partition, max_attempts=max_attempts)
    if outcome == "assembling" and (self.request.delivery_info or {}).get("redelivered"):
        # The worker that completed the set died before publishing: finish its assembly.
        return {"job": job_id, "partition": partition, "outcome": assemble(job_id)}
    if outcome == "exhausted":
        outcome = store.fail(job_id, f"partition {partition}: worker: lost while proving, "
                                     f"{attempt} attempts")
    if outcome != "run":
        return {"job": job_id, "partition": partition, "outcome": outcome}
    try:
        c1 = job_input(job_id)
    except JobEnded:  # cancelled between begin_partition and here: nothing to prove
        return {"job": job_id, "partition": partition, "outcome": "abandoned"}

    def progress(phase: str, info: dict) -> None:
        """Flower's view of the partition: a ``task-progress`` event per phase."""
        fields = {k: v for k, v in info.items() if isinstance(v, (str, int, float))}
        fields.update(job=job_id, partition=partition, phase=phase)
        self.send_event("task-progress", **fields)

    try:
        proof = runtime().prove_partition(job_id=job_id, partition=partition,
                                          c1=c1, progress=progress,
                                          cancelled=lambda: not store.is_active(job_id),
                                          queued_at=queued_at)
    except PartitionCancelled:
        return {"job": job_id, "partition": partition, "outcome": "abandoned"}
    except PartitionFailed as exc:
        if exc.transient and attempt < max_attempts:
            raise self.retry(exc=exc, max_retries=None, kwargs={"queued_at": time.time()},
                             countdown=settings.retry_backoff_s * 2 ** (attempt - 1))
        store.fail(job_id, f"partition {partition}: {exc}")
        return {"job": job_id, "partition": partition, "outcome": "failed", "error": str(exc)}
    except Exception as exc:
        store.fail(job_id, f"partition {partition}: worker: {type(exc).__name__}: {exc}")
        raise

    outcome = store.store_part(job_id, partition, proof)
    if outcome == "complete":
        outcome = assemble(job_id)
    return {"job": job_id, "partition": partition, "outcome": outcome}


def assemble(job_id: str) -> str:
    """Concatenate the partition proofs in order, verify the whole, publish it once."""
    store = job_store()
    state = store.state(job_id)
    if state is None or state.status != "assembling":
        return "missing" if state is None else state.status
    try:
        proof = b"".join(store.parts(job_id, state.partitions))
        valid = proof_type(state.proof_type).verify(job_input(job_id), get_settings().params_dir,
                                                    proof)
    except JobEnded:  # cancelled while assembling
        return store.status(job_id) or "missing"
    except Exception as exc:
        store.fail(job_id, f"assembly: {type(exc).__name__}: {exc}")
        raise
    if not valid:
        return store.fail(job_id, "assembly: the assembled proof does not verify")
    return store.finish(job_id, proof)
