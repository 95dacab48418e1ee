"""The VRAM ledger against a real redis-server: budget, atomic grants, leases, estimates."""

from __future__ import annotations

import multiprocessing as mp
import os
import secrets
import signal
import time

import numpy as np
import pytest
import redis

from circuits import random_circuit
from snark import groth16
from workers.heartbeat import Heartbeat
from workers.ledger import VramLedger, key_bytes, partition_bytes
from workers.locks import GpuId

pytestmark = pytest.mark.slow  # reservations held and raced by spawned processes

SPAWN = mp.get_context("spawn")
LEASE_S = 1.0


def _ledger(url: str, gpu: GpuId, budget: int, heartbeat: Heartbeat,
            lease_s: float = LEASE_S) -> VramLedger:
    return VramLedger(redis.Redis.from_url(url), gpu, budget_bytes=budget, lease_s=lease_s,
                      heartbeat=heartbeat)


@pytest.fixture()
def gpu():
    return GpuId("testhost", f"cpu-{secrets.token_hex(3)}")


def test_grants_up_to_the_budget_and_refuses_beyond(redis_url, gpu, heartbeat, rng):
    budget = rng.randrange(1000, 10_000)
    ledger = _ledger(redis_url, gpu, budget, heartbeat)
    first = ledger.reserve("a", budget - 10)
    assert first is not None
    assert ledger.reserve("b", 11) is None          # one byte over
    last = ledger.reserve("b", 10)                  # exactly fills it
    assert last is not None
    assert ledger.reserved_bytes() == budget
    assert ledger.reserve("c", 1) is None
    first.release()
    assert ledger.reserved_bytes() == 10
    assert ledger.reserve("c", budget - 10) is not None


def test_forced_reservation_counts_but_is_never_refused(redis_url, gpu, heartbeat):
    ledger = _ledger(redis_url, gpu, 100, heartbeat)
    assert ledger.reserve("key", 150, force=True) is not None
    assert ledger.reserved_bytes() == 150
    assert ledger.reserve("partition", 1) is None


def test_unrenewed_reservation_expires_and_frees_budget(redis_url, gpu, heartbeat):
    stalled = Heartbeat(0.1)
    stalled.close()  # its owner renews nothing, as if it had died
    ledger = _ledger(redis_url, gpu, 100, heartbeat)
    dead = _ledger(redis_url, gpu, 100, stalled, lease_s=0.3)
    assert dead.reserve("dead", 100) is not None
    assert ledger.reserve("live", 1) is None
    time.sleep(0.4)
    assert ledger.reserved_bytes() == 0
    live = ledger.reserve("live", 100)
    assert live is not None
    time.sleep(3 * LEASE_S)  # renewed by the heartbeat well past its lease
    assert ledger.reserved_bytes() == 100 and live.lost_reason is None


def _reserve_and_hold(url: str, gpu: GpuId, nbytes: int, ready) -> None:
    hb = Heartbeat(0.1)
    ledger = _ledger(url, gpu, 10**9, hb)
    ready.put(ledger.reserve("victim", nbytes) is not None)
    time.sleep(3600)


def test_killed_owner_reservation_expires(redis_url, gpu, heartbeat):
    ready = SPAWN.Queue()
    child = SPAWN.Process(target=_reserve_and_hold, args=(redis_url, gpu, 800, ready),
                          daemon=True)
    child.start()
    assert ready.get(timeout=60)
    ledger = _ledger(redis_url, gpu, 1000, heartbeat)
    assert ledger.reserve("survivor", 300) is None
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    granted = None
    for _ in range(100):  # bounded poll for the lease to lapse, not a timing assertion
        granted = ledger.reserve("survivor", 300)
        if granted is not None:
            break
        time.sleep(LEASE_S / 10)
    assert granted is not None
    assert ledger.reserved_bytes() == 300


def _race(url: str, gpu: GpuId, barrier, out) -> None:
    hb = Heartbeat(0.1)
    ledger = _ledger(url, gpu, 7, hb, lease_s=60)
    barrier.wait()
    out.put(sum(ledger.reserve(f"r{os.getpid()}", 1) is not None for _ in range(5)))
    hb.close()


def test_grants_are_atomic_under_contention(redis_url, gpu):
    procs = 4
    barrier, out = SPAWN.Barrier(procs), SPAWN.Queue()
    children = [SPAWN.Process(target=_race, args=(redis_url, gpu, barrier, out), daemon=True)
                for _ in range(procs)]
    for child in children:
        child.start()
    granted = sum(out.get(timeout=120) for _ in children)
    for child in children:
        child.join()
    assert granted == 7


def test_estimates_follow_the_key_shape(tmp_path, rng):
    key = groth16.setup(random_circuit(3, rng.randrange(20, 60), rng=rng).compile())
    r1cs = key.r1cs
    assert partition_bytes(key) == 32 * (r1cs.num_variables + 4 * r1cs.domain_size)
    # What prepare makes resident: every stored array but the infinity masks, and where each
    # of A·w's chunks of terms starts (a uint32 per 32 terms).
    directory = key.save(tmp_path)
    stored = sum(np.load(f).nbytes for f in directory.glob("*.npy") if "_inf" not in f.name)
    chunk_rows = sum(4 * -(-m.nnz // 32) for m in (r1cs.a, r1cs.b, r1cs.c))
    assert key_bytes(key) == stored + chunk_rows
