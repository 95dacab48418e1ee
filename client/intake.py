"""Intake for producers that are not Python: a Redis stream of job requests
(docs/ARCHITECTURE.md §6).

A producer needs nothing but Redis::

    XADD proofq:intake * job <id> type porep-demo priority normal c1 <C1 JSON>
    XADD proofq:intake * type circom input <circom job JSON>

(``job``, ``type`` and ``priority`` are optional; ``input`` is the job's input for any type,
``c1`` its name for porep.)  Intake processes read the stream through
one consumer group, each request is submitted exactly as ``Client.submit`` would, and the
outcome appears where every job's does: ``proofq:job:<id>`` / ``…:result`` and the
``proofq:results`` stream, where a refused request is published with status ``rejected``
and the error.

A refused request is published with ``job`` = ``intake-<entry id>``, its own ``entry`` id
and the ``requested_job`` it named: never under a job id it asked for, which may belong to
another job (a conflict is exactly that), and it is logged with the reason.

Crash safety: a request is acknowledged only after it has been submitted or refused.  One
read by an intake process that died stays pending; any other intake process claims it once
it has been idle for ``reclaim_idle_s`` and submits it again.  The job id of a request
without one is derived from its stream entry id, so a second submission of the same entry
is the same job (idempotent), never a duplicate.

Redis outages: ``run`` keeps going.  A Redis or broker error ends the current round, and
so does a Redis that refuses writes (out of memory, a replica, an ACL refusal) or is too full
to take new jobs (``RedisFull``): such a request is not refused, it waits.  The consumer
waits (backoff from ``retry_first_s`` to ``retry_longest_s``, a log line at most every
30 s), makes sure the group still exists, and first serves its own pending entries again,
so nothing it read is lost.

Poison requests: an entry that cannot be handled for any other reason, whatever it holds,
is published ``rejected`` and acknowledged: it never stops the intake, nor the entries
behind it.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable

import redis
from kombu.exceptions import OperationalError

from client.api import Client
from config.redis_keys import DEFAULT_KEYS, RedisKeys
from config.settings import get_settings
from workers.redis_faults import Backoff
from tasks.submission import RedisFull, SubmitError

log = logging.getLogger(__name__)

#: The default namespace's (an intake's own: ``Intake.stream``, ``Intake.group``).
INTAKE_STREAM = DEFAULT_KEYS.intake
GROUP = DEFAULT_KEYS.intake_group


def consumer_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def serving_here(client: redis.Redis, within_s: float,
                 keys: RedisKeys | None = None) -> list[str]:
    """The intake consumers of this host that read the stream within ``within_s`` (a
    consumer blocks at most ``block_s`` per read: a live one is never idle for long)."""
    host = f"{socket.gethostname()}:"
    keys = keys or RedisKeys.of(get_settings())
    try:
        consumers = client.xinfo_consumers(keys.intake, keys.intake_group)
    except redis.ResponseError:  # no stream or no group yet: nobody has served
        return []
    return [c["name"].decode() for c in consumers
            if c["name"].decode().startswith(host) and c["idle"] <= within_s * 1000]


class Intake:
    """One consumer of the intake group, submitting through ``client``."""

    def __init__(self, client: Client, *, name: str | None = None, reclaim_idle_s: float = 60.0,
                 batch: int = 16, block_s: float = 1.0, retry_first_s: float = 0.5,
                 retry_longest_s: float = 30.0) -> None:
        self.client = client
        self.redis: redis.Redis = client.store.redis
        self.stream = client.store.keys.intake
        self.group = client.store.keys.intake_group
        self.name = name or consumer_name()
        self.reclaim_idle_ms = int(reclaim_idle_s * 1000)
        self.batch = batch
        self.block_ms = int(block_s * 1000)
        self.retry_s = (retry_first_s, retry_longest_s)
        self._own_pending = True  # at start and after an outage: our own unacked entries
        self._ensure_group()

    def _ensure_group(self) -> None:
        try:
            self.redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def process_once(self) -> int:
        """Handle our own pending requests (after a start or an outage), reclaimed ones,
        then new ones (blocking up to block_s); return how many were handled."""
        entries = self._pending_of_ours() or self._reclaim()
        if not entries:
            reply = self.redis.xreadgroup(self.group, self.name, {self.stream: ">"},
                                          count=self.batch, block=self.block_ms)
            entries = [entry for _, stream_entries in reply for entry in stream_entries]
        for entry_id, fields in entries:
            self._handle(entry_id.decode(), _text_fields(fields))
        return len(entries)

    def _pending_of_ours(self) -> list:
        """Entries this consumer read but did not acknowledge (its round ended in an outage).
        Ones trimmed from the stream meanwhile come back without fields: acknowledged."""
        if not self._own_pending:
            return []
        reply = self.redis.xreadgroup(self.group, self.name, {self.stream: "0"}, count=self.batch)
        entries = [entry for _, stream_entries in reply for entry in stream_entries]
        if len(entries) < self.batch:
            self._own_pending = False
        live = []
        for entry_id, fields in entries:
            if fields:
                live.append((entry_id, fields))
            else:
                log.warning("intake %s was trimmed before it was handled", entry_id)
                self.redis.xack(self.stream, self.group, entry_id)
        return live

    def _reclaim(self) -> list:
        """Entries left pending by a dead consumer, now claimed by this one.

        An entry trimmed from the stream while pending has no fields left: it is
        acknowledged and dropped (Redis 6.2 would hand it back empty at every reclaim,
        crowding out the live ones).
        """
        ids = self.redis.xautoclaim(self.stream, self.group, self.name,
                                    min_idle_time=self.reclaim_idle_ms, start_id="0-0",
                                    count=self.batch, justid=True)
        entries = []
        for entry_id in ids:
            found = self.redis.xrange(self.stream, entry_id, entry_id)
            if found:
                entries.extend(found)
            else:
                log.warning("intake %s was trimmed before it was handled", entry_id)
                self.redis.xack(self.stream, self.group, entry_id)
        return entries

    def run(self, should_stop: Callable[[], bool]) -> None:
        """Serve until ``should_stop()``; Redis outages are waited out, never fatal."""
        backoff = Backoff(log, "intake", first_s=self.retry_s[0], longest_s=self.retry_s[1])
        while not should_stop():
            try:
                self.process_once()
                backoff.reset()
            except (redis.RedisError, OperationalError, RedisFull) as exc:
                backoff.wait(exc)
                self._own_pending = True
                try:
                    self._ensure_group()  # gone if Redis came back without its data
                except redis.RedisError:
                    pass

    def _handle(self, entry_id: str, fields: dict[str, str | bytes]) -> None:
        text = {k: v for k, v in fields.items() if isinstance(v, str)}  # all but the input
        requested = text.get("job")
        job_id = requested or f"intake-{entry_id}"
        try:
            self.client.submit(_job_input(fields), job_id=job_id,
                               proof_type=text.get("type", "porep-demo"),
                               priority=text.get("priority", "normal"))
            error = None
        except RedisFull:
            raise  # Redis's state, not the request's: it stays pending, tried after a pause
        except SubmitError as exc:
            error = str(exc)
        except (redis.RedisError, OperationalError):
            raise
        except Exception as exc:  # noqa: BLE001 (a request never stops the intake)
            log.exception("intake %s could not be handled", entry_id)
            error = f"intake: the request could not be handled ({type(exc).__name__})"
        if error is not None:
            log.warning("intake %s (job %r) refused: %s", entry_id, requested, error)
            refusal = {"job": f"intake-{entry_id}", "entry": entry_id, "status": "rejected",
                       "error": error}
            if requested:
                refusal["requested_job"] = requested
            store = self.client.store
            self.redis.xadd(store.keys.results, refusal, maxlen=store.results_maxlen,
                            approximate=True)
        self.redis.xack(self.stream, self.group, entry_id)


def _job_input(fields: dict[str, str | bytes]) -> str | bytes:
    """The entry's job input: its ``input`` field (``c1``, porep's name for it)."""
    for name in ("input", "c1"):
        if name in fields:
            return fields[name]
    raise SubmitError(f"entry has no 'input' (or 'c1') field with the job; its fields: "
                      f"{', '.join(sorted(fields)) or 'none'}")


def _text_fields(raw: dict[bytes, bytes]) -> dict[str, str | bytes]:
    """Field names and the short fields as text; the input stays bytes for its parser.

    Bytes that are not UTF-8 become U+FFFD, which the job id and name checks then refuse
    with one line: a request is always answered, never left pending to crash every intake
    process that reclaims it.
    """
    fields = {k.decode(errors="replace"): v for k, v in raw.items()}
    return {k: v if k in ("input", "c1") else v.decode(errors="replace")
            for k, v in fields.items()}
