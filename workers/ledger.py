"""The VRAM ledger of one GPU: a budget and leased reservations in Redis (docs/ARCHITECTURE.md §6).

Pre-staging a partition means holding its buffers on the device from the memory phase to
the end of its compute phase, while other processes' keys and partitions share the device.
Asking the driver how much is free would synchronise with the other process's kernels —
the failure the lock pair exists to avoid — so free memory is never queried. Instead the
workers of a GPU account for what they hold: a reservation is granted atomically only if
the live reservations plus the request fit in the budget (read once at worker start), and
it carries a lease renewed by the worker's heartbeat, so a dead worker's bytes come back
by themselves.

Keys, for ``base = proofq:gpu:<host>:<gpu-uuid>``: ``base:vram`` (zset reservation id →
lease deadline, server ms) and ``base:vram:bytes`` (hash reservation id → bytes), kept
``IDLE_EXPIRY_MS`` past their last reservation or renewal (a dead worker's go by themselves).

A key the GPU's processes share (``gpu.shared_keys``: one device copy) is one reservation,
``shared:<name>``, whatever the number of its holders: ``base:vram:holders:<name>`` (set)
names them, each holder's heartbeat renews it, and the last holder's release removes it; a
holder that dies without releasing leaves it until the lease lapses.

What the budget covers: resident proving keys (``workers.key_residency`` reserves a key within the
budget, evicting the process's least recently used other key when it does not fit, and with
``force`` when it is alone: a key must be resident to prove at all, but its bytes still
count against everyone's pre-staging), pre-staged partitions, and what a process keeps
cached after its compute phase (a partition's scratch, kept for the next one only while one
more working set of its size still fits beside everything reserved: ``workers.runtime``).
The fallback path streams inputs inside the compute phase, where one partition at a time
runs per GPU; ``vram_headroom_bytes`` must cover that one working set.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

import redis

from gpu.spmv_plan import matrix_bytes
from snark.keys import POINT_BASES, ProvingKey
from workers.heartbeat import Heartbeat, Lease
from workers.locks import IDLE_EXPIRY_MS, NOW_MS_LUA, GpuId

FR_BYTES = 32

# KEYS[1..2]: expiry zset, bytes hash → `used`, the live reservations' bytes
_LIVE_BYTES_LUA = NOW_MS_LUA + """
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  redis.call('HDEL', KEYS[2], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local used = 0
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do used = used + tonumber(v) end
"""


def _kept(first: int, last: int) -> str:
    """Lua keeping the keys KEYS[first..last] for IDLE_EXPIRY_MS more."""
    return (f"for i = {first}, {last} do redis.call('PEXPIRE', KEYS[i], {IDLE_EXPIRY_MS}) "
            "end\n")


# KEYS: expiry zset, bytes hash   ARGV: id, nbytes, budget, lease_ms, force
# → {granted 0/1, bytes reserved after the call}
_RESERVE = _LIVE_BYTES_LUA + """
local want = tonumber(ARGV[2])
if ARGV[5] ~= '1' and used + want > tonumber(ARGV[3]) then return {0, used} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
""" + _kept(1, 2) + """
return {1, used + want}
"""

# KEYS: expiry zset, bytes hash, holders set   ARGV: id, holder, nbytes, budget, lease_ms,
# force → {granted 0/1, bytes reserved after the call}; a live reservation is joined
_RESERVE_SHARED = _LIVE_BYTES_LUA + """
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('DEL', KEYS[3])  -- the holders of a lapsed reservation
  local want = tonumber(ARGV[3])
  if ARGV[6] ~= '1' and used + want > tonumber(ARGV[4]) then return {0, used} end
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
  used = used + want
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[5]), ARGV[1])
redis.call('SADD', KEYS[3], ARGV[2])
""" + _kept(1, 3) + """
return {1, used}
"""

# KEYS: expiry zset, bytes hash, holders set   ARGV: id, holder → holders left
_RELEASE_SHARED = """
redis.call('SREM', KEYS[3], ARGV[2])
local left = redis.call('SCARD', KEYS[3])
if left == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
end
return left
"""

# KEYS: expiry zset, bytes hash   ARGV: id, lease_ms → 1 renewed, 0 gone
_RENEW = NOW_MS_LUA + """
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
""" + _kept(1, 2) + """
return 1
"""


def partition_bytes(key: ProvingKey) -> int:
    """Device bytes one partition holds: its witness, A·w/B·w/C·w on the domain, and H."""
    return FR_BYTES * (key.r1cs.num_variables + 4 * key.domain_size)


def key_bytes(key: ProvingKey) -> int:
    """Device bytes of a resident key: the MSM bases and the R1CS matrices as the GPU holds
    them (coded: an int64 row pointer, a uint32 column and a uint32 code a term, the
    coefficient table, a uint32 start row per chunk of A·w's terms; a matrix with full
    coefficients is counted as if each were distinct)."""
    bases = sum(getattr(key, name).xy.nbytes for name in POINT_BASES)
    return bases + sum(matrix_bytes(m) for m in (key.r1cs.a, key.r1cs.b, key.r1cs.c))


@dataclass(eq=False)
class Reservation:
    ledger: "VramLedger"
    id: str
    nbytes: int
    lease: Lease
    released: bool = False
    holder: str | None = None  # of a shared reservation: the last holder's release ends it

    @property
    def lost_reason(self) -> str | None:
        return self.lease.lost_reason

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        self.ledger.heartbeat.unregister(self.lease)
        if self.holder is not None:
            self.ledger.leave_shared(self.id, self.holder)
            return
        with self.ledger.client.pipeline() as pipe:
            pipe.zrem(self.ledger.expiry_key, self.id)
            pipe.hdel(self.ledger.bytes_key, self.id)
            pipe.execute()


class VramLedger:
    def __init__(self, client: redis.Redis, gpu: GpuId, *, budget_bytes: int, lease_s: float,
                 heartbeat: Heartbeat) -> None:
        self.client = client
        self.budget_bytes = budget_bytes
        self.lease_s = lease_s
        self.lease_ms = max(1, int(lease_s * 1000))
        self.heartbeat = heartbeat
        self.expiry_key = f"{gpu.key_prefix}:vram"
        self.bytes_key = f"{gpu.key_prefix}:vram:bytes"
        self._reserve = client.register_script(_RESERVE)
        self._reserve_shared = client.register_script(_RESERVE_SHARED)
        self._release_shared = client.register_script(_RELEASE_SHARED)
        self._renew = client.register_script(_RENEW)

    def reserve(self, owner: str, nbytes: int, *, force: bool = False,
                leave_free: int = 0) -> Reservation | None:
        """A renewed reservation of ``nbytes``, or None if it does not fit the budget with
        ``leave_free`` bytes to spare."""
        rid = f"{owner}:{secrets.token_hex(6)}"
        sent = time.monotonic()
        granted, _ = self._reserve(
            keys=[self.expiry_key, self.bytes_key],
            args=[rid, nbytes, self.budget_bytes - leave_free, self.lease_ms,
                  "1" if force else "0"])
        return self._held(rid, nbytes, sent) if granted else None

    def reserve_shared(self, name: str, holder: str, nbytes: int, *,
                       force: bool = False) -> Reservation | None:
        """``holder``'s hold on the one reservation of ``nbytes`` for the shared ``name``
        (made if no live holder has it), or None if it does not fit the budget."""
        rid = f"shared:{name}"
        sent = time.monotonic()
        granted, _ = self._reserve_shared(
            keys=[self.expiry_key, self.bytes_key, self._holders_key(rid)],
            args=[rid, holder, nbytes, self.budget_bytes, self.lease_ms, "1" if force else "0"])
        return self._held(rid, nbytes, sent, holder) if granted else None

    def leave_shared(self, rid: str, holder: str) -> int:
        """Drop ``holder`` from a shared reservation; the holders left (0: it is gone)."""
        return int(self._release_shared(keys=[self.expiry_key, self.bytes_key,
                                              self._holders_key(rid)], args=[rid, holder]))

    def _holders_key(self, rid: str) -> str:
        return f"{self.expiry_key}:holders:{rid.removeprefix('shared:')}"

    def _held(self, rid: str, nbytes: int, sent: float, holder: str | None = None) -> Reservation:
        lease = Lease(self.lease_s, sent,
                      lambda: bool(self._renew(keys=[self.expiry_key, self.bytes_key],
                                               args=[rid, self.lease_ms])),
                      "reservation no longer in the ledger")
        self.heartbeat.register(lease)
        return Reservation(self, rid, nbytes, lease, holder=holder)

    def reserved_bytes(self) -> int:
        """Bytes held by live (unexpired) reservations."""
        seconds, micros = self.client.time()
        live = self.client.zrangebyscore(self.expiry_key, seconds * 1000 + micros // 1000, "+inf")
        return sum(int(v) for v in self.client.hmget(self.bytes_key, live) if v) if live else 0
