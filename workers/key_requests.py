"""Requests to make a proving key resident ahead of work, or to let one go, sent to every
live worker process, and their answers (the gRPC door's PreloadSRS and EvictSRS;
docs/ARCHITECTURE.md §8). The door imports this module alone.

A request is an entry of the stream ``<ns>:key-requests`` (``RedisKeys.key_requests``), its
fields plain strings (no pickle): ``id``, ``op`` (``preload`` or ``evict``), ``type`` and
``name`` (the key as the worker keeps it: its card's ``<type>/<name>``), ``directory`` (the
key's directory under the worker's ``PROOFQ_PARAMS_DIR``: preload only), ``wait_s`` (how
long the asker waits). Each worker process reads the stream from its start, in a thread of
its own (``KeyRequests``), carries each request out through its runtime's key owner
(``workers.key_residency``) and answers in the hash ``<ns>:key-replies:<id>``: worker name → a
``KeyReply`` as JSON, kept ``REPLY_TTL_S``. A worker waits for the GPU's memory lock at
most ``wait_s``; the asker waits for the workers whose cards were live when it asked (a
worker reads the stream from before its card is first written, so none of them misses it).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass

import redis

from config.redis_keys import RedisKeys

log = logging.getLogger(__name__)

OPS = ("preload", "evict")
#: The answers outlive any asker's wait.
REPLY_TTL_S = 3600
#: The stream keeps this many requests (a worker reads them as they come).
STREAM_CAP = 1000
#: A key's directory: one name under the params directory, no path.
_DIRECTORY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")
_READ_BLOCK_MS = 1000


@dataclass(frozen=True)
class KeyRequest:
    op: str
    proof_type: str
    name: str
    directory: str = ""
    wait_s: float = 60.0
    request_id: str = ""

    def fields(self) -> dict[str, str]:
        return {"id": self.request_id, "op": self.op, "type": self.proof_type,
                "name": self.name, "directory": self.directory, "wait_s": f"{self.wait_s:g}"}

    @classmethod
    def from_fields(cls, raw: dict[bytes, bytes]) -> "KeyRequest":
        """The request a stream entry holds; ``ValueError`` naming the field it cannot take."""
        f = {k.decode(): v.decode() for k, v in raw.items()}
        if f.get("op") not in OPS:
            raise ValueError(f"op: {f.get('op')!r} is not one of {', '.join(OPS)}")
        for field in ("id", "type", "name"):
            if not f.get(field):
                raise ValueError(f"{field}: missing")
        directory = f.get("directory", "")
        if f["op"] == "preload" and (not _DIRECTORY.fullmatch(directory)
                                     or directory.strip(".") == ""):
            raise ValueError(f"directory: {directory!r} is not a key directory's name")
        try:
            wait_s = float(f.get("wait_s", ""))
        except ValueError:
            raise ValueError(f"wait_s: {f.get('wait_s')!r} is not a number") from None
        return cls(f["op"], f["type"], f["name"], directory, max(0.0, wait_s), f["id"])


@dataclass(frozen=True)
class KeyReply:
    """One worker process's answer."""

    worker: str
    ok: bool
    was_resident: bool = False  # preload: already loaded; evict: was loaded
    milliseconds: int = 0       # preload: loaded and made resident in
    nbytes: int = 0             # the key's resident bytes (evict: let go, now or deferred)
    device: str = ""            # host:gpu of the worker
    shared: bool = False        # the device's processes share one copy (a GPU's keeper)
    deferred: bool = False      # evict: in use, let go when its last partition ends
    error: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: bytes | str) -> "KeyReply":
        return cls(**json.loads(text))


def ask(client: redis.Redis, keys: RedisKeys, request: KeyRequest) -> KeyRequest:
    """Send ``request`` to every worker process; the request as sent (with its id)."""
    sent = KeyRequest(request.op, request.proof_type, request.name, request.directory,
                      request.wait_s, uuid.uuid4().hex)
    client.xadd(keys.key_requests, sent.fields(), maxlen=STREAM_CAP, approximate=True)
    return sent


def replies(client: redis.Redis, keys: RedisKeys, request_id: str) -> dict[str, KeyReply]:
    """The answers given so far, by worker."""
    return {worker.decode(): KeyReply.from_json(text)
            for worker, text in client.hgetall(keys.key_replies(request_id)).items()}


def wait_for(client: redis.Redis, keys: RedisKeys, request_id: str, workers: set[str],
             until: float, stop: Callable[[], bool] = lambda: False) -> dict[str, KeyReply]:
    """The answers so far, once every one of ``workers`` answered, at ``until`` (monotonic)
    or when ``stop()`` says so (the asker went away), whichever is first."""
    pause = 0.02
    while True:
        got = replies(client, keys, request_id)
        if workers <= got.keys() or time.monotonic() >= until or stop():
            return got
        time.sleep(min(pause, max(0.0, until - time.monotonic())))
        pause = min(pause * 2, 0.25)


class KeyRequests:
    """The thread that reads the requests for one worker process and answers them through
    ``carry_out`` (the runtime's); a request it cannot read is answered with why."""

    def __init__(self, client: redis.Redis, keys: RedisKeys, worker: str,
                 carry_out: Callable[[KeyRequest], KeyReply]) -> None:
        self.client = client
        self.keys = keys
        self.worker = worker
        self.carry_out = carry_out
        self._stop = threading.Event()
        self._last = self._newest()
        self._thread = threading.Thread(target=self._run, name="proofq-key-requests",
                                        daemon=True)
        self._thread.start()

    def _newest(self) -> str:
        """The id to read after: the newest request sent before this process started."""
        newest = self.client.xrevrange(self.keys.key_requests, count=1)
        return newest[0][0].decode() if newest else "0-0"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                entries = self.client.xread({self.keys.key_requests: self._last},
                                            block=_READ_BLOCK_MS, count=16)
            except redis.RedisError as exc:  # Redis away: read on once it is back
                log.debug("key requests not read: %s", exc)
                self._stop.wait(1.0)
                continue
            for _, messages in entries:
                for entry_id, fields in messages:
                    self._last = entry_id.decode()
                    self._answer(fields)

    def _answer(self, fields: dict[bytes, bytes]) -> None:
        request_id = fields.get(b"id", b"").decode()
        try:
            request = KeyRequest.from_fields(fields)
        except ValueError as exc:
            reply = KeyReply(self.worker, False, error=f"request: {exc}")
        else:
            try:
                reply = self.carry_out(request)
            except Exception as exc:  # answered, never the end of the thread
                log.exception("key request %s", request)
                reply = KeyReply(self.worker, False,
                                 error=" ".join(f"{type(exc).__name__}: {exc}".split())[:500])
        if not request_id:
            return
        try:
            with self.client.pipeline(transaction=True) as pipe:
                pipe.hset(self.keys.key_replies(request_id), self.worker, reply.to_json())
                pipe.expire(self.keys.key_replies(request_id), REPLY_TTL_S)
                pipe.execute()
        except redis.RedisError as exc:
            log.warning("key request %s: answer not written: %s", request_id,
                        " ".join(str(exc).split())[:200])

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=_READ_BLOCK_MS / 1000 + 2)
