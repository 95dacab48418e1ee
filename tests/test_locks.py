"""The GPU lock pair against a real redis-server, contended by real OS processes (spawn)."""

from __future__ import annotations

import multiprocessing as mp
import os
import secrets
import signal
import threading
import time

import pytest
import redis

from workers.heartbeat import Heartbeat
from workers.locks import (MAX_BAND, GpuId, GpuLock, LeaseLost, LockPair, LockWaitAborted,
                           holder_is_dead, process_tag)

pytestmark = pytest.mark.slow  # lock holders in spawned processes

SPAWN = mp.get_context("spawn")
LEASE_S = 2.0
HEARTBEAT_S = 0.2
LONG_LEASE_S = 120.0


def _gpu() -> GpuId:
    return GpuId("testhost", f"cpu-{secrets.token_hex(3)}")


def _lock(url: str, gpu: GpuId, name: str = "compute", lease_s: float = LEASE_S,
          heartbeat_s: float = HEARTBEAT_S) -> tuple[GpuLock, Heartbeat]:
    heartbeat = Heartbeat(heartbeat_s)
    return GpuLock(redis.Redis.from_url(url), gpu, name, lease_s=lease_s,
                   heartbeat=heartbeat), heartbeat


@pytest.fixture()
def heartbeat():
    hb = Heartbeat(HEARTBEAT_S)
    yield hb
    hb.close()


def _hold_forever(url: str, gpu: GpuId, ready, lease_s: float = LEASE_S) -> None:
    """Child: take the lock (its heartbeat keeps renewing), report the token, then idle."""
    lock, _ = _lock(url, gpu, lease_s=lease_s)
    held = lock.acquire("victim")
    ready.put(held.token)
    time.sleep(3600)


def _wait_forever(url: str, gpu: GpuId, queued) -> None:
    """Child: queue for a lock someone else holds."""
    lock, _ = _lock(url, gpu)
    queued.put(os.getpid())
    lock.acquire("dead-waiter")
    time.sleep(3600)


def _contend(url: str, gpu: GpuId, owner: str, rounds: int, barrier, out) -> None:
    """Child: take and release the lock ``rounds`` times; report what each grant saw."""
    lock, heartbeat = _lock(url, gpu)
    barrier.wait()
    grants = []
    for _ in range(rounds):
        with lock.acquire(owner) as held:
            assert lock.holder() == held.token
            time.sleep(0.01)
            grants.append((owner, held.ticket, held.fence, held.fence_at_enqueue))
    heartbeat.close()
    out.put(grants)


def _start(target, *args) -> mp.Process:
    proc = SPAWN.Process(target=target, args=args, daemon=True)
    proc.start()
    return proc


def test_token_compare_and_delete(redis_url, heartbeat):
    lock = GpuLock(redis.Redis.from_url(redis_url), _gpu(), "mem", lease_s=LEASE_S,
                   heartbeat=heartbeat)
    held = lock.acquire("a")
    assert lock.holder() == held.token and held.token.startswith("a:")
    # Someone else's token cannot delete it.
    assert lock._release(keys=[lock.key, lock.queue_key, lock.wake_prefix],
                         args=["a:forged", lock.waiter_lease_ms]) == 0
    assert lock.holder() == held.token
    assert held.release() is True
    assert lock.holder() is None
    assert held.release() is False


def test_release_after_takeover_leaves_new_holder(redis_url, heartbeat):
    lock = GpuLock(redis.Redis.from_url(redis_url), _gpu(), "compute", lease_s=LEASE_S,
                   heartbeat=heartbeat)
    held = lock.acquire("old")
    heartbeat.unregister(held.lease)
    lock.client.set(lock.key, "new:token", px=10_000)  # as if ours expired and was re-granted
    held.release()
    assert lock.holder() == "new:token"


def test_fence_increments_on_every_acquire_of_either_lock(redis_url, heartbeat):
    pair = LockPair(redis.Redis.from_url(redis_url), _gpu(), lease_s=LEASE_S,
                    heartbeat=heartbeat)
    fences = []
    for _ in range(3):
        steps = pair.for_partition("w")
        for step in (steps.memory, steps.compute):
            with step() as held:
                fences.append(held.fence)
    assert fences == list(range(fences[0], fences[0] + 6))


def test_memory_then_compute_never_both(redis_url, heartbeat):
    pair = LockPair(redis.Redis.from_url(redis_url), _gpu(), lease_s=LEASE_S,
                    heartbeat=heartbeat)
    steps = pair.for_partition("w")
    with pytest.raises(RuntimeError, match="memory comes first"):
        steps.compute()
    with steps.memory():
        with pytest.raises(RuntimeError, match="never holds both"):
            steps.compute()
    with pytest.raises(RuntimeError, match="once per partition"):
        steps.memory()
    steps.compute().release()
    with pytest.raises(RuntimeError, match="once per partition"):
        steps.compute()


def test_heartbeat_keeps_lease_alive_past_ttl(redis_url):
    lock, heartbeat = _lock(redis_url, _gpu(), lease_s=0.5, heartbeat_s=0.1)
    held = lock.acquire("long")
    time.sleep(4 * 0.5)
    held.check()
    assert lock.holder() == held.token
    assert 0 < lock.client.pttl(lock.key) <= 500
    held.release()
    heartbeat.close()


def test_lease_loss_detected_when_token_replaced(redis_url, heartbeat):
    lock = GpuLock(redis.Redis.from_url(redis_url), _gpu(), "compute", lease_s=LEASE_S,
                   heartbeat=heartbeat)
    held = lock.acquire("w")
    lock.client.set(lock.key, "thief:token", px=10_000)
    for _ in range(200):  # a bounded wait for the next heartbeat, not a timing assertion
        if held.lost_reason is not None:
            break
        time.sleep(HEARTBEAT_S / 4)
    with pytest.raises(LeaseLost, match="no longer holds our token"):
        held.check()
    held.release()
    assert lock.holder() == "thief:token"


def test_lease_loss_detected_without_renewals(redis_url):
    lock, heartbeat = _lock(redis_url, _gpu(), lease_s=0.3, heartbeat_s=0.1)
    heartbeat.close()  # a process stalled past its lease renews nothing
    held = lock.acquire("stalled")
    time.sleep(0.4)
    with pytest.raises(LeaseLost, match="not renewed within"):
        held.check()


def test_a_killed_holder_is_taken_over_at_once_not_at_lease_expiry(redis_url, heartbeat):
    gpu = _gpu()
    ready = SPAWN.Queue()
    child = _start(_hold_forever, redis_url, gpu, ready, LONG_LEASE_S)
    token = ready.get(timeout=60)
    lock = GpuLock(redis.Redis.from_url(redis_url), gpu, "compute", lease_s=LEASE_S,
                   heartbeat=heartbeat)
    fence_before = int(lock.client.get(lock.fence_key))
    assert not holder_is_dead(token)  # alive: never taken from it
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    assert holder_is_dead(token)
    # Still held by the dead token, with most of a long lease left ...
    assert lock.holder() == token and lock.client.pttl(lock.key) > LONG_LEASE_S * 1000 / 2
    # ... yet the next waiter gets it now; were it to wait for the lease, it gives up first.
    deadline = time.monotonic() + LONG_LEASE_S / 2
    held = lock.acquire("next", should_stop=lambda: time.monotonic() > deadline)
    assert held.fence == fence_before + 1
    assert lock.holder() == held.token
    held.release()


def test_only_a_provably_dead_holder_is_taken_over():
    live = f"w:{process_tag()}:00"
    assert not holder_is_dead(live)
    namespace, pid, started = process_tag().split(".")
    assert not holder_is_dead(f"w:1.{pid}.{started}:00")   # another PID namespace: unknown
    assert holder_is_dead(f"w:{namespace}.{pid}.1:00")        # our pid, reused since
    assert not holder_is_dead("forged:token")                # not a token of ours


def test_dead_waiter_does_not_block_the_queue(redis_url, heartbeat):
    gpu = _gpu()
    lock = GpuLock(redis.Redis.from_url(redis_url), gpu, "compute", lease_s=LEASE_S,
                   heartbeat=heartbeat)
    first = lock.acquire("holder")
    queued = SPAWN.Queue()
    child = _start(_wait_forever, redis_url, gpu, queued)
    queued.get(timeout=60)
    while lock.client.zcard(lock.queue_key) == 0:
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    first.release()
    held = lock.acquire("after")  # behind the dead waiter's ticket until its lease lapses
    assert (first.ticket, held.ticket) == (1, 3)  # the dead waiter had ticket 2
    assert lock.client.zcard(lock.queue_key) == 0
    held.release()


def test_cancelled_wait_leaves_the_queue(redis_url, heartbeat):
    lock = GpuLock(redis.Redis.from_url(redis_url), _gpu(), "mem", lease_s=LEASE_S,
                   heartbeat=heartbeat)
    held = lock.acquire("holder")
    calls = []
    with pytest.raises(LockWaitAborted, match="cancelled"):
        lock.acquire("waiter", should_stop=lambda: calls.append(1) or len(calls) > 2)
    assert lock.client.zcard(lock.queue_key) == 0
    held.release()


def test_fifo_and_no_starvation_across_processes(redis_url):
    gpu = _gpu()
    procs, rounds = 3, 12
    barrier, out = SPAWN.Barrier(procs), SPAWN.Queue()
    children = [_start(_contend, redis_url, gpu, f"p{i}", rounds, barrier, out)
                for i in range(procs)]
    grants = [g for _ in children for g in out.get(timeout=300)]
    for child in children:
        child.join()
        assert child.exitcode == 0
    # Every process got every one of its turns.
    assert sorted({owner for owner, *_ in grants}) == [f"p{i}" for i in range(procs)]
    assert all(sum(1 for g in grants if g[0] == f"p{i}") == rounds for i in range(procs))
    # Grants follow ticket (arrival) order, and fences are unique and dense.
    by_fence = sorted(grants, key=lambda g: g[2])
    assert [g[1] for g in by_fence] == sorted(g[1] for g in grants)
    fences = [g[2] for g in by_fence]
    assert fences == list(range(fences[0], fences[0] + procs * rounds))
    # Bounded wait: between queuing and the grant, at most the other processes went first.
    assert max(fence - at_enqueue for _, _, fence, at_enqueue in grants) <= procs


def test_a_failing_block_keeps_its_error_when_redis_is_gone_at_release(heartbeat):
    from client.embedded import EmbeddedRedis

    server = EmbeddedRedis().start()
    try:
        lock = GpuLock(redis.Redis.from_url(server.url, socket_connect_timeout=0.5), _gpu(),
                       "compute", lease_s=LEASE_S, heartbeat=heartbeat)
        held = lock.acquire("owner")
    finally:
        server.stop()
    with pytest.raises(ValueError, match="the block's own error"):
        with held:
            raise ValueError("the block's own error")


def test_a_release_lost_to_an_outage_does_not_block_the_next_acquire(heartbeat):
    """The release failed (Redis down); once Redis is back our own stale token still holds
    the lock with most of its lease left. Before, the same process waited out that lease."""
    from client.embedded import EmbeddedRedis

    with EmbeddedRedis(appendonly=True) as server:
        lock = GpuLock(redis.Redis.from_url(server.url), _gpu(), "compute",
                       lease_s=LONG_LEASE_S, heartbeat=heartbeat)
        held = lock.acquire("owner")
        server.shut_down()
        with pytest.raises(redis.ConnectionError):
            held.release()
        server.restart()
        assert lock.holder() == held.token
        deadline = time.monotonic() + LONG_LEASE_S / 2
        again = lock.acquire("owner", should_stop=lambda: time.monotonic() > deadline)
        assert lock.holder() == again.token != held.token
        again.release()


def _grants_in_order(redis_url: str, heartbeat: Heartbeat, name: str,
                     waiters: list[tuple[str, int]]) -> list[str]:
    """Hold the lock, queue ``waiters`` (owner, band) one after the other (each in line
    before the next comes), release: the owners in the order the lock was granted."""
    gpu = _gpu()
    holder = GpuLock(redis.Redis.from_url(redis_url), gpu, name, lease_s=LEASE_S,
                     heartbeat=heartbeat).acquire("running-phase")
    granted: list[str] = []

    def wait(owner: str, band: int) -> None:
        lock = GpuLock(redis.Redis.from_url(redis_url), gpu, name, lease_s=LEASE_S,
                       heartbeat=heartbeat)
        with lock.acquire(owner, band=band):
            granted.append(owner)
            time.sleep(0.02)

    threads = []
    for i, (owner, band) in enumerate(waiters):
        threads.append(threading.Thread(target=wait, args=(owner, band), daemon=True))
        threads[-1].start()
        while holder.lock.client.zcard(holder.lock.queue_key) < i + 1:
            time.sleep(0.005)
    assert holder.lock.holder() == holder.token  # nobody preempts the running phase
    holder.release()
    for thread in threads:
        thread.join(timeout=60)
    return granted


@pytest.mark.parametrize("name", ["mem", "compute"])
def test_a_critical_waiter_queued_after_three_porep_waiters_goes_first(redis_url, heartbeat,
                                                                       name):
    waiters = [("porep-1", 6), ("porep-2", 6), ("porep-3", 6), ("winning-post", 0),
               ("window-post", 3), ("porep-4", 6)]
    assert _grants_in_order(redis_url, heartbeat, name, waiters) == [
        "winning-post", "window-post", "porep-1", "porep-2", "porep-3", "porep-4"]


def test_grants_go_by_band_then_arrival(redis_url, heartbeat, rng):
    bands = [rng.choice([0, 1, 3, 6, 7, 9, MAX_BAND]) for _ in range(10)]
    waiters = [(f"w{i}", band) for i, band in enumerate(bands)]
    expected = [owner for owner, _ in sorted(waiters, key=lambda w: (w[1], int(w[0][1:])))]
    assert _grants_in_order(redis_url, heartbeat, "compute", waiters) == expected


def test_a_band_out_of_range_is_refused_before_queueing(redis_url, heartbeat):
    lock = GpuLock(redis.Redis.from_url(redis_url), _gpu(), "compute", lease_s=LEASE_S,
                   heartbeat=heartbeat)
    for band in (-1, MAX_BAND + 1):
        with pytest.raises(ValueError, match="band"):
            lock.acquire("w", band=band)
    assert lock.client.zcard(lock.queue_key) == 0
