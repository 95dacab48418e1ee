"""A worker that keeps failing for its own reasons stops taking that kind of work
(docs/ARCHITECTURE.md §7).

A worker fault (``snark.errors.WorkerFault``: a corrupt or missing key, an unusable device,
a params directory that takes no files, a type it does not have) gives the work back to the
queue. A worker node that meets ``after`` of them in a row for one proof type is
*quarantined* for that type: it gives that type's work back at once, without loading
anything, and says so in its log and in Redis, where the job view and any status reader
find it (``quarantined``). It lifts when the worker serves the type again (every
``retry_s`` one piece of work is let through to find out whether the fault was fixed) or
when the worker restarts (``clear``).

Keys (in the default namespace, ``config.redis_keys``):

- ``proofq:quarantine``  hash: ``<node>/<type>`` → JSON ``{worker, proof_type, reason,
                         since, tried}`` (Unix seconds of this node's clock)
- ``proofq:faults``      hash: ``<node>/<type>`` → worker faults in a row
- ``proofq:workers:<queue>``  sorted set: node → when it was last seen alive consuming the
                         queue (Redis time), renewed every heartbeat (``mark_alive``): how
                         many workers could serve work that one of them gives back
                         (``tasks.jobs.JobStore.refuse``)
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass

import redis

from config.redis_keys import DEFAULT_KEYS, RedisKeys


log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Quarantined:
    """One worker node's quarantine for one proof type."""

    worker: str
    proof_type: str
    reason: str
    since: float
    tried: float

    def to_json(self) -> dict:
        return asdict(self)


def _field(node: str, kind: str) -> str:
    return f"{node}/{kind}"


def quarantined(client: redis.Redis, keys: RedisKeys = DEFAULT_KEYS) -> list[Quarantined]:
    """Every quarantine in force, oldest first."""
    records = [Quarantined(**json.loads(raw)) for raw in client.hvals(keys.quarantine)]
    return sorted(records, key=lambda q: q.since)


class Quarantine:
    """One worker node's quarantines (shared by its pool processes through Redis)."""

    def __init__(self, client: redis.Redis, node: str, keys: RedisKeys = DEFAULT_KEYS, *,
                 after: int, retry_s: float) -> None:
        self.client = client
        self.node = node
        self.keys = keys
        self.after = after
        self.retry_s = retry_s

    def holds(self, kind: str) -> Quarantined | None:
        """The quarantine of ``kind`` while it keeps work away; None when the work may run
        (no quarantine, or one due for another try, which this call takes)."""
        field = _field(self.node, kind)
        raw = self.client.hget(self.keys.quarantine, field)
        if raw is None:
            return None
        record = Quarantined(**json.loads(raw))
        now = time.time()
        if now - record.tried < self.retry_s:
            return record
        tried = Quarantined(**{**record.to_json(), "tried": now})
        self.client.hset(self.keys.quarantine, field, json.dumps(tried.to_json()))
        log.info("quarantined for %s work: trying one piece again", kind)
        return None

    def fault(self, kind: str, reason: str) -> Quarantined | None:
        """Count a worker fault for ``kind``; the quarantine when this one starts it."""
        field = _field(self.node, kind)
        if self.client.hincrby(self.keys.faults, field, 1) < self.after:
            return None
        now = time.time()
        record = Quarantined(self.node, kind, reason, now, now)
        if not self.client.hsetnx(self.keys.quarantine, field, json.dumps(record.to_json())):
            return None  # in force already (a retry that failed again: still the same)
        log.error("quarantined for %s work after %d faults in a row: %s (lifted when a "
                  "retry every %g s succeeds, or at restart)", kind, self.after, reason,
                  self.retry_s)
        return record

    def served(self, kind: str) -> None:
        """``kind`` was served: no faults in a row, and no quarantine."""
        field = _field(self.node, kind)
        with self.client.pipeline(transaction=False) as pipe:
            pipe.hdel(self.keys.faults, field)
            pipe.hdel(self.keys.quarantine, field)
            _, lifted = pipe.execute()
        if lifted:
            log.warning("quarantine for %s work lifted: served again", kind)

    def clear(self) -> None:
        """Forget this node's faults and quarantines (a worker starting: perhaps fixed)."""
        prefix = f"{self.node}/".encode()
        for key in (self.keys.faults, self.keys.quarantine):
            fields = [f for f in self.client.hkeys(key) if f.startswith(prefix)]
            if fields:
                self.client.hdel(key, *fields)


#: Marks a node alive on each queue by Redis's clock, and forgets nodes not seen for a day.
_ALIVE = """
local now = tonumber(redis.call('TIME')[1])
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - 86400)
end
return now
"""


def mark_alive(client: redis.Redis | redis.client.Pipeline, node: str, queues: list[str],
               keys: RedisKeys = DEFAULT_KEYS) -> None:
    """Record that worker node ``node`` is alive now, consuming ``queues`` (every
    heartbeat)."""
    if queues:
        client.eval(_ALIVE, len(queues), *map(keys.workers, queues), node)
