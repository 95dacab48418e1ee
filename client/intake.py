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

Memory: an entry is deleted from the stream in the transaction that acknowledges it, once
its job exists or its refusal is published: the stream holds only requests not yet handled
(a 32 GiB sector's C1 is ~51 MB; docs/operators-redis.md).

Requests lost before they were handled: a producer trimming the stream (``XADD … MAXLEN``)
deletes the oldest entries, read or not. Every round first accounts for the stream's
deletions (``_ACCOUNT``): an entry read but trimmed before it was handled is published
``lost`` under its own id; entries trimmed before any intake read them are counted from
the stream's ``entries-added`` (Redis 7) less what the intake deleted itself and reported
before, and published ``lost`` with their number and the range of ids they lie in (after
the last-seen mark ``last_seen``, before the first entry left after it). Both are logged. Redis 6.2
keeps no such count: there only read entries are accounted for (a warning at start says so).
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
from snark.registry import DEFAULT_TYPE
from workers.redis_faults import Backoff, wait_until_writable
from tasks.submission import RedisFull, SubmitError

log = logging.getLogger(__name__)

#: The default namespace's (an intake's own: ``Intake.stream``, ``Intake.group``).
INTAKE_STREAM = DEFAULT_KEYS.intake
GROUP = DEFAULT_KEYS.intake_group
#: Hash: ``accounted`` (stream deletions explained: handled entries the intake deleted,
#: lost ones it reported) and ``last_seen`` (the group's last delivered id at the last
#: accounting: lost entries not yet reported lie after it).
ACCOUNT = DEFAULT_KEYS.intake_account

# KEYS: intake stream, account, results stream.  ARGV: group, results cap, most pending
# entries to look at, the calling consumer, reclaim idle ms.  Reports (publishes and
# returns) the entries deleted by someone else: {id, id, 1} per read entry (the caller's
# own, or one idle long enough to be reclaimed: never one a live consumer is handling),
# {mark, "before <id>" or "up to <id>", count} for those never read.
_ACCOUNT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local lost = {}
local function publish(job, error, extra)
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[2], '*', 'job', job, 'status', 'lost',
             'error', error, unpack(extra))
end
for _, pending in ipairs(redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', ARGV[3])) do
  local id = pending[1]
  local stale = pending[2] == ARGV[4] or pending[3] >= tonumber(ARGV[5])
  if stale and #redis.call('XRANGE', KEYS[1], id, id) == 0 then
    redis.call('XACK', KEYS[1], ARGV[1], id)
    publish('intake-' .. id, 'deleted from proofq:intake (trimmed) before it was handled',
            {'entry', id})
    table.insert(lost, {id, id, 1})
  end
end
local info, groups = {}, {}
local raw = redis.call('XINFO', 'STREAM', KEYS[1])
for i = 1, #raw, 2 do info[raw[i]] = raw[i + 1] end
local last_seen = redis.call('HGET', KEYS[2], 'last_seen') or '0-0'
for _, group in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  for i = 1, #group, 2 do groups[group[i]] = group[i + 1] end
  if groups['name'] == ARGV[1] then break end
end
redis.call('HSET', KEYS[2], 'last_seen', groups['last-delivered-id'] or '0-0')
local accounted = redis.call('HINCRBY', KEYS[2], 'accounted', #lost)
if not info['entries-added'] then return lost end
local deleted = tonumber(info['entries-added']) - tonumber(info['length'])
local unread = deleted - accounted
if unread < 0 then  -- the stream was made again (Redis lost it): start counting afresh
  redis.call('HSET', KEYS[2], 'accounted', deleted)
elseif unread > 0 then
  -- a trim deletes the oldest entries: the lost ones lie after the mark and before the
  -- first entry left after it (or up to the last id ever added, if none is left)
  local range, last = {'after', last_seen}, info['last-generated-id']
  local next = redis.call('XRANGE', KEYS[1], '(' .. last_seen, '+', 'COUNT', 1)[1]
  local bound = 'up to ' .. last
  if next then
    range, last, bound = {'after', last_seen, 'before', next[1]}, next[1], 'before ' .. next[1]
  else
    range = {'after', last_seen, 'last', last}
  end
  publish('intake-lost-' .. last, unread .. ' requests trimmed from proofq:intake before ' ..
          'any intake read them (ids after ' .. last_seen .. ', ' .. bound .. ')',
          {'entries', unread, unpack(range)})
  redis.call('HINCRBY', KEYS[2], 'accounted', unread)
  table.insert(lost, {last_seen, bound, unread})
end
return lost
"""

# KEYS: intake stream, account.  ARGV: group, entry id.  The entry is handled: acknowledged
# and deleted; the deletion is explained (counted) if this consumer still held it.
_DONE = """
local held = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if held == 1 then redis.call('HINCRBY', KEYS[2], 'accounted', 1) end
"""


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
        keys = client.store.keys
        self.stream, self.group, self.account = keys.intake, keys.intake_group, keys.intake_account
        self.results = keys.results
        self.name = name or consumer_name()
        self.reclaim_idle_ms = int(reclaim_idle_s * 1000)
        self.batch = batch
        self.block_ms = int(block_s * 1000)
        self.retry_s = (retry_first_s, retry_longest_s)
        self._own_pending = True  # at start and after an outage: our own unacked entries
        self._account = self.redis.register_script(_ACCOUNT)
        self._done = self.redis.register_script(_DONE)
        self._started = False  # the group made sure of: now, or at the first round that
        # finds Redis up (it may be down, full or read-only when the intake is made)
        try:
            self._start()
        except redis.RedisError:
            pass

    def _start(self) -> None:
        self._ensure_group()
        try:
            version = self.redis.info("server")["redis_version"]
        except redis.ResponseError:  # an ACL user without INFO: assume a current Redis
            version = "7"
        if int(version.split(".")[0]) < 7:
            log.warning("Redis before 7.0 counts no stream additions: requests a producer "
                        "trims from %s before any intake reads them cannot be detected",
                        self.stream)
        self._started = True

    def _ensure_group(self) -> None:
        try:
            self.redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def process_once(self) -> int:
        """Handle our own pending requests (after a start or an outage), reclaimed ones,
        then new ones (blocking up to block_s); return how many were handled."""
        if not self._started:
            self._start()
        self.account_for_deletions()
        entries = self._pending_of_ours() or self._reclaim()
        if not entries:
            reply = self.redis.xreadgroup(self.group, self.name, {self.stream: ">"},
                                          count=self.batch, block=self.block_ms)
            entries = [entry for _, stream_entries in reply for entry in stream_entries]
        for entry_id, fields in entries:
            self._handle(entry_id.decode(), _text_fields(fields))
        return len(entries)

    def account_for_deletions(self) -> list[tuple[str, str, int]]:
        """Report the entries someone else deleted since the last round (see the module's
        docstring): (id, id, 1) for an entry read, (mark, where the range ends, how many)
        for entries never read; each logged."""
        lost = [(a.decode(), b.decode(), int(n)) for a, b, n in self._account(
            keys=[self.stream, self.account, self.results],
            args=[self.group, self.client.store.results_maxlen, 10_000, self.name,
                  self.reclaim_idle_ms])]
        for after, last, count in lost:
            if after == last:
                log.error("intake %s was deleted from the stream (trimmed) before it was "
                          "handled: published as lost", last)
            else:
                log.error("%d intake requests were trimmed from the stream before any intake "
                          "read them (ids after %s, %s): published as lost",
                          count, after, last)
        return lost

    def _pending_of_ours(self) -> list:
        """Entries this consumer read but did not acknowledge (its round ended in an outage).
        Ones trimmed from the stream meanwhile come back without fields: left for the next
        round's accounting."""
        if not self._own_pending:
            return []
        reply = self.redis.xreadgroup(self.group, self.name, {self.stream: "0"}, count=self.batch)
        entries = [entry for _, stream_entries in reply for entry in stream_entries]
        if len(entries) < self.batch:
            self._own_pending = False
        return [(entry_id, fields) for entry_id, fields in entries if fields]

    def _reclaim(self) -> list:
        """Entries left pending by a dead consumer, now claimed by this one (one trimmed
        meanwhile is left for the next round's accounting)."""
        ids = self.redis.xautoclaim(self.stream, self.group, self.name,
                                    min_idle_time=self.reclaim_idle_ms, start_id="0-0",
                                    count=self.batch, justid=True)
        return [entry for entry_id in ids
                for entry in self.redis.xrange(self.stream, entry_id, entry_id)]

    def run(self, should_stop: Callable[[], bool]) -> None:
        """Serve until ``should_stop()``; Redis outages are waited out, never fatal (also
        one at the start: Redis down, full or read-only)."""
        if not wait_until_writable(self.redis, log, "intake waits for Redis to take writes",
                                   should_stop=should_stop, first_s=self.retry_s[0],
                                   longest_s=self.retry_s[1]):
            return
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
                               proof_type=text.get("type", DEFAULT_TYPE),
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
        with self.redis.pipeline(transaction=True) as done:
            if error is not None:
                log.warning("intake %s (job %r) refused: %s", entry_id, requested, error)
                refusal = {"job": f"intake-{entry_id}", "entry": entry_id,
                           "status": "rejected", "error": error}
                if requested:
                    refusal["requested_job"] = requested
                done.xadd(self.results, refusal, maxlen=self.client.store.results_maxlen,
                          approximate=True)
            # Handled: its bytes are no longer needed.
            self._done(keys=[self.stream, self.account], args=[self.group, entry_id],
                       client=done)
            done.execute()


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
