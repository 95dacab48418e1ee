"""The task graph: submit → prove one partition (× P) → assemble, with state in ``tasks.jobs``.

Every task is safe to run twice: Celery's late acks re-deliver a message whose worker died,
``tasks.recovery`` restores one whose worker host died, and the Redis scripts turn a second
delivery into a no-op ('duplicate').  Only the call that stores the last missing partition
assembles, so a job is verified and published once.
Cancel and permanent failure are just job statuses: a queued partition finds the job no
longer proving and is dropped; a running one sees it through ``cancelled()`` at the next
phase boundary and is abandoned.

Every way out of a task does one of three things: it finishes its step (or the partition),
it fails the job with a reason (the user's input is wrong: ``snark.errors.InvalidInput``),
or it gives its message back to the queue (this worker cannot serve it: a worker fault, a
type it does not know, an input beyond its limits, a transient failure with no attempts
left), with one log line saying why (``_give_back``). A job given back by every live worker
(at most ``refusals_to_fail`` of them) fails with "no worker can serve it: …"; a worker that
keeps giving back a type's work is quarantined for it (``workers.quarantine``). A pool
process whose device context is lost gives its work back and then exits (``_retire``), so
that its pool starts a fresh process with a new context.

Nothing is lost to a Redis outage: a task that meets a Redis error anywhere (job state, the
locks, the cancel check, the events) waits until Redis answers again and then runs again from
the start, in place: its message stays unacknowledged in the worker's hands meanwhile, and
the job's scripts make the second run pick up where the first one stopped.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from contextlib import AbstractContextManager
from typing import Any

import redis
import redis.exceptions
import redis.lock
from celery import Task

from config.redis_keys import DEFAULT_KEYS, RedisKeys
from config.settings import Settings, get_settings
from snark.errors import InvalidInput, WorkerFault
from snark.job_input import InputLimits
from snark.keys import check_params_dir
from snark.proof_types import AnyWorker, ProofType, Storage
from snark.registry import UnknownProofType, proof_type, worker_half
from tasks import recovery
from tasks.application import (GPU_QUEUE, JOBS_QUEUE, app, band, redis_url, task_label,
                               unit_priority)
from tasks.jobs import JobStatus, JobStore, Outcome, Reply
from tasks.worker import runtime
from workers.backend_choice import fixed_base_for
from workers.failures import (Cancelled, Failure, PartitionCancelled, PartitionFailed,
                              RetryPolicy, classify, describe, fails_job, lost_device,
                              run_until_settled)
from workers.heartbeat import Heartbeat, Lease
from workers.quarantine import Quarantine

log = logging.getLogger(__name__)


class PipelineTask(Task):
    """The tasks' per-process state: settings and one job store (one connection pool),
    made on first use in each pool process, never shared across a fork."""

    Request = recovery.FrontRequeueRequest
    _store: JobStore | None = None
    _quarantine: Quarantine | None = None

    @property
    def settings(self) -> Settings:
        return get_settings()

    @property
    def store(self) -> JobStore:
        if PipelineTask._store is None:
            settings = self.settings
            PipelineTask._store = JobStore(redis.Redis.from_url(redis_url(settings)),
                                           ttl_s=settings.job_ttl_s,
                                           results_maxlen=settings.results_maxlen,
                                           keys=RedisKeys.of(settings))
        return PipelineTask._store

    @property
    def node(self) -> str:
        """The worker node (``gpu0@host``) running this task: who gives work back."""
        return self.request.hostname or "unknown"

    @property
    def quarantine(self) -> Quarantine:
        if PipelineTask._quarantine is None or PipelineTask._quarantine.node != self.node:
            settings = self.settings
            PipelineTask._quarantine = Quarantine(
                self.store.redis, self.node, self.store.keys, after=settings.quarantine_after,
                retry_s=settings.quarantine_retry_s)
        return PipelineTask._quarantine

    def through_outages(self, run: Callable[[bool], "TaskResult"], *,
                        returned: bool = False) -> dict:
        """``run(resumed)`` through outages and retries (``workers.failures``), as the task's
        JSON result; ``resumed`` is False only on the first run of a first delivery (a
        message given back by another worker is not one)."""
        return run_until_settled(
            run, self.store.redis, log=log, name=f"{self.name}[{self.request.id}]",
            resumed=returned or bool((self.request.delivery_info or {}).get("redelivered"))
        ).to_json()


@dataclass(frozen=True)
class TaskResult:
    """What a task did: the job's ``outcome`` (a status it found or set, or an ``Outcome``),
    the partition it was about, the partitions a fan-out sent, the reason it gave up. The
    task returns it as JSON (``to_json``: the fields that are set)."""

    job: str
    outcome: Reply
    partition: int | None = None
    partitions: int | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


class JobEnded(Cancelled, LookupError):
    """The job ended (cancelled or failed) after this task was sent: its input is gone."""


def failing(store: JobStore, job_id: str, step: str) -> AbstractContextManager[None]:
    """``workers.failures.fails_job`` for this job: an error of ``step`` fails it."""
    return fails_job(functools.partial(store.fail, job_id), step)


def job(store: JobStore, job_id: str) -> tuple[ProofType, Any]:
    """The proof type (found by the name stored, an older name included) and the parsed
    input of a job; a process proving several partitions parses it once.

    Cached by content digest too: a job id may be used again once the old job's keys
    have expired, and must then not find the old input.

    The input was admitted by its producer, so a type this worker does not know, or an
    input it cannot read (a smaller ``PROOFQ_MAX_INPUT_BYTES``, an older version), is this
    worker's fault, not the user's: another worker may serve the job.
    """
    digest, kind = store.redis.hmget(store.key(job_id), "digest", "proof_type")
    if digest is None or kind is None:
        raise JobEnded(f"job {job_id}: no such job (it has ended and expired)")
    name = kind.decode()
    try:
        found = proof_type(name)
    except UnknownProofType as exc:
        raise WorkerFault(f"this worker does not have proof type {name!r} ({exc})") from None
    return found, _parsed_input(store, job_id, digest.decode(), name)


@functools.lru_cache(maxsize=4)
def _parsed_input(store: JobStore, job_id: str, digest: str, kind: str) -> Any:
    raw = store.input_json(job_id)
    if raw is None:
        raise JobEnded(f"job {job_id}: input is gone (the job has ended)")
    try:
        return proof_type(kind).parse(raw, InputLimits.of(get_settings()))
    except InvalidInput as exc:
        raise WorkerFault(f"this worker cannot read the input its producer accepted: {exc}"
                          ) from None


def worker_of(kind: ProofType) -> AnyWorker:
    """The type's worker half for this host's storage."""
    return worker_half(kind, Storage.of(get_settings()))


@app.task(name="proofq.submit", bind=True, base=PipelineTask)
def submit(self: PipelineTask, job_id: str, returned: bool = False) -> dict:
    """Check the job as a whole, make sure the proving key exists, then send one task per
    partition.  A job that fails the check fails for good (no retry): its input is wrong.
    ``returned``: a worker that could not serve the job gave this message back."""
    return self.through_outages(lambda resumed: _submit(self, job_id), returned=returned)


def _submit(task: PipelineTask, job_id: str) -> TaskResult:
    store = task.store
    state = store.state(job_id)
    if (state is None or state.status != JobStatus.QUEUED or store.fanned_out(job_id)
            or not store.claim_fan_out(job_id, task.request.id or "")):
        return TaskResult(job_id, outcome=Outcome.SKIPPED)
    # never leave the job queued with its fan-out claimed: its message is given back with
    # the same task id, so that the next worker owns the fan-out
    held = task.quarantine.holds(state.proof_type)
    if held is not None:
        return _give_back(task, job_id, state.proof_type, f"quarantined: {held.reason}")
    try:
        with failing(store, job_id, "check"):
            try:
                kind, parsed = job(store, job_id)
                worker_of(kind).check(parsed)
            except JobEnded:  # cancelled before its fan-out
                return TaskResult(job_id, outcome=Outcome.ABANDONED)
            except InvalidInput as exc:  # the job's outcome, not the task's
                return TaskResult(job_id, outcome=_refused(store, job_id, "check", exc))
        with failing(store, job_id, "setup"):
            _ensure_key(store, task.settings, job_id, kind, parsed)
    except PartitionFailed as exc:
        if exc.kind is not Failure.REFUSED:
            raise
        return _give_back(task, job_id, state.proof_type, str(exc), cause=exc)
    task.quarantine.served(state.proof_type)
    fair_share = task.settings.fair_share_units
    for partition in range(state.partitions):
        prove_partition.apply_async((job_id, partition), {"queued_at": time.time()},
                                    queue=GPU_QUEUE,
                                    priority=unit_priority(state.priority, partition, fair_share),
                                    argsrepr=task_label(job_id, partition))
    store.mark_fanned_out(job_id)
    return TaskResult(job_id, outcome=Outcome.FANNED_OUT, partitions=state.partitions)


def _refused(store: JobStore, job_id: str, step: str, exc: InvalidInput) -> Reply:
    """Fail a job whose input is wrong: one log line (a user's error, not the worker's)."""
    reason = f"{step}: {exc}"
    log.warning("job %s failed: %s", job_id, reason)
    return store.fail(job_id, reason)


def _give_back(task: PipelineTask, job_id: str, kind: str, reason: str,
               partition: int | None = None, cause: BaseException | None = None
               ) -> TaskResult:
    """This worker cannot serve the job: count the fault towards its quarantine for
    ``kind``, record the refusal on the job (which fails it once every live worker, up to
    ``refusals_to_fail``, has refused), and send the message again for another worker, with
    the same task id and priority. One log line says why. The worker then pauses
    (``refusal_pause_s``), so that a free worker takes the message before it could. A
    ``cause`` that lost this process's device context is no refusal of the worker's: the
    work goes back unrecorded, and the process retires (``_retire``)."""
    store, settings = task.store, task.settings
    quarantine = task.quarantine
    lost = cause is not None and lost_device(cause)
    if not reason.startswith("quarantined: "):
        quarantine.fault(kind, reason)
    if lost:  # not the worker's refusal: a fresh process of it may serve the job
        outcome = store.hand_back(job_id, partition)
    else:
        outcome = store.refuse(job_id, task.node, reason, most=settings.refusals_to_fail,
                               live_workers=store.keys.workers(GPU_QUEUE if partition is not None
                                                               else JOBS_QUEUE),
                               live_s=settings.reap_after_s,
                               partition=partition)
    where = f"job {job_id}" + ("" if partition is None else f" partition {partition}")
    if outcome == Outcome.RETURNED:
        log.warning("%s: given back to the queue, this worker cannot serve it: %s",
                    where, reason)
        _send_again(task, job_id, partition)
        time.sleep(settings.refusal_pause_s)
    else:
        log.warning("%s: this worker cannot serve it (%s); the job is %s", where, reason,
                    outcome)
    if lost:
        _retire(reason)
    return TaskResult(job_id, outcome, partition, error=reason)


class ProcessRetired(SystemExit):
    """Raised out of a task to end its pool process (Celery's prefork pool starts another)."""


def _retire(reason: str) -> None:
    """End this pool process once its work is given back: its device context is lost, and
    every later device call here would fail. The locks, the VRAM reservation and the key
    keeper's holds were released on the way out of the partition (or go with the process);
    a fresh process opens a new context, and the quarantine stays the judge of a device
    that keeps failing."""
    log.error("this process's device context is lost (%s): the process exits so that its "
              "pool starts a fresh one", reason)
    raise ProcessRetired(3)


def _send_again(task: PipelineTask, job_id: str, partition: int | None) -> None:
    """This task's message once more, marked ``returned``, at the priority it came with."""
    priority = (task.request.delivery_info or {}).get("priority")
    if partition is None:
        submit.apply_async((job_id,), {"returned": True}, task_id=task.request.id,
                           queue=JOBS_QUEUE, priority=priority, argsrepr=task_label(job_id))
    else:
        prove_partition.apply_async((job_id, partition),
                                    {"queued_at": time.time(), "returned": True},
                                    queue=GPU_QUEUE, priority=priority,
                                    argsrepr=task_label(job_id, partition))


def setup_lock(client: redis.Redis, circuit: str, lease_s: float,
               keys: RedisKeys = DEFAULT_KEYS) -> redis.lock.Lock:
    """The per-circuit setup lock.  Its token is shared across threads: redis-py keeps it
    thread-local by default, and then the heartbeat thread could not renew the lease."""
    return client.lock(keys.setup_lock(circuit), timeout=lease_s, thread_local=False)


def setup_lease(lock: redis.lock.Lock) -> Lease:
    """The held setup lock as a heartbeat lease: its TTL is reset while the holder lives."""
    def extend() -> bool:
        try:
            return bool(lock.reacquire())
        except redis.exceptions.LockNotOwnedError:
            return False
    return Lease(lock.timeout, time.monotonic(), extend, "setup lock no longer ours")


def _ensure_key(store: JobStore, settings: Settings, job_id: str, kind: ProofType,
                job_input: Any) -> None:
    """Set up a missing key once: jobs of the same new key wait for the first setup, each
    in stage ``setup`` meanwhile.

    Concurrent setups would only be wasted work (the first key saved wins).  The lock is
    leased and renewed while setup runs, so a worker that dies mid-setup holds up the others
    for one lease, not for the length of a setup.
    """
    worker = worker_of(kind)
    if worker.has_key(job_input):
        return
    check_params_dir(settings.params_dir)
    store.mark_setup(job_id, True)
    try:
        lock = setup_lock(store.redis, kind.key_name(job_input), settings.lock_lease_s,
                          store.keys)
        with lock:
            heartbeat = Heartbeat(settings.heartbeat_s, name="proofq-setup-lease")
            heartbeat.register(setup_lease(lock))
            try:
                if not worker.has_key(job_input):
                    log.info("job %s: making key %s", job_id, kind.key_name(job_input))
                    # On the device this worker proves on (workers.backend_choice).
                    worker.make_key(job_input, fixed_base=fixed_base_for(runtime().backend))
            finally:
                heartbeat.close()
    finally:
        store.mark_setup(job_id, False)


@app.task(name="proofq.prove_partition", bind=True, base=PipelineTask)
def prove_partition(self: PipelineTask, job_id: str, partition: int,
                    queued_at: float | None = None, returned: bool = False) -> dict:
    """Prove one partition; ``queued_at`` (sender's Unix time) times its ``queued`` phase;
    ``returned``: a worker that could not serve it gave this message back."""
    policy = RetryPolicy.from_settings(self.settings)
    delivery = _PartitionDelivery(self, policy, job_id, partition, queued_at)
    return self.through_outages(delivery.once, returned=returned)


class _PartitionDelivery:
    """The runs of one delivery of a partition: a proof made before Redis went away is
    kept, so the run after the outage stores it instead of proving it again."""

    def __init__(self, task: PipelineTask, policy: RetryPolicy, job_id: str, partition: int,
                 queued_at: float | None) -> None:
        self.task, self.policy = task, policy
        self.job_id, self.partition = job_id, partition
        self.queued_at = queued_at
        self.proof: bytes | None = None

    def once(self, resumed: bool) -> TaskResult:
        queued_at, self.queued_at = self.queued_at, None  # a run again is not queued again
        if self.proof is None:
            result = _prove_partition(self.task, self.policy, self.job_id, self.partition,
                                      queued_at, resumed)
            if isinstance(result, TaskResult):
                return result
            self.proof = result
        try:
            return _store_partition(self.task.store, self.job_id, self.partition, self.proof,
                                    resumed)
        except PartitionFailed as exc:  # the assembly, on a worker that cannot serve it
            if exc.kind is not Failure.REFUSED:
                raise
            return _give_back(self.task, self.job_id, _stored_type(self.task.store, self.job_id),
                              str(exc), self.partition)


def _stored_type(store: JobStore, job_id: str) -> str:
    """The proof type's name as the job stores it ('' once the job has expired)."""
    name = store.redis.hget(store.key(job_id), "proof_type")
    return "" if name is None else name.decode()


def _prove_partition(task: PipelineTask, policy: RetryPolicy, job_id: str, partition: int,
                     queued_at: float | None, resumed: bool) -> TaskResult | bytes:
    """One attempt: the job's scripts decide whether it runs and record a failure; the
    proof, or the outcome when there is none."""
    store = task.store
    kind_name = _stored_type(store, job_id)
    held = task.quarantine.holds(kind_name) if kind_name else None
    if held is not None:
        return _give_back(task, job_id, kind_name, f"quarantined: {held.reason}", partition)
    outcome, attempt = store.begin_partition(job_id, partition,
                                             max_attempts=policy.max_attempts)
    if outcome == JobStatus.ASSEMBLING and resumed:
        # A run (here, or on a worker that died or gave it back) completed the set but never
        # published it.
        try:
            return TaskResult(job_id, partition=partition, outcome=assemble(store, job_id))
        except PartitionFailed as exc:
            if exc.kind is not Failure.REFUSED:
                raise
            return _give_back(task, job_id, kind_name, str(exc), partition)
    if outcome == Outcome.EXHAUSTED:
        outcome = store.fail(job_id, f"partition {partition}: worker: lost while proving, "
                                     f"{attempt} attempts")
    if outcome != Outcome.RUN:
        return TaskResult(job_id, partition=partition, outcome=outcome)

    def progress(phase: str, info: dict) -> None:
        """A ``proofq-phase`` event per phase for Celery event consumers (``phase_event``)."""
        task.send_event(PHASE_EVENT, **phase_event(task.request.id, job_id, partition, phase,
                                                   info))

    try:
        kind, parsed = job(store, job_id)
        proof = runtime().prove_partition(
            job_id=job_id, partition=partition, proof_type=kind, job_input=parsed,
            progress=progress, cancelled=lambda: not store.is_active(job_id),
            queued_at=queued_at, key_seen=lambda mine: store.first_key(job_id, mine),
            band=band((task.request.delivery_info or {}).get("priority")))
    except (JobEnded, PartitionCancelled):  # the job ended before or while it was proved
        return TaskResult(job_id, partition=partition, outcome=Outcome.ABANDONED)
    except Exception as exc:
        failure = classify(exc)
        if failure is Failure.OUTAGE:
            raise
        # the input read or the runtime started: their errors are the worker's step's
        cause = exc
        failed = exc if isinstance(exc, PartitionFailed) else PartitionFailed(
            "worker", describe(exc), failure)
    else:
        task.quarantine.served(kind_name)
        return proof
    policy.run_again(failed, attempt)  # an outage, or attempts left: this does not return
    if failed.kind is not Failure.PERMANENT:  # this worker cannot serve it
        return _give_back(task, job_id, kind_name, f"partition {partition}: {failed}",
                          partition, cause=cause)
    store.fail(job_id, f"partition {partition}: {failed}")
    return TaskResult(job_id, partition=partition, outcome=JobStatus.FAILED, error=str(failed))


#: A partition's phase as a Celery event.  Not a ``task-…`` event: Celery's event state
#: would turn it into a custom task state (which no Flower filter knows) and copy its fields
#: over the task's own (a ``worker`` string over ``Task.worker`` broke Flower's pages).
PHASE_EVENT = "proofq-phase"


def phase_event(task_id: str | None, job_id: str, partition: int, phase: str,
                info: dict) -> dict:
    """The event's fields: the task, job, partition and phase, and the runtime's scalars
    (its ``worker`` named ``process``: the pool process proving)."""
    fields = {("process" if k == "worker" else k): v for k, v in info.items()
              if isinstance(v, (str, int, float))}
    fields.update(task=task_id or "", job=job_id, partition=partition, phase=phase)
    return fields


def _store_partition(store: JobStore, job_id: str, partition: int, proof: bytes,
                     resumed: bool) -> TaskResult:
    """Store a verified partition proof; the call that completes the set assembles (and a
    run again after an outage that may have been it, when the job is still assembling)."""
    outcome = store.store_part(job_id, partition, proof)
    if outcome == Outcome.COMPLETE or (resumed and outcome == JobStatus.ASSEMBLING):
        outcome = assemble(store, job_id)
    return TaskResult(job_id, partition=partition, outcome=outcome)


def assemble(store: JobStore, job_id: str) -> Reply:
    """Assemble the partition proofs in order (porep: concatenated), verify the whole,
    publish it once."""
    state = store.state(job_id)
    if state is None or state.status != JobStatus.ASSEMBLING:
        return Outcome.MISSING if state is None else state.status
    try:
        with failing(store, job_id, "assembly"):
            kind, parsed = job(store, job_id)
            worker = worker_of(kind)
            proof = worker.assemble(parsed, store.parts(job_id, state.partitions))
            valid = worker.verify(parsed, proof)
    except JobEnded:  # cancelled while assembling
        return store.status(job_id) or Outcome.MISSING
    if not valid:
        return store.fail(job_id, "assembly: the assembled proof does not verify")
    return store.finish(job_id, proof)
