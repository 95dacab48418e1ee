"""The GPU lock pair: a short memory lock and a long compute lock per GPU (docs/ARCHITECTURE.md §6).

Keys, for ``base = proofq:gpu:<host>:<gpu-uuid>``:

    base:mem, base:compute          the holder's token, with a lease (PX)
    base:fence                      INCR at every acquire of either lock: the fencing token
    base:<lock>:queue               waiting tokens scored by band · BAND_SPAN + ticket
    base:<lock>:alive               waiting token → lease deadline (server ms)
    base:<lock>:tickets             ticket counter
    base:<lock>:wake:<token>        list pushed on release to wake the head waiter

Waiting is a ticket queue ordered by band: a waiter enqueues once, in its band (the job's
priority level, lower first: a CRITICAL WinningPoSt's partition waits in band 0, a normal
PoRep one in band 6), then retries the acquire script, which grants the lock only to the
live waiter with the lowest score while the lock is free. A higher band's waiter goes
before every waiter of lower bands that is still waiting (never before the holder: a
running phase is not preempted); within a band grants follow arrival order, so nobody of a
band starves, and a lower band waits only while a higher band has waiters (that band's own
work). Waiters refresh their own lease on every retry; a waiter that died stops refreshing
and is dropped when it reaches the head, so it never blocks the queue. A live holder
releases with compare-and-delete and wakes the head waiter at once through its wake list,
so a hand-over costs one round trip, not a poll period.

A holder that died stops renewing and its lock expires with the lease. Waiters do not wait
that long when they can tell: the token names the holder's process (PID namespace, pid,
start time), all contenders of a GPU's locks run on its host, and a waiter that finds the
holder's process gone (same namespace, no such pid, or the pid reused by a later process)
deletes the dead token at its next retry (every ``poll_s``) and proceeds. Across PID
namespaces nothing is concluded and the lease decides. A process whose release failed
(Redis unreachable) takes its own stale token over the same way when it asks again.

Every key of a device but the leased lock itself is kept ``IDLE_EXPIRY_MS`` past its last
use (each acquire renews it): the keys of a per-process device (``cpu.p<pid>``) whose worker
died, and of a GPU no longer in service, go by themselves; a device idle that long starts
its fence again (no lease, no holder and no waiter outlive an idle day).

All time comparisons use the Redis server clock (``TIME`` inside the scripts), so worker
clocks never need to agree. The release script pushes to a wake list whose name it builds,
which a single Redis (the deployment here) allows and Redis Cluster would not.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import redis

from config.redis_keys import DEFAULT_NAMESPACE, RedisKeys
from workers.telemetry import LOCK_HOLD_SECONDS, LOCK_WAIT_SECONDS
from workers.heartbeat import Heartbeat, Lease

log = logging.getLogger(__name__)

LockName = Literal["mem", "compute"]

#: How long a device's counters, queues and ledger outlive their last use.
IDLE_EXPIRY_MS = 24 * 3600 * 1000

#: A waiter's score is ``band * BAND_SPAN + ticket``: tickets (one counter per lock, reset
#: after an idle day) stay below 2^40 (three centuries at 100 grants a second), and scores
#: stay below 10^14, which Redis's Lua writes exactly (``%.14g``).
BAND_SPAN = 1 << 40
MAX_BAND = 63

#: Lua prelude: ``now``, the Redis server's clock in ms (the one clock all workers share).
NOW_MS_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# KEYS: lock, queue, alive, tickets, fence, our wake list   ARGV: token, lease_ms,
# waiter_lease_ms, idle expiry ms, band offset (band · BAND_SPAN) → {fence, ticket,
# fence_at_enqueue, holder token or ''}; fence 0 = not granted yet.
_ACQUIRE = NOW_MS_LUA + """
local token = ARGV[1]
while true do
  local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not head or head == token then break end
  if tonumber(redis.call('HGET', KEYS[3], head) or '0') >= now then break end
  redis.call('ZREM', KEYS[2], head)
  redis.call('HDEL', KEYS[3], head)
end
local offset = tonumber(ARGV[5])
local score = redis.call('ZSCORE', KEYS[2], token)
local ticket
if score then
  ticket = tonumber(score) - offset
else
  ticket = redis.call('INCR', KEYS[4])
  redis.call('ZADD', KEYS[2], offset + ticket, token)
end
redis.call('HSET', KEYS[3], token, now + tonumber(ARGV[3]))
local fence_now = tonumber(redis.call('GET', KEYS[5]) or '0')
local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
local holder = redis.call('GET', KEYS[1])
for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
if head ~= token or holder then
  return {0, tonumber(ticket), fence_now, holder or ''}
end
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
redis.call('ZREM', KEYS[2], token)
redis.call('HDEL', KEYS[3], token)
redis.call('DEL', KEYS[6])
local fence = redis.call('INCR', KEYS[5])
redis.call('PEXPIRE', KEYS[5], ARGV[4])
return {fence, tonumber(ticket), fence_now, ''}
"""

# KEYS: lock   ARGV: the dead holder's token → 1 deleted, 0 it is no longer the holder
_TAKE_OVER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# KEYS: lock   ARGV: token, lease_ms → 1 renewed, 0 lost
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# Wake the head waiter (if the lock is free) so the hand-over does not wait for a poll.
_WAKE_HEAD = """
local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
if head and redis.call('EXISTS', KEYS[1]) == 0 then
  local wake = KEYS[3] .. head
  redis.call('RPUSH', wake, '1')
  redis.call('PEXPIRE', wake, ARGV[2])
end
"""

# KEYS: lock, queue, wake_prefix   ARGV: token, waiter_lease_ms → 1 released, 0 not ours
_RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
""" + _WAKE_HEAD + """
return 1
"""

# KEYS: lock, queue, wake_prefix, alive   ARGV: token, waiter_lease_ms
_LEAVE = """
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
redis.call('DEL', KEYS[3] .. ARGV[1])
""" + _WAKE_HEAD


class LeaseLost(RuntimeError):
    """A held lock's lease is gone (expired or taken); stop before touching the GPU."""


class LockWaitAborted(RuntimeError):
    """Waiting for a lock was given up (cancelled or timed out); nothing is held."""


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "unknown"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc), None if there is none."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def process_tag(pid: int | None = None) -> str:
    """``<pid namespace>.<pid>.<start time>``: names a process unambiguously on its host."""
    pid = os.getpid() if pid is None else pid
    return f"{_pid_namespace()}.{pid}.{_start_time(pid)}"


def holder_is_dead(token: str) -> bool:
    """True only when the token's process is provably gone: same PID namespace as ours, and
    its pid no longer exists or belongs to a process started later."""
    try:
        namespace, pid, started = token.rsplit(":", 2)[1].split(".")
        pid_number = int(pid)
    except ValueError:
        return False  # not a token this module made
    if namespace == "unknown" or namespace != _pid_namespace():
        return False
    return _start_time(pid_number) != started


@dataclass(frozen=True)
class GpuId:
    """Where a GPU is: the host name and a UUID that is stable across processes."""

    host: str
    uuid: str
    namespace: str = DEFAULT_NAMESPACE  # the cluster's (config.redis_keys)

    @property
    def key_prefix(self) -> str:
        return RedisKeys(self.namespace).gpu(self.host, self.uuid)


@dataclass(eq=False)
class HeldLock:
    """A granted lock. ``check()`` raises ``LeaseLost`` once the lease cannot be trusted."""

    lock: "GpuLock"
    token: str
    fence: int
    ticket: int
    fence_at_enqueue: int  # the fence when we queued: fence − this = grants while we waited
    lease: Lease
    acquired_at: float = field(default_factory=time.monotonic)
    released: bool = False

    @property
    def name(self) -> LockName:
        return self.lock.name

    @property
    def lost_reason(self) -> str | None:
        return self.lease.lost_reason

    def check(self) -> None:
        reason = self.lost_reason
        if reason is not None:
            raise LeaseLost(f"{self.name} lock lease lost (fence {self.fence}): {reason}")

    def release(self) -> bool:
        """Compare-and-delete; True if we still held it. Idempotent."""
        if self.released:
            return False
        self.released = True
        self.lock.heartbeat.unregister(self.lease)
        LOCK_HOLD_SECONDS.labels(lock=self.name).observe(time.monotonic() - self.acquired_at)
        try:
            return bool(self.lock._release(
                keys=[self.lock.key, self.lock.queue_key, self.lock.wake_prefix],
                args=[self.token, self.lock.waiter_lease_ms]))
        except redis.RedisError:
            self.lock.abandoned.add(self.token)  # our next acquire takes it over
            raise

    def __enter__(self) -> "HeldLock":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.release()
        except redis.RedisError:
            if exc_type is None:
                raise
            # Redis is unreachable and the block already failed: keep its error (the one
            # that says what went wrong); the lease lapses on its own.


class GpuLock:
    """One of the pair (``mem`` or ``compute``) for one GPU."""

    def __init__(self, client: redis.Redis, gpu: GpuId, name: LockName, *, lease_s: float,
                 heartbeat: Heartbeat) -> None:
        self.client = client
        self.gpu = gpu
        self.name = name
        self.lease_s = lease_s
        self.lease_ms = max(1, int(lease_s * 1000))
        self.waiter_lease_ms = self.lease_ms
        self.heartbeat = heartbeat
        # A waiter must refresh well within its lease; the poll also bounds how late the
        # head notices a dead holder's expiry.
        self.poll_s = min(0.25, lease_s / 4)
        base = gpu.key_prefix
        self.key = f"{base}:{name}"
        self.fence_key = f"{base}:fence"
        self.queue_key = f"{base}:{name}:queue"
        self.alive_key = f"{base}:{name}:alive"
        self.tickets_key = f"{base}:{name}:tickets"
        self.wake_prefix = f"{base}:{name}:wake:"
        self._acquire = client.register_script(_ACQUIRE)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._leave = client.register_script(_LEAVE)
        self._take_over = client.register_script(_TAKE_OVER)
        #: Tokens of this process whose release failed (Redis gone): still held in Redis
        #: once it is back, by nobody alive to release them.
        self.abandoned: set[str] = set()

    def acquire(self, owner: str, *, should_stop: Callable[[], bool] | None = None,
                band: int = 0) -> HeldLock:
        """Wait in line for the lock; the returned lock is renewed until released.

        ``band``: where in line, 0 to ``MAX_BAND``, lower first (the job's priority level);
        callers that name none share band 0, in arrival order. ``should_stop`` is polled
        while waiting (cancellation); ``LockWaitAborted`` means we left the queue holding
        nothing.
        """
        if not 0 <= band <= MAX_BAND:
            raise ValueError(f"band: {band} is outside 0..{MAX_BAND}")
        token = f"{owner}:{process_tag()}:{secrets.token_hex(8)}"
        wake_key = self.wake_prefix + token
        started = time.monotonic()
        first_fence_seen: int | None = None
        try:
            while True:
                sent = time.monotonic()
                fence, ticket, fence_now, holder = self._acquire(
                    keys=[self.key, self.queue_key, self.alive_key, self.tickets_key,
                          self.fence_key, wake_key],
                    args=[token, self.lease_ms, self.waiter_lease_ms, IDLE_EXPIRY_MS,
                          band * BAND_SPAN])
                if first_fence_seen is None:
                    first_fence_seen = int(fence_now)
                if fence:
                    break
                if should_stop is not None and should_stop():
                    raise LockWaitAborted(f"{self.name} lock: wait cancelled")
                if holder and self._is_dead(holder.decode()) and self._take_over(
                        keys=[self.key], args=[holder]):
                    log.warning("%s lock: holder %s is dead, taken over", self.name,
                                holder.decode())
                    continue
                self.client.blpop([wake_key], timeout=self.poll_s)
        except BaseException:
            try:
                self._leave(keys=[self.key, self.queue_key, self.wake_prefix, self.alive_key],
                            args=[token, self.waiter_lease_ms])
            except redis.RedisError:  # unreachable: our waiter lease lapses on its own
                pass
            raise
        LOCK_WAIT_SECONDS.labels(lock=self.name).observe(time.monotonic() - started)
        lease = Lease(self.lease_s, sent, lambda: bool(self._renew(
            keys=[self.key], args=[token, self.lease_ms])), "Redis no longer holds our token")
        self.heartbeat.register(lease)
        return HeldLock(self, token, int(fence), int(ticket), first_fence_seen, lease)

    def _is_dead(self, token: str) -> bool:
        if token in self.abandoned:
            self.abandoned.discard(token)
            return True
        return holder_is_dead(token)

    def holder(self) -> str | None:
        """The token of the current holder (for tools and tests)."""
        value = self.client.get(self.key)
        return value.decode() if value is not None else None


class LockPair:
    """The memory and compute locks of one GPU. A partition goes through them with
    ``for_partition``, whose steps enforce the order: memory, released, then compute."""

    def __init__(self, client: redis.Redis, gpu: GpuId, *, lease_s: float,
                 heartbeat: Heartbeat) -> None:
        self.mem = GpuLock(client, gpu, "mem", lease_s=lease_s, heartbeat=heartbeat)
        self.compute = GpuLock(client, gpu, "compute", lease_s=lease_s, heartbeat=heartbeat)

    def for_partition(self, owner: str, band: int = 0) -> "PartitionLocks":
        return PartitionLocks(self, owner, band)


class PartitionLocks:
    """One partition's way through the pair: ``memory()`` once, then ``compute()`` once the
    memory lock is released, so no worker ever holds both or computes unstaged by order.
    Both waits are in the partition's ``band``."""

    def __init__(self, pair: LockPair, owner: str, band: int = 0) -> None:
        self._pair = pair
        self._owner = owner
        self._band = band
        self._memory: HeldLock | None = None
        self._computed = False

    def memory(self, **wait) -> HeldLock:
        if self._memory is not None:
            raise RuntimeError("the memory step runs once per partition")
        self._memory = self._pair.mem.acquire(self._owner, band=self._band, **wait)
        return self._memory

    def compute(self, **wait) -> HeldLock:
        if self._memory is None or not self._memory.released:
            raise RuntimeError("compute lock requested before the memory lock was taken and "
                               "released: memory comes first and a worker never holds both")
        if self._computed:
            raise RuntimeError("the compute step runs once per partition")
        self._computed = True
        return self._pair.compute.acquire(self._owner, band=self._band, **wait)
