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
own settings applies those.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from celery import Celery

from snark.job_input import InputLimits
from snark.registry import aliases, proof_type_for_new_job
from tasks.application import PRIORITIES, priority_level, task_label
from tasks.jobs import JobStatus, JobStore, Outcome, check_job_id, content_digest


class SubmitError(ValueError):
    """A job was refused; the message names the field and the problem."""


@dataclass(frozen=True)
class Accepted:
    job_id: str
    partitions: int
    created: bool  # False: the same job was submitted before under this id


def accept(store: JobStore, raw_input: Any, *, limits: InputLimits, proof_type: str = "porep-demo",
           priority: str = "normal", job_id: str | None = None) -> Accepted:
    """Parse (within ``limits``) and store a job; raise ``SubmitError`` without storing
    anything if it is malformed. ``proof_type`` may be a type's older name: the job is
    stored under its current one."""
    try:
        kind = proof_type_for_new_job(proof_type)
        priority_level(priority)
        job_id = uuid.uuid4().hex if job_id is None else check_job_id(job_id)
        admitted = kind.admit(raw_input, limits)
    except ValueError as exc:
        raise SubmitError(str(exc)) from None
    text = admitted.canonical_json
    outcome = store.create(job_id, digest=content_digest(kind.name, text), proof_type=kind.name,
                           partitions=admitted.partitions, priority=priority, input_json=text,
                           former_digests=tuple(content_digest(name, text)
                                                for name in aliases(kind)))
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
    app.send_task("proofq.submit", args=[accepted.job_id],
                  priority=PRIORITIES[state.priority], ignore_result=True,
                  argsrepr=task_label(accepted.job_id))
