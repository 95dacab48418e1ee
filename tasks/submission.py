"""Accepting a job: parse, structural checks, store, enqueue; nothing that hashes.

Producers (the Python API, the CLI, the stream intake) call ``accept`` in their own process,
one job at a time, so it must stay light (milliseconds per job, bench/accept.py): it parses
the input (structure, sizes, canonical field elements) and refuses a malformed job at once
with one line naming the field, nothing stored.  An accepted job is stored (idempotently,
by job id) and handed to the ``proofq.submit`` task.  The checks that hash (challenge
derivation, Merkle paths) run on the workers, in parallel: the submit task checks the job
as a whole, each partition its own paths (``snark.proof_types``); a job that fails them
ends ``failed`` with the reason, and is never proved.

The limits (``snark.job_input.InputLimits``) are the caller's: a ``Client`` made with its
own settings applies those.  Besides the input's size they bound what a job costs Redis:
at most ``max_units`` units, and at most ``max_amplification`` Redis bytes per input byte
(each unit costs ``UNIT_REDIS_BYTES``: its message and its stored part), so a small request
cannot fan out into gigabytes.  A ``MemoryGate`` refuses new jobs while Redis is near its
``maxmemory``.

Submitting is atomic from the caller's view: a job whose message cannot be sent is
withdrawn (nothing stored) and the caller told so; one that stays stored anyway (the
producer died, or Redis went away between the two) is in ``proofq:unsent`` until its message
is sent, and a worker's reaper sends it (``tasks.recovery``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import redis
from celery import Celery

from snark.job_input import InputLimits
from snark.registry import DEFAULT_TYPE, aliases, proof_type_for_new_job
from tasks.application import PRIORITIES, priority_level, task_label
from tasks.jobs import JobStatus, JobStore, Outcome, check_job_id, content_digest
from workers.redis_faults import MemoryGate, refuses_writes

#: What one unit of work costs Redis while its job runs: its partition message (kombu's
#: JSON envelope, ~1.1 KiB: tests/test_input_bounds.py measures it) and its stored part.
UNIT_REDIS_BYTES = 2048
#: A job whose units cost less than this is never refused for amplification.
AMPLIFICATION_FLOOR_BYTES = 1 << 20


class SubmitError(ValueError):
    """A job was refused; the message names the field and the problem."""


class RedisFull(SubmitError):
    """Redis is near its ``maxmemory`` or refuses writes: try again later (nothing stored)."""


def check_footprint(units: int, input_bytes: int, limits: InputLimits) -> int:
    """What the job will cost Redis (bytes), refused past ``max_units`` units or past
    ``max_amplification`` times its input."""
    if units > limits.max_units:
        raise SubmitError(f"job: {units} units of work (partitions or witnesses) exceeds "
                          f"max_units_per_job ({limits.max_units}, PROOFQ_MAX_UNITS_PER_JOB)")
    cost = units * UNIT_REDIS_BYTES
    if cost > AMPLIFICATION_FLOOR_BYTES and cost > limits.max_amplification * input_bytes:
        raise SubmitError(f"job: {units} units would cost Redis ~{cost} bytes, "
                          f"{cost / max(input_bytes, 1):.0f}x its {input_bytes}-byte input "
                          f"(max_amplification {limits.max_amplification:g}, "
                          f"PROOFQ_MAX_AMPLIFICATION)")
    return input_bytes + cost


@dataclass(frozen=True)
class Accepted:
    job_id: str
    partitions: int
    created: bool  # False: the same job was submitted before under this id


def accept(store: JobStore, raw_input: Any, *, limits: InputLimits,
           proof_type: str = DEFAULT_TYPE, priority: str = "normal", job_id: str | None = None,
           gate: MemoryGate | None = None) -> Accepted:
    """Parse (within ``limits``) and store a job; raise ``SubmitError`` without storing
    anything if it is malformed, too costly for Redis, or (``gate``) Redis is near full
    (``RedisFull``). ``proof_type`` may be a type's older name: the job is stored under its
    current one."""
    try:
        kind = proof_type_for_new_job(proof_type)
        priority_level(priority)
        job_id = uuid.uuid4().hex if job_id is None else check_job_id(job_id)
        admitted = kind.admit(raw_input, limits)
    except ValueError as exc:
        raise SubmitError(str(exc)) from None
    except RecursionError:  # a type's own reader that recursed on a nested input
        raise SubmitError(f"{proof_type}: the input is nested too deeply") from None
    text = admitted.canonical_json
    cost = check_footprint(admitted.partitions, len(text), limits)
    if gate is not None and (refusal := gate.refusal(cost)) is not None:
        raise RedisFull(refusal)
    try:
        outcome = store.create(job_id, digest=content_digest(kind.name, text),
                               proof_type=kind.name, partitions=admitted.partitions,
                               priority=priority, input_json=text,
                               former_digests=tuple(content_digest(name, text)
                                                    for name in aliases(kind)))
    except redis.ResponseError as exc:
        if not refuses_writes(exc):
            raise
        raise RedisFull(f"redis: refuses writes ({' '.join(str(exc).split())[:160]}): "
                        f"nothing stored") from None
    if outcome == Outcome.CONFLICT:
        raise SubmitError(f"job_id: {job_id!r} is already used by a job with different content")
    return Accepted(job_id=job_id, partitions=admitted.partitions,
                    created=outcome == Outcome.CREATED)


def enqueue(app: Celery, store: JobStore, accepted: Accepted) -> None:
    """Hand an accepted job to the workers (again, if a resubmission finds it never was).

    Producers read outcomes from the job state, never from Celery's result backend, so the
    message asks for no result (and the producer subscribes to nothing).
    """
    state = store.state(accepted.job_id)
    if state is None or state.status != JobStatus.QUEUED or store.fanned_out(accepted.job_id):
        return
    try:
        send_submit(app, accepted.job_id, state.priority)
    except Exception as exc:
        problem = " ".join(str(exc).split())[:200] or type(exc).__name__
        withdrawn = accepted.created and _withdraw(store, accepted.job_id)
        raise SubmitError(f"enqueue: the job's message could not be sent ({problem}); " + (
            "nothing stored" if withdrawn else
            f"job {accepted.job_id} stays stored and a worker sends it once Redis takes it"
        )) from None
    try:
        store.mark_sent(accepted.job_id)
    except redis.RedisError:  # still listed unsent: the reaper sends it again (a duplicate
        pass                  # submit message is skipped by the task)


def send_submit(app: Celery, job_id: str, priority: str) -> None:
    """The job's ``proofq.submit`` message (asking for no result)."""
    app.send_task("proofq.submit", args=[job_id], priority=PRIORITIES[priority],
                  ignore_result=True, argsrepr=task_label(job_id))


def _withdraw(store: JobStore, job_id: str) -> bool:
    try:
        return store.withdraw(job_id)
    except redis.RedisError:
        return False
