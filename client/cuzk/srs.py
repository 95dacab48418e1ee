"""PreloadSRS and EvictSRS: a circuit's key made resident on every live worker ahead of
work, or let go, through each worker's key owner (``workers.key_requests``,
``workers.key_residency``).

The circuit id is cuzk's (``client.cuzk.circuits``); an unknown one is INVALID_ARGUMENT
naming the known ones. The workers asked are those whose cards are live when the request
comes (``workers.card``); the answer waits for each of them (one still alive that has not
answered when the caller's deadline, or ``WAIT_S``, runs out: DEADLINE_EXCEEDED, and it
loads on).

Preload: on a GPU each process of it asks the GPU's key keeper, which makes the one shared
copy resident (the first) or maps it (the others); on the CPU each process loads its own.
``already_loaded`` when every worker had it resident; ``load_time_ms`` the longest load. A
key not on the workers' disk (not made or converted yet) is FAILED_PRECONDITION naming the
file expected, as cuzk refuses a missing ``.params`` file: making a key is a job's work
(minutes to hours), not a preload's.

Evict: each process lets the key go now, or, while a partition uses it, when that partition
ends (the log line says how many wait). ``was_loaded`` when any worker had it resident;
``freed_bytes`` the bytes given back now: a process's own copy each, a GPU's shared copy
once, when none of its processes still uses it.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable

import grpc

from client.api import Client
from client.cuzk import proving_pb2 as pb
from client.cuzk.circuits import Circuit, circuit
from workers.card import read_cards
from workers.key_requests import KeyReply, KeyRequest, ask, wait_for

#: The longest a preload or an eviction waits when its caller sets no deadline (a 32 GiB
#: key: minutes from disk, ~30 s more to the device).
WAIT_S = 900.0
#: What is kept of the caller's deadline to answer in.
_MARGIN_S = 0.5


class KeyControlError(Exception):
    """An RPC's error status and its one-line message."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class KeyControl:
    def __init__(self, client: Client) -> None:
        self.client = client
        self.redis = client.store.redis
        self.keys = client.store.keys

    def preload(self, circuit_id: str, remaining_s: float | None,
                gone: Callable[[], bool]) -> tuple[pb.PreloadSrsResponse, str]:
        """The answer and the log line's outcome."""
        known = _circuit(circuit_id)
        replies, workers = self._ask(known, "preload", remaining_s, gone)
        if not workers:
            raise KeyControlError(grpc.StatusCode.FAILED_PRECONDITION,
                                  f"circuit_id: {circuit_id}: no worker is live to load it on")
        loaded = [r for r in replies if r.ok]
        failed = sorted({r.error for r in replies if not r.ok})
        if not loaded and failed:
            raise KeyControlError(grpc.StatusCode.FAILED_PRECONDITION,
                                  f"circuit_id: {circuit_id}: {'; '.join(failed)}")
        already = all(r.was_resident for r in loaded)
        took = max((r.milliseconds for r in loaded if not r.was_resident), default=0)
        said = (f"{'already loaded' if already else f'loaded in {took} ms'} on "
                f"{len(loaded)} of {len(workers)} workers")
        if failed:
            said += f"; refused: {'; '.join(failed)}"
        return pb.PreloadSrsResponse(already_loaded=already, load_time_ms=took), said

    def evict(self, circuit_id: str, remaining_s: float | None,
              gone: Callable[[], bool]) -> tuple[pb.EvictSrsResponse, str]:
        known = _circuit(circuit_id)
        replies, workers = self._ask(known, "evict", remaining_s, gone)
        held = [r for r in replies if r.ok and r.was_resident]
        deferred = [r for r in held if r.deferred]
        said = (f"let go by {len(held) - len(deferred)} of {len(workers)} workers"
                + (f", {len(deferred)} when their partitions end (in use)" if deferred else ""))
        failed = sorted({r.error for r in replies if not r.ok})
        if failed:
            said += f"; refused: {'; '.join(failed)}"
        return pb.EvictSrsResponse(was_loaded=bool(held), freed_bytes=_freed(held)), said

    def _ask(self, known: Circuit, op: str, remaining_s: float | None,
             gone: Callable[[], bool]) -> tuple[list[KeyReply], set[str]]:
        """Every live worker's answer; DEADLINE_EXCEEDED if one still alive gave none."""
        workers = {card.worker for card in read_cards(self.redis, self.keys.card_prefix)}
        if not workers:
            return [], workers
        wait_s = WAIT_S if remaining_s is None else max(0.0, min(WAIT_S,
                                                                 remaining_s - _MARGIN_S))
        directory = known.cluster_key_name()
        sent = ask(self.redis, self.keys, KeyRequest(op, known.proof_type, known.key_name(),
                                                     directory, wait_s))
        got = wait_for(self.redis, self.keys, sent.request_id, workers,
                       time.monotonic() + wait_s, gone)
        missing = workers - got.keys()
        if missing:  # gone since (their cards expired) or still at it
            alive = {card.worker for card in read_cards(self.redis, self.keys.card_prefix)}
            late = sorted(missing & alive)
            if late:
                raise KeyControlError(grpc.StatusCode.DEADLINE_EXCEEDED, (
                    f"circuit_id: {known.circuit_id}: {len(late)} of {len(workers)} workers did "
                    f"not answer within {wait_s:.1f} s ({', '.join(late)}; they carry on)"))
            workers -= missing
        return [got[w] for w in sorted(workers)], workers


def _circuit(circuit_id: str) -> Circuit:
    if not circuit_id:
        raise KeyControlError(grpc.StatusCode.INVALID_ARGUMENT, "circuit_id: empty")
    try:
        return circuit(circuit_id)
    except ValueError as exc:
        raise KeyControlError(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None


def _freed(held: list[KeyReply]) -> int:
    """Bytes given back now: each process's own copy; a GPU's shared copy once, when none
    of its processes waits for a partition."""
    freed = sum(r.nbytes for r in held if not r.shared and not r.deferred)
    devices: defaultdict[str, list[KeyReply]] = defaultdict(list)
    for reply in held:
        if reply.shared:
            devices[reply.device].append(reply)
    return freed + sum(max(r.nbytes for r in rs) for rs in devices.values()
                       if not any(r.deferred for r in rs))
