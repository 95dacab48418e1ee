"""A dead worker's device keys in Redis (locks, fence, tickets, queues, VRAM ledger) go by
themselves: before, the keys of per-process CPU devices (``cpu.p<pid>``) never expired
(101 of them after ~45 worker processes)."""

from __future__ import annotations

import os

import redis

from workers.heartbeat import Heartbeat
from workers.ledger import VramLedger
from workers.locks import BAND_SPAN, IDLE_EXPIRY_MS, GpuId, GpuLock, LockPair


def test_every_key_of_a_dead_workers_device_expires(redis_url):
    client = redis.Redis.from_url(redis_url)
    gpu = GpuId("testhost", f"cpu.p{os.getpid()}")
    heartbeat = Heartbeat(0.1)
    pair = LockPair(client, gpu, lease_s=1.0, heartbeat=heartbeat)
    ledger = VramLedger(client, gpu, budget_bytes=1 << 30, lease_s=1.0, heartbeat=heartbeat)
    # What a worker holds when it is killed: both locks taken in turn, one still held with a
    # waiter queued behind it, a reservation and a shared key's.
    pair.mem.acquire("worker").release()
    pair.compute.acquire("worker")
    waiter = GpuLock(client, gpu, "compute", lease_s=1.0, heartbeat=heartbeat)
    # One try of a waiter that was killed right after it: queued, never back to leave.
    waiter._acquire(keys=[waiter.key, waiter.queue_key, waiter.alive_key, waiter.tickets_key,
                          waiter.fence_key, waiter.wake_prefix + "dead"],
                    args=["dead", 1000, 1000, IDLE_EXPIRY_MS, 6 * BAND_SPAN])  # normal band
    ledger.reserve("worker", 1 << 20)
    ledger.reserve_shared("key", "worker", 1 << 20)
    heartbeat.close()  # the worker is gone: nothing renews or releases anything now
    keys = client.keys(f"{gpu.key_prefix}:*")
    ttls = {key.decode(): client.pttl(key) for key in keys}
    print(ttls)
    assert len(keys) == 9  # lock, fence, 2 tickets, queue, alive, vram zset, bytes, holders
    assert all(0 < ttl <= IDLE_EXPIRY_MS for ttl in ttls.values()), ttls
    client.close()
