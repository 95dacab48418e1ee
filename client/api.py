"""The Python API: submit proof jobs to a proofq cluster and collect the proofs.

::

    from client.api import Client
    client = Client("redis://host:6379/0")
    job = client.submit(c1, priority="high")          # refused at once if malformed
    proof = client.result(job, timeout=600)           # 192 bytes per partition

    # circom: a key imported with ``proofq keys add circuit.zkey``, one proof per witness
    job = client.submit(client.keyed_job("circom", key_id, ["w0.wtns", "w1.wtns"]),
                        proof_type="circom")
    result = json.loads(client.result(job, timeout=600))  # {"key", "proofs": [{"proof", "public"}]}

The module-level ``submit`` / ``status`` / ``wait`` / ``result`` / ``cancel`` do the same on
the cluster named by ``PROOFQ_REDIS_URL``.  Without a cluster, ``client.local_cluster``
starts a private one.  A client applies its own settings' input limits
(``max_input_bytes``, ``max_inline_witness_bytes``) to what it submits.
"""

from __future__ import annotations

import functools
import time
from os import PathLike
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import redis

from config.redis_keys import RedisKeys
from config.settings import Settings, get_settings
from snark.job_input import InputLimits
from snark.proof_types import Storage
from snark.registry import DEFAULT_TYPE, UnknownProofType, plugin
from tasks.application import create_app
from tasks.jobs import JobState, JobStore
from workers.redis_faults import MemoryGate
from tasks.submission import SubmitError, accept, enqueue

__all__ = ["Client", "JobError", "JobNotFound", "SubmitError", "submit", "status", "wait",
           "result", "cancel"]

_POLL_S = (0.02, 0.25)  # first and longest pause between status reads while waiting


class JobNotFound(LookupError):
    """No job has this id (or its state has expired)."""


class JobError(RuntimeError):
    """A job ended without a proof: ``status`` is 'failed' or 'cancelled'."""

    def __init__(self, state: JobState) -> None:
        super().__init__(f"job {state.job_id} {state.status}: {state.error}")
        self.state = state


class Client:
    """A connection to one cluster's Redis: job state is read there, tasks are sent there."""

    def __init__(self, redis_url: str, settings: Settings | None = None) -> None:
        settings = (settings or get_settings()).model_copy(update={"redis_url": redis_url})
        self.settings = settings
        self.redis_url = redis_url
        self.store = JobStore(redis.Redis.from_url(redis_url), ttl_s=settings.job_ttl_s,
                              results_maxlen=settings.results_maxlen,
                              keys=RedisKeys.of(settings))
        #: The Celery app bound to this cluster (control commands, sending tasks by name).
        self.app = create_app(settings)
        #: New jobs are refused while Redis is near its maxmemory (INFO read once a second).
        self.gate = MemoryGate(self.store.redis, settings.redis_high_water)

    def submit(self, job_input: Any, *, priority: str = "normal", job_id: str | None = None,
               proof_type: str = DEFAULT_TYPE) -> str:
        """Enqueue a job and return its id.

        ``job_input`` is the job's input: for porep JSON text, bytes, a dict or a ``C1``;
        for circom (``groth16``, its former name, is accepted too) the same forms of its
        JSON, or what ``keyed_job("circom", key, witnesses)`` makes.
        Submitting again under the same ``job_id`` with the same content returns the same
        job; different content is refused (``SubmitError``), as is malformed input, a job
        too costly for Redis, or any job while Redis is near its maxmemory (``RedisFull``, a
        ``SubmitError``), before anything is stored; a job whose message cannot be sent is
        taken back (``SubmitError`` saying so).  The checks that hash (challenge derivation,
        Merkle paths) run on the workers: a job that fails them ends ``failed`` with the reason
        (``result`` raises ``JobError``).
        """
        try:
            accepted = accept(self.store, job_input, limits=InputLimits.of(self.settings),
                              proof_type=proof_type, priority=priority, job_id=job_id,
                              gate=self.gate)
        except SubmitError as exc:  # RedisFull stays RedisFull: the intake waits on it
            raise type(exc)(f"{exc}{_file_name_hint(job_input)}") from None
        enqueue(self.app, self.store, accepted)
        return accepted.job_id

    def keyed_job(self, proof_type: str, key: str,
                  files: Iterable[str | Path | bytes]) -> Any:
        """The input of a ``proof_type`` job proving ``files`` under the imported key
        ``key``, as ``proofq submit --type T --key KEY FILES`` makes it (the type's
        ``with_key``; paths or the files' bytes; circom: one proof per ``.wtns``, files up to
        ``max_inline_witness_bytes`` inline, larger ones by their path under
        ``witness_dir``)."""
        with_key = plugin(proof_type).inputs.with_key
        if with_key is None:
            raise SubmitError(f"proof_type: {proof_type} takes no key")
        given = tuple(f if isinstance(f, bytes) else str(f) for f in files)
        return with_key(key, given, _read_file, InputLimits.of(self.settings),
                        Storage.of(self.settings))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """``client.<type>_job(key, files)``: ``keyed_job`` of a type that takes a key
        (``circom_job``, and ``groth16_job`` by circom's 0.1 name)."""
        if name.endswith("_job"):
            try:
                takes_key = plugin(name[:-len("_job")]).inputs.with_key is not None
            except UnknownProofType:
                takes_key = False
            if takes_key:
                return functools.partial(self.keyed_job, name[:-len("_job")])
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def status(self, job_id: str) -> JobState:
        state = self.store.state(job_id)
        if state is None:
            raise JobNotFound(f"job {job_id}: no such job")
        return state

    def wait(self, job_id: str, timeout: float | None = None, *,
             check: Callable[[], None] | None = None,
             on_state: Callable[[JobState], None] | None = None) -> JobState:
        """Block until the job has ended (done, failed or cancelled); ``TimeoutError`` if not.

        ``check`` runs between status reads and may raise to give up early (a private
        cluster's worker that died); ``on_state`` sees every state read (a status line).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = _POLL_S[0]
        while True:
            state = self.status(job_id)
            if on_state is not None:
                on_state(state)
            if state.terminal:
                return state
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id}: still {state.status} after {timeout}s")
            if check is not None:
                check()
            # The deadline may have passed during check(): sleep(negative) would raise.
            time.sleep(pause if deadline is None
                       else max(0.0, min(pause, deadline - time.monotonic())))
            pause = min(pause * 2, _POLL_S[1])

    def result(self, job_id: str, timeout: float | None = 0, *,
               check: Callable[[], None] | None = None,
               on_state: Callable[[JobState], None] | None = None) -> bytes:
        """The job's result, waiting up to ``timeout`` s (None: for ever): porep's proofs
        concatenated, circom's snarkjs JSON text (``snark.snarkjs.worker``).

        ``JobError`` if the job failed or was cancelled, ``TimeoutError`` if it is still running.
        """
        state = self.wait(job_id, timeout, check=check, on_state=on_state)
        result = self.store.result(job_id) if state.status == "done" else None
        if result is None:  # failed, cancelled, or expired since it was done
            raise JobError(state)
        return result

    def cancel(self, job_id: str) -> str:
        """Stop a job; returns its status afterwards ('cancelled', or how it had already ended)."""
        outcome = self.store.cancel(job_id)
        if outcome == "missing":
            raise JobNotFound(f"job {job_id}: no such job")
        return outcome

    def close(self) -> None:
        self.store.redis.close()
        self.app.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _file_name_hint(job_input: Any) -> str:
    """A hint for a job input that reads like a file's name, not its content."""
    if isinstance(job_input, PathLike) or (
            isinstance(job_input, str) and len(job_input) < 4096
            and not job_input.lstrip().startswith(("{", "["))):
        name = str(job_input)
        return (f" (job_input {name!r} looks like a file name: submit takes the job's "
                f"content, e.g. Path({name!r}).read_bytes())")
    return ""


@functools.cache
def default_client() -> Client:
    settings = get_settings()
    if settings.redis_url is None:
        raise RuntimeError("PROOFQ_REDIS_URL is not set: point it at a proofq cluster, or "
                           "start a private one with client.local_cluster.local_cluster()")
    return Client(settings.redis_url, settings)


def submit(job_input: Any, priority: str = "normal", job_id: str | None = None,
           proof_type: str = DEFAULT_TYPE) -> str:
    return default_client().submit(job_input, priority=priority, job_id=job_id,
                                   proof_type=proof_type)


def status(job_id: str) -> JobState:
    return default_client().status(job_id)


def wait(job_id: str, timeout: float | None = None) -> JobState:
    return default_client().wait(job_id, timeout)


def result(job_id: str, timeout: float | None = 0) -> bytes:
    return default_client().result(job_id, timeout)


def cancel(job_id: str) -> str:
    return default_client().cancel(job_id)


def _read_file(path: str) -> bytes:
    return Path(path).read_bytes()
