"""The owner of a process's resident keys (``workers.key_residency``) against a real VRAM ledger:
keys loaded once, reservations within the budget, the least recently used key evicted
(its state freed, its reservation handed back) when another needs the room.

The CPU tests run everywhere; the GPU tests (two keys' window tables within one budget per
process, an evicted key's device memory and reservation given back) need a GPU."""

from __future__ import annotations

import secrets

import pytest
import redis

import gpu
from workers.key_residency import Residency
from snark import groth16
from snark.cpu_backend import CpuBackend
from snark.keys import POINT_BASES
from tests.circuits import random_circuit
from workers.heartbeat import Heartbeat
from workers.ledger import VramLedger, key_bytes
from workers.locks import GpuId

GPU_OK, GPU_WHY = gpu.available()


class RecordingCpu(CpuBackend):
    """The CPU backend, noting which keys it was told to evict."""

    def __init__(self) -> None:
        super().__init__()
        self.evicted: list[str] = []

    def evict(self, key) -> None:
        self.evicted.append(key.circuit_id)
        super().evict(key)


def _ledger(redis_url: str, heartbeat: Heartbeat, budget: int) -> VramLedger:
    return VramLedger(redis.Redis.from_url(redis_url), GpuId("host", f"t-{secrets.token_hex(3)}"),
                      budget_bytes=budget, lease_s=30, heartbeat=heartbeat)


def _owner(backend, ledger: VramLedger, **options) -> Residency:
    """An owner reserving in ``ledger``; ``options``: ``Residency``'s (``pin``, ``transient``)."""
    def reserve(key, *, force: bool):
        return ledger.reserve("w:key", key_bytes(key) + backend.extra_resident_bytes(key),
                              force=force)
    return Residency(backend, reserve, **options)


def _keys(rng, count: int, constraints: int = 40) -> list:
    return [groth16.setup(random_circuit(num_inputs=2, num_constraints=constraints + 7 * i,
                                         rng=rng).compile()) for i in range(count)]


def _loader(key, loads: list):
    def load():
        loads.append(key.circuit_id)
        return key
    return load


def test_keys_that_fit_stay_and_are_loaded_once(redis_url, heartbeat, rng):
    backend = RecordingCpu()
    first, second = _keys(rng, 2)
    ledger = _ledger(redis_url, heartbeat, key_bytes(first) + key_bytes(second))
    owner, loads = _owner(backend, ledger), []
    for _ in range(2):
        for name, key in (("a", first), ("b", second)):
            assert owner.key(name, _loader(key, loads)) is key
            owner.make_resident(key)
    assert loads == [first.circuit_id, second.circuit_id]
    assert owner.resident() == [first, second] and backend.evicted == []
    assert ledger.reserved_bytes() == key_bytes(first) + key_bytes(second)
    owner.close()
    assert ledger.reserved_bytes() == 0 and sorted(backend.evicted) == sorted(
        [first.circuit_id, second.circuit_id])


def test_the_least_recently_used_key_makes_room_and_gives_its_reservation_back(
        redis_url, heartbeat, rng):
    backend = RecordingCpu()
    first, second, third = _keys(rng, 3)
    room = max(key_bytes(k) for k in (first, second, third))
    ledger = _ledger(redis_url, heartbeat, room + min(key_bytes(k) for k in (first, second)))
    owner, loads = _owner(backend, ledger), []
    for name, key in (("a", first), ("b", second)):
        owner.make_resident(owner.key(name, _loader(key, loads)))
    owner.make_resident(owner.key("a", _loader(first, loads)))  # a is now the most recent
    owner.make_resident(owner.key("c", _loader(third, loads)))
    assert backend.evicted[0] == second.circuit_id  # b was the least recently used
    assert third in owner.resident()
    held = sum(key_bytes(k) for k in owner.resident())
    assert ledger.reserved_bytes() == held <= ledger.budget_bytes
    # b comes back from disk (its loader again), making room in turn
    owner.make_resident(owner.key("b", _loader(second, loads)))
    assert loads.count(second.circuit_id) == 2
    owner.close()
    assert ledger.reserved_bytes() == 0


def test_a_key_alone_is_resident_even_over_the_budget(redis_url, heartbeat, rng):
    [key] = _keys(rng, 1)
    ledger = _ledger(redis_url, heartbeat, key_bytes(key) - 1)
    owner = _owner(RecordingCpu(), ledger)
    owner.make_resident(owner.key("a", lambda: key))
    assert owner.resident() == [key] and ledger.reserved_bytes() == key_bytes(key)
    assert ledger.reserve("partition", 1) is None  # its bytes count against pre-staging
    owner.close()


def test_a_lapsed_reservation_is_made_again(redis_url, heartbeat, rng):
    [key] = _keys(rng, 1)
    ledger = _ledger(redis_url, heartbeat, 10 * key_bytes(key))
    owner = _owner(RecordingCpu(), ledger)
    owner.make_resident(owner.key("a", lambda: key))
    [entry] = owner._entries.values()
    lapsed = entry.hold
    lapsed.lease.mark_lost("the process stalled")
    owner.make_resident(key)
    assert entry.hold is not lapsed and lapsed.released
    assert ledger.reserved_bytes() == key_bytes(key)
    with pytest.raises(KeyError, match="not one of this process's keys"):
        owner.make_resident(_keys(rng, 1)[0])
    owner.close()


def test_a_key_in_use_is_never_a_victim_and_is_let_go_when_its_last_user_ends(
        redis_url, heartbeat, rng):
    backend = RecordingCpu()
    first, second = _keys(rng, 2)
    ledger = _ledger(redis_url, heartbeat, max(key_bytes(first), key_bytes(second)))
    owner = _owner(backend, ledger)
    assert owner.let_go("a") is None  # nothing resident: nothing to let go
    with owner.using("a"):
        owner.make_resident(owner.key("a", lambda: first))
        # no room for b but a is in use: b is reserved over the budget, a stays
        owner.make_resident(owner.key("b", lambda: second))
        assert backend.evicted == [] and owner.resident() == [first, second]
        with owner.using("a"):  # a second user (a preload beside a partition)
            assert owner.let_go("a") == (first, True)  # deferred
        assert first in owner.resident()  # one user left
        assert owner.let_go("b") == (second, False)  # b has no user: gone now
        assert backend.evicted == [second.circuit_id]
    assert backend.evicted == [second.circuit_id, first.circuit_id]
    assert owner.resident() == [] and ledger.reserved_bytes() == 0
    with owner.using("a"):  # a later user loads it again, and nothing is pending
        owner.make_resident(owner.key("a", lambda: first))
    assert owner.resident() == [first]
    owner.close()


# -- on the GPU ---------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)
def test_two_keys_share_one_table_budget_and_eviction_gives_everything_back(
        redis_url, heartbeat, rng):
    import cupy

    from gpu.backend import table_choice

    first, second = _keys(rng, 2, constraints=1500)
    wanted = [sum(table_choice(k, 1 << 40).values()) for k in (first, second)]
    budget = wanted[0] + wanted[1] // 2  # both keys cannot have all their tables
    backend = gpu.get_backend(table_budget_bytes=budget)
    ledger = _ledger(redis_url, heartbeat, 1 << 40)
    owner = _owner(backend, ledger)
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()  # earlier tests' free chunks would be split for these keys
    for name, key in (("a", first), ("b", second)):
        owner.make_resident(owner.key(name, lambda key=key: key))
    tables = [backend.extra_resident_bytes(k) for k in (first, second)]
    assert tables[0] == wanted[0] and 0 < sum(tables) <= budget and tables[1] < wanted[1]
    assert ledger.reserved_bytes() == sum(key_bytes(k) + t for k, t in zip((first, second),
                                                                             tables))
    used, held = pool.used_bytes(), pool.total_bytes()
    owner.evict("a")
    # its bases and tables at least (the device copy of a basis has all its points) are
    # freed, and memory goes back to the device
    bases = sum(getattr(first, name).xy.nbytes for name in POINT_BASES)
    assert used - pool.used_bytes() >= bases + tables[0]
    assert pool.total_bytes() < held
    assert ledger.reserved_bytes() == key_bytes(second) + tables[1]
    assert owner.resident() == [second]
    # the freed table allowance goes to the next key made resident
    assert backend.extra_resident_bytes(first) == sum(
        table_choice(first, budget - tables[1]).values())
    owner.close()
    assert ledger.reserved_bytes() == 0


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)
def test_a_key_the_ledger_has_no_room_for_evicts_the_other_and_proofs_stay_right(
        redis_url, heartbeat, rng):
    from snark.cpu_backend import CpuBackend as Cpu

    circuits = [random_circuit(num_inputs=2, num_constraints=600 + 11 * i, rng=rng)
                for i in range(2)]
    first, second = (groth16.setup(c.compile()) for c in circuits)
    backend = gpu.get_backend(table_budget_bytes=1 << 40)
    sizes = [key_bytes(k) + backend.extra_resident_bytes(k) for k in (first, second)]
    ledger = _ledger(redis_url, heartbeat, max(sizes) + min(sizes) - 1)
    owner = _owner(backend, ledger)
    r, s = rng.randrange(1, 1 << 200), rng.randrange(1, 1 << 200)
    for name, key, circuit in (("a", first, circuits[0]), ("b", second, circuits[1]),
                               ("a", first, circuits[0])):
        owner.make_resident(owner.key(name, lambda key=key: key))
        assert owner.resident() == [key]  # the other one made room
        assert ledger.reserved_bytes() == key_bytes(key) + backend.extra_resident_bytes(key)
        w = circuit.witness()
        assert (groth16.prove(key, w, backend, r=r, s=s).to_bytes()
                == groth16.prove(key, w, Cpu(), r=r, s=s).to_bytes())
    owner.close()
    assert ledger.reserved_bytes() == 0
