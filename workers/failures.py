"""What a failure means and what happens next (docs/ARCHITECTURE.md §7): one taxonomy for
every way of running the pipeline (the Celery tasks, the standalone worker, the runtime's
phases). Who an error belongs to is said by its class (``snark.errors``), never by a
built-in it happens to derive from.

    permanent   the user's input is wrong (``snark.errors.InvalidInput``: a proof type's
                input errors, ``UnsatisfiedConstraint``), a proof does not verify, or an
                error nobody expected: the job fails at once, naming the step and the reason
    refused     this worker cannot serve the work (``snark.errors.WorkerFault``: a corrupt
                or missing key, an unusable device, a params directory that takes no files,
                a type or an input limit it does not have; a ``SettingsError``): the work
                goes back to the queue for another worker (``tasks.pipeline``), and a
                worker that keeps refusing a kind of work stops taking it
                (``workers.quarantine``)
    transient   this worker's situation (the lock's lease, the device's memory, the file
                system): tried again in place after a backoff while attempts last, then
                refused
    outage      Redis (the job state, the locks, the broker) could not be reached or
                answered, or refused a write (out of memory, a read-only replica, an ACL
                refusal): wait until it answers (takes writes), then run again from the
                start; never counts as an attempt, never fails a job
    cancelled   the job ended (cancelled, or failed elsewhere) while this work was under
                way: drop it, nothing to record

Retrying in place keeps a partition's message in the worker's hands, so it keeps its place
in the queue and needs no broker to be retried.
"""

from __future__ import annotations

import errno
import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

import redis
from kombu.exceptions import OperationalError

from config.settings import Settings, SettingsError, get_settings
from snark.backend import DeviceLost, DeviceMemoryError
from snark.errors import InvalidInput, WorkerFault
from snark.registry import NoProofTypes, plugins, type_settings
from workers.redis_faults import Backoff, refuses_writes, takes_writes
from workers.locks import LeaseLost, LockWaitAborted

T = TypeVar("T")


class Failure(StrEnum):
    PERMANENT = "permanent"
    REFUSED = "refused"
    TRANSIENT = "transient"
    OUTAGE = "outage"
    CANCELLED = "cancelled"

    @property
    def retried(self) -> bool:
        """Whether another attempt may succeed (after a backoff, or once Redis is back)."""
        return self in (Failure.TRANSIENT, Failure.OUTAGE)


#: Errors of this worker's situation: another attempt may succeed.
_TRANSIENT = (LeaseLost, LockWaitAborted, DeviceMemoryError, OSError)

#: Errors that say this worker cannot serve the work (``SettingsError`` lives in ``config``,
#: below ``snark.errors``).
_REFUSED = (WorkerFault, SettingsError)


class Cancelled(Exception):
    """The job ended while this work was under way; the work is dropped."""


class PartitionCancelled(Cancelled):
    """The job was cancelled; the partition stopped at a phase boundary."""


class PartitionFailed(Exception):
    """A partition failed in ``phase`` for ``reason``; ``kind`` says what happens next."""

    def __init__(self, phase: str, reason: str, kind: Failure) -> None:
        super().__init__(f"{phase}: {reason}")
        self.phase = phase
        self.reason = reason
        self.kind = Failure(kind)

    @property
    def transient(self) -> bool:
        """Whether another attempt may succeed (the label of the failure metric, and of the
        standalone worker's results)."""
        return self.kind.retried

    def __reduce__(self):
        return type(self), (self.phase, self.reason, self.kind.value)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every error it was raised from or while handling, once each."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or (None if current.__suppress_context__
                                        else current.__context__)


def caused_by_redis(exc: BaseException) -> bool:
    """An error that says Redis could not be reached or answered, itself or anywhere in the
    chain of errors it was raised from (a broker error of the same Redis counts too)."""
    return any(isinstance(e, (redis.RedisError, OperationalError)) for e in _chain(exc))


def refused_by_redis(exc: BaseException) -> bool:
    """An error that is Redis refusing a write (``workers.redis_faults``), anywhere in the
    chain: Redis answers, so waiting for a PING would not wait at all."""
    return any(refuses_writes(e) for e in _chain(exc))


def lost_device(exc: BaseException) -> bool:
    """Whether ``exc`` comes of this process's lost device context (``DeviceLost``, anywhere
    in its chain): CUDA refuses every later call in this process, so only a new process
    serves the device again."""
    return any(isinstance(e, DeviceLost) for e in _chain(exc))


def classify(exc: BaseException) -> Failure:
    """The taxonomy's verdict on ``exc`` (anything unknown is permanent: retrying an error
    nobody expected only repeats it)."""
    if isinstance(exc, PartitionFailed):
        return exc.kind
    if isinstance(exc, Cancelled):
        return Failure.CANCELLED
    if caused_by_redis(exc):
        return Failure.OUTAGE
    if isinstance(exc, InvalidInput):
        return Failure.PERMANENT
    if isinstance(exc, _REFUSED):
        return Failure.REFUSED
    if isinstance(exc, _TRANSIENT):
        return Failure.TRANSIENT
    return Failure.PERMANENT


#: An absolute path of three or more components (a worker's mount points, its home).
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~])(?:/[^\s/:'\",()]+){3,}")


def _directories(settings: Settings) -> list[tuple[str, Path | None]]:
    """The directory settings a job's files live under, as a job's error names them: the
    cluster's, and each proof type's (its settings' paths, ``$PROOFQ_<TYPE>_…``)."""
    found: list[tuple[str, Path | None]] = [("$PROOFQ_PARAMS_DIR", settings.params_dir),
                                            ("$PROOFQ_WITNESS_DIR", settings.witness_dir)]
    try:
        installed = plugins()
    except NoProofTypes:
        installed = []  # said where a type is looked up
    for each in installed:
        try:
            own = type_settings(each)
        except SettingsError:
            continue  # refused where it is used; an error's text is no place to say so
        if own is None:
            continue
        prefix = own.model_config.get("env_prefix", "")
        found += [(f"${prefix}{name.upper()}", value) for name, value in own
                  if isinstance(value, Path)]
    return list(dict.fromkeys(found))


def without_worker_paths(text: str, settings: Settings | None = None) -> str:
    """``text`` with a path under a directory setting named relative to it
    (``$PROOFQ_PARAMS_DIR/porep-2KiB-k1``), and any other absolute path cut to its last two
    components (``…/dir/file``): a job's error is read by its producer, who need not learn
    where a worker keeps things (the worker's own log has the whole path)."""
    for name, directory in _directories(settings or get_settings()):
        if directory is None:
            continue
        for form in {str(directory).rstrip("/"), str(Path(directory).resolve())}:
            if form:
                text = re.sub(r"(?<![\w.~/-])" + re.escape(form) + r"(?=/|$|[^\w.~-])", name,
                              text)
    return _ABSOLUTE_PATH.sub(lambda m: "…/" + "/".join(m.group(0).rsplit("/", 2)[1:]), text)


def describe(exc: BaseException) -> str:
    """One line naming the error: ``Type: message`` (a partition's failure: its reason),
    an ``OSError`` with its errno's name (``[ENOSPC] No space left on device: …/k/a.npy``);
    absolute paths shortened (``without_worker_paths``)."""
    if isinstance(exc, PartitionFailed):
        return exc.reason
    if isinstance(exc, OSError) and exc.errno is not None and exc.errno in errno.errorcode:
        where = f": {exc.filename}" if exc.filename else ""
        text = f"{type(exc).__name__}: [{errno.errorcode[exc.errno]}] {exc.strerror}{where}"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return without_worker_paths(" ".join(text.split()))


@contextmanager
def fails_job(fail: Callable[[str], object], step: str) -> Iterator[None]:
    """Run a step of a job: an error that is the job's (permanent) fails the job through
    ``fail(reason)``, the reason naming ``step``, and then propagates, so the task's own
    failure is recorded too; an error of this worker (refused or transient) becomes a
    refused ``PartitionFailed`` naming ``step``, for the task to give the work back. Outages
    and cancels propagate as they are. A job is never left half-started."""
    try:
        yield
    except Exception as exc:
        failure = classify(exc)
        if failure is Failure.PERMANENT:
            fail(f"{step}: {describe(exc)}")
        elif failure in (Failure.REFUSED, Failure.TRANSIENT):
            raise PartitionFailed(step, describe(exc), Failure.REFUSED) from exc
        raise


class RetryLater(Exception):
    """A failure with attempts left: run again after ``delay_s``."""

    def __init__(self, delay_s: float) -> None:
        super().__init__(f"retry in {delay_s:g} s")
        self.delay_s = delay_s


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how soon a transient failure is tried again: ``task_max_retries``
    retries, the pause doubling from ``retry_backoff_s``."""

    max_retries: int
    backoff_s: float

    @classmethod
    def from_settings(cls, settings: Settings) -> "RetryPolicy":
        return cls(settings.task_max_retries, settings.retry_backoff_s)

    @property
    def max_attempts(self) -> int:
        return self.max_retries + 1

    def retries(self, failure: Failure, attempt: int) -> bool:
        """Whether attempt number ``attempt`` (from 1), having failed so, gets another."""
        return failure is Failure.TRANSIENT and attempt < self.max_attempts

    def delay_s(self, attempt: int) -> float:
        """The pause after failed attempt ``attempt``: backoff, doubled per attempt."""
        return self.backoff_s * 2 ** (attempt - 1)

    def run_again(self, failure: PartitionFailed, attempt: int) -> None:
        """Raise what runs failed attempt ``attempt`` again under ``run_until_settled``: the
        failure itself for an outage (no attempt is spent waiting for Redis), ``RetryLater``
        for a transient failure with attempts left. Return when the failure is final here:
        permanent (the job fails) or this worker's (refused, or transient with no attempts
        left: the work goes back to the queue)."""
        if failure.kind is Failure.OUTAGE:
            raise failure
        if self.retries(failure.kind, attempt):
            raise RetryLater(self.delay_s(attempt)) from failure


def wait_for_redis(client: redis.Redis, *, first_s: float = 0.25, longest_s: float = 5.0,
                   log: logging.Logger | None = None) -> None:
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


def run_until_settled(run: Callable[[bool], T], client: redis.Redis, *, resumed: bool = False,
                      log: logging.Logger, name: str) -> T:
    """``run(resumed)`` until it ends without an outage or a ``RetryLater``: after an outage
    once Redis answers again, after a ``RetryLater`` once its delay has passed. ``resumed``
    tells ``run`` whether an earlier run may have done part of the work (False only on the
    first run, unless the caller knows better: a redelivered message)."""
    refusals = Backoff(log, f"{name}: waiting until Redis takes writes")
    while True:
        try:
            return run(resumed)
        except RetryLater as retry:
            time.sleep(retry.delay_s)
        except Exception as exc:
            if classify(exc) is not Failure.OUTAGE:
                raise
            if refused_by_redis(exc):
                # The pause grows across runs: a refusal the probe cannot see (an ACL on one
                # key) still never makes this a hot loop.
                refusals.wait(exc)
                wait_for_writes(client, refusals)
            else:
                log.warning("%s: Redis error, running it again once Redis is back: %s",
                            name, exc)
                wait_for_redis(client, log=log)
        resumed = True


def wait_for_writes(client: redis.Redis, backoff: Backoff) -> None:
    """Block until Redis takes a write again (and answers at all)."""
    while True:
        try:
            if takes_writes(client):
                return
            backoff.wait(redis.ResponseError("a probe write is refused"))
        except redis.RedisError as exc:
            backoff.wait(exc)
