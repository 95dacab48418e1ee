"""The failure taxonomy and the retry policy (``workers.failures``): one verdict for every
error, whatever its depth in the chain, and one loop that waits out outages and retries."""

from __future__ import annotations

import logging

import pytest
import redis
from kombu.exceptions import OperationalError

from config.settings import SettingsError
from snark.backend import BackendUnavailable, DeviceMemoryError
from snark.errors import InvalidInput, WorkerFault
from snark.keys import KeyFileError, ParamsDirError
from snark.registry import UnknownProofType
from snark.snarkjs.job import CircomJobError
from tasks.pipeline import JobEnded
from workers.failures import (Failure, PartitionCancelled, PartitionFailed, RetryLater,
                              RetryPolicy, caused_by_redis, classify, fails_job,
                              run_until_settled)
from workers.locks import LeaseLost

log = logging.getLogger(__name__)


def _chained(exc: BaseException, *, cause: BaseException | None = None,
             context: BaseException | None = None, depth: int = 1) -> BaseException:
    """``exc`` raised from ``cause`` (or while handling ``context``), under ``depth - 1``
    RuntimeErrors, each raised from the one before."""
    if cause is not None:
        exc.__cause__ = cause  # as ``raise exc from cause`` sets it
    exc.__context__ = context or cause
    for level in range(depth - 1):
        outer = RuntimeError(f"wrapper {level}")
        outer.__cause__ = exc
        exc = outer
    return exc


@pytest.mark.parametrize("exc, verdict", [
    (InvalidInput("bad input"), Failure.PERMANENT),
    (CircomJobError("witnesses[0]: bad"), Failure.PERMANENT),
    (UnknownProofType("proof_type: unknown"), Failure.PERMANENT),
    (ValueError("nobody expected this"), Failure.PERMANENT),
    (KeyError("surprise"), Failure.PERMANENT),
    (KeyFileError("key: corrupt"), Failure.REFUSED),
    (ParamsDirError("takes no files"), Failure.REFUSED),
    (SettingsError("PROOFQ_X: bad"), Failure.REFUSED),
    (BackendUnavailable("no device"), Failure.REFUSED),
    (WorkerFault("cannot serve"), Failure.REFUSED),
    (OSError("disk"), Failure.TRANSIENT),
    (LeaseLost("lease gone"), Failure.TRANSIENT),
    (DeviceMemoryError("out of memory"), Failure.TRANSIENT),
    (redis.ConnectionError("refused"), Failure.OUTAGE),
    (OperationalError("broker gone"), Failure.OUTAGE),
    (PartitionCancelled("cancelled"), Failure.CANCELLED),
    (JobEnded("input gone"), Failure.CANCELLED),
])
def test_each_kind_of_error_has_its_verdict(exc, verdict):
    assert classify(exc) is verdict


def test_redis_anywhere_in_the_chain_is_an_outage(rng):
    depth = rng.randrange(1, 6)
    redis_error = redis.TimeoutError("no answer")
    caused = _chained(ValueError("while parsing"), cause=redis_error, depth=depth)
    assert classify(caused) is Failure.OUTAGE
    during = _chained(KeyError("x"), context=redis_error, depth=depth)
    assert classify(during) is Failure.OUTAGE
    # ``raise … from None`` says the earlier error is not the cause: not an outage
    suppressed = _chained(ValueError("mine"), context=redis_error)
    suppressed.__suppress_context__ = True
    assert not caused_by_redis(suppressed) and classify(suppressed) is Failure.PERMANENT
    assert classify(_chained(ValueError("mine"), depth=depth)) is Failure.PERMANENT


def test_a_partition_failure_keeps_its_kind_and_survives_a_round_trip(rng):
    kind = rng.choice(list(Failure))
    failure = PartitionFailed("compute", "LeaseLost: gone", kind)
    assert classify(failure) is kind
    assert failure.transient == (kind in (Failure.TRANSIENT, Failure.OUTAGE))
    copy = type(failure)(*failure.__reduce__()[1])
    assert (copy.phase, copy.reason, copy.kind, str(copy)) == (
        "compute", "LeaseLost: gone", kind, "compute: LeaseLost: gone")


@pytest.mark.parametrize("exc, recorded", [
    (InvalidInput("bad"), "setup: InvalidInput: bad"),
    (ValueError("bad"), "setup: ValueError: bad"),
    (redis.ConnectionError("gone"), None),
    (PartitionCancelled("cancelled"), None),
])
def test_fails_job_records_the_jobs_errors_and_lets_everything_through(exc, recorded):
    failed = []
    with pytest.raises(type(exc)), fails_job(failed.append, "setup"):
        raise exc
    assert failed == ([] if recorded is None else [recorded])
    with fails_job(failed.append, "setup"):
        pass
    assert len(failed) == (0 if recorded is None else 1)


@pytest.mark.parametrize("exc", [KeyFileError("k: sha256 does not match"),
                                 OSError("disk full"), SettingsError("PROOFQ_X: bad")])
def test_fails_job_leaves_the_job_alone_when_this_worker_cannot_serve_it(exc):
    """A worker's own fault is no reason to fail a user's job: the step's error comes out
    as a refused failure naming the step, for the task to give the work back."""
    failed = []
    with pytest.raises(PartitionFailed) as caught, fails_job(failed.append, "setup"):
        raise exc
    assert failed == []
    assert caught.value.kind is Failure.REFUSED and caught.value.phase == "setup"
    assert caught.value.__cause__ is exc


def test_the_policy_retries_transient_failures_with_doubling_pauses(rng):
    policy = RetryPolicy(max_retries=rng.randrange(1, 5), backoff_s=rng.uniform(0.1, 3))
    transient = PartitionFailed("mem", "DeviceMemoryError: full", Failure.TRANSIENT)
    for attempt in range(1, policy.max_attempts):
        with pytest.raises(RetryLater) as later:
            policy.run_again(transient, attempt)
        assert later.value.delay_s == pytest.approx(policy.backoff_s * 2 ** (attempt - 1))
        assert later.value.__cause__ is transient
    policy.run_again(transient, policy.max_attempts)  # the last attempt: final
    policy.run_again(PartitionFailed("verify", "no", Failure.PERMANENT), 1)
    outage = PartitionFailed("compute", "ConnectionError: gone", Failure.OUTAGE)
    with pytest.raises(PartitionFailed) as again:
        policy.run_again(outage, policy.max_attempts)  # no attempt is spent on an outage
    assert again.value is outage


def test_run_until_settled_waits_out_outages_and_retries(redis_url):
    client = redis.Redis.from_url(redis_url)
    seen = []

    def run(resumed: bool) -> str:
        seen.append(resumed)
        if len(seen) == 1:
            raise RetryLater(0.0)
        if len(seen) == 2:
            raise _chained(ValueError("state"), cause=redis.ConnectionError("gone"))
        return "settled"

    assert run_until_settled(run, client, log=log, name="test") == "settled"
    assert seen == [False, True, True]
    with pytest.raises(KeyError):  # anything else is the caller's
        run_until_settled(lambda resumed: {}["missing"], client, log=log, name="test")
