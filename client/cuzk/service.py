"""The ProvingEngine RPCs, each on the cluster's Redis (job store, events, workers' cards).

A request is one proofq job (``client.api.Client.submit``): every worker of the cluster
serves it, the job view shows it, and it runs on when the gateway dies; ``client.cuzk.
requests`` maps request ids to job ids. ``Prove`` and ``AwaitProof`` poll the job's state
until it ends, the wait runs out or the caller goes away (its deadline, or a cancel).

Answers: a request proofq will not prove is ``FAILED`` with one line naming the field; a
malformed one (no ``submit``, a kind cuzk does not define, a circuit id it does not know) is
``INVALID_ARGUMENT``; PreloadSRS and EvictSRS go to every live worker (``client.cuzk.srs``); Redis
unreachable is ``UNAVAILABLE`` (or near its ``maxmemory``: nothing is stored), a job id
that names nothing ``NOT_FOUND``. Every RPC logs one line (``log_request``).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import redis

from client.api import Client
from client.cuzk import proving_pb2 as pb
from client.cuzk import proving_pb2_grpc as pb_grpc
from client.cuzk.cluster import ClusterView
from client.cuzk.kinds import Kind, Refused, kind_of
from client.cuzk.requests import RequestJobs
from client.cuzk.srs import KeyControl, KeyControlError
from tasks.jobs import JobState, JobStatus
from tasks.submission import RedisFull, SubmitError

log = logging.getLogger("proofq.grpc")

_POLL_S = (0.02, 0.25)  # first and longest pause between state reads while waiting
Status = pb.AwaitProofResponse


class _Abort(Exception):
    """An RPC's error status and its one-line message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class _Outcome:
    """What the log line says of a request."""

    job: str = "-"
    kind: str = "-"
    sector: str = "-"
    outcome: str = "-"


def _rpc(method: Callable) -> Callable:
    """An RPC body with its statuses and its log line: ``_Abort`` → its code, a Redis error
    → UNAVAILABLE."""
    name = method.__name__

    @functools.wraps(method)
    def run(self, request, context):
        began = time.monotonic()
        said = _Outcome()
        try:
            answer = method(self, request, context, said)
        except (_Abort, KeyControlError) as abort:
            said.outcome = f"{abort.code.name}: {abort}"
            self.log_request(name, said, began)
            context.abort(abort.code, str(abort))
        except redis.RedisError as exc:
            message = (f"redis: unreachable ({' '.join(str(exc).split())[:160]}); a job "
                       f"already stored runs on: retry with the same request_id")
            said.outcome = f"UNAVAILABLE: {message}"
            self.log_request(name, said, began)
            context.abort(grpc.StatusCode.UNAVAILABLE, message)
        self.log_request(name, said, began)
        return answer

    return run


class ProvingEngine(pb_grpc.ProvingEngineServicer):
    def __init__(self, client: Client, *, started: float | None = None) -> None:
        self.client = client
        self.store = client.store
        self.jobs = RequestJobs(client.store)
        self.cluster = ClusterView(client, started=started or time.time())
        self.keys = KeyControl(client)

    # -- one line per request -------------------------------------------------------------
    def log_request(self, rpc: str, said: _Outcome, began: float) -> None:
        log.info("%s job=%s kind=%s sector=%s outcome=%s seconds=%.3f", rpc, said.job,
                 said.kind, said.sector, said.outcome, time.monotonic() - began)

    # -- submitting and waiting -----------------------------------------------------------
    def _submit(self, request: pb.SubmitProofRequest, said: _Outcome) -> tuple[str, str | None]:
        """The job that answers ``request`` (made now, or the one it attaches to), and the
        refusal when it makes none."""
        try:
            kind: Kind = kind_of(request)
        except ValueError as exc:
            raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None
        said.kind = kind.queue
        said.sector = f"{request.miner_id}/{request.sector_number}"
        job_id = self.jobs.job_for(request.request_id)
        said.job = job_id
        try:
            job = kind.job(request, self.client.settings)
            self.client.submit(job.job_input, priority=job.priority, job_id=job_id,
                               proof_type=job.proof_type)
        except RedisFull as exc:
            raise _Abort(grpc.StatusCode.UNAVAILABLE, str(exc)) from None
        except Refused as exc:
            message = _one_line(str(exc))
            self.jobs.refuse(job_id, message)
            return job_id, message
        except SubmitError as exc:  # the proof type's producer refused the input
            if str(exc).startswith("enqueue: "):  # stored or not, Redis took no message
                raise _Abort(grpc.StatusCode.UNAVAILABLE, _one_line(str(exc))) from None
            message = f"{kind.input_field}: {_one_line(str(exc))}"
            if str(exc).startswith("job_id: "):
                message = (f"request_id: {request.request_id!r} names job {job_id}, which "
                           f"has other content")
            self.jobs.refuse(job_id, message)
            return job_id, message
        self.jobs.accepted(job_id, request.request_id)
        return job_id, None

    def _wait(self, job_id: str, timeout_s: float | None, context) -> JobState | None:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        pause = _POLL_S[0]
        while True:
            state = self.store.state(job_id)
            if state is None or state.terminal or not context.is_active():
                return state
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return state
            time.sleep(pause if left is None else min(pause, left))
            pause = min(pause * 2, _POLL_S[1])

    def _answer(self, job_id: str, state: JobState | None, said: _Outcome
                ) -> pb.AwaitProofResponse:
        if state is None:
            refusal = self.jobs.refusal(job_id)
            if refusal is None:
                raise _Abort(grpc.StatusCode.NOT_FOUND, f"job_id: no job {job_id!r} (never "
                             f"submitted, or its state expired)")
            said.outcome = f"failed: {refusal}"
            return Status(job_id=job_id, status=Status.FAILED, error_message=refusal)
        said.outcome = state.status
        if state.status == JobStatus.DONE:
            proof = self.store.result(job_id) or b""
            answer = Status(job_id=job_id, status=Status.COMPLETED, proof=proof)
            answer.MergeFrom(self.cluster.timings(state))
            return answer
        if state.status == JobStatus.FAILED:
            error = _one_line(state.error or "failed")
            said.outcome = f"failed: {error}"
            return Status(job_id=job_id, status=Status.FAILED, error_message=error)
        if state.status == JobStatus.CANCELLED:
            return Status(job_id=job_id, status=Status.CANCELLED)
        said.outcome = f"timeout ({state.status})"
        return Status(job_id=job_id, status=Status.TIMEOUT)

    # -- the RPCs -------------------------------------------------------------------------
    @_rpc
    def SubmitProof(self, request, context, said):  # noqa: N802 (the service's names)
        job_id, refusal = self._submit(request, said)
        said.outcome = f"refused: {refusal}" if refusal else "submitted"
        position = 0 if refusal else self.cluster.queue_position(job_id)
        return pb.SubmitProofResponse(job_id=job_id, queue_position=position)

    @_rpc
    def AwaitProof(self, request, context, said):  # noqa: N802
        said.job = request.job_id
        timeout = None if request.timeout_ms == 0 else request.timeout_ms / 1000
        return self._answer(request.job_id, self._wait(request.job_id, timeout, context), said)

    @_rpc
    def Prove(self, request, context, said):  # noqa: N802
        if not request.HasField("submit"):
            raise _Abort(grpc.StatusCode.INVALID_ARGUMENT,
                         "submit: missing (Prove takes a SubmitProofRequest)")
        job_id, refusal = self._submit(request.submit, said)
        if refusal is not None:
            said.outcome = f"refused: {refusal}"
            return pb.ProveResponse(result=Status(job_id=job_id, status=Status.FAILED,
                                                  error_message=refusal))
        state = self._wait(job_id, None, context)
        return pb.ProveResponse(result=self._answer(job_id, state, said))

    @_rpc
    def CancelProof(self, request, context, said):  # noqa: N802
        said.job = request.job_id
        before = self.store.state(request.job_id)
        if before is None:
            raise _Abort(grpc.StatusCode.NOT_FOUND, f"job_id: no job {request.job_id!r}")
        said.outcome = self.client.cancel(request.job_id)
        running = before.status in (JobStatus.PROVING, JobStatus.ASSEMBLING)
        return pb.CancelProofResponse(was_running=running and said.outcome == "cancelled")

    @_rpc
    def GetStatus(self, request, context, said):  # noqa: N802
        said.outcome = "ok"
        return self.cluster.status()

    @_rpc
    def GetMetrics(self, request, context, said):  # noqa: N802
        said.outcome = "ok"
        return pb.GetMetricsResponse(prometheus_text=self.cluster.metrics())

    @_rpc
    def PreloadSRS(self, request, context, said):  # noqa: N802
        said.job = request.circuit_id
        answer, said.outcome = self.keys.preload(request.circuit_id, context.time_remaining(),
                                                 lambda: not context.is_active())
        return answer

    @_rpc
    def EvictSRS(self, request, context, said):  # noqa: N802
        said.job = request.circuit_id
        answer, said.outcome = self.keys.evict(request.circuit_id, context.time_remaining(),
                                               lambda: not context.is_active())
        return answer


def _one_line(text: str) -> str:
    return " ".join(text.split())
