"""A small key (a WinningPoSt's) stays resident under ledger pressure: a worker runtime on
a real Redis ledger, its keys made resident as its memory phase does, while larger keys
(PoRep's) and other processes' partitions compete for the budget."""

from __future__ import annotations

import pytest
import redis

from config.settings import load_settings
from snark import groth16
from tests.circuits import random_circuit
from tests.test_residency import RecordingCpu
from workers.gpu_binding import bind_cpu
from workers.ledger import key_bytes
from workers.runtime import WorkerRuntime


def _key(rng, constraints: int):
    return groth16.setup(random_circuit(num_inputs=2, num_constraints=constraints,
                                        rng=rng).compile())


@pytest.fixture(scope="module")
def keys(module_rng):
    return _key(module_rng, 30), _key(module_rng, 300), _key(module_rng, 310)


def _runtime(redis_url, budget: int, pinned: int) -> WorkerRuntime:
    settings = load_settings(redis_url=redis_url, vram_budget_bytes=budget,
                             pinned_key_bytes=pinned)
    return WorkerRuntime(client=redis.Redis.from_url(redis_url), settings=settings,
                         worker_name="pin-test", binding=bind_cpu(0), backend=RecordingCpu())


def _serve(runtime: WorkerRuntime, rounds: list[tuple[str, object]]) -> list[str]:
    """Make each (name, key) resident in turn, as the memory phase does; the loads."""
    loads: list[str] = []
    for name, key in rounds:
        def load(key=key, name=name):
            loads.append(name)
            return key
        runtime.residency.make_resident(runtime.residency.key(("type", name), load))
    return loads


@pytest.mark.parametrize("pinned", [True, False])
def test_a_pinned_winning_post_key_survives_porep_keys_and_partitions(redis_url, keys, rng,
                                                                      pinned):
    small, big, bigger = keys
    budget = key_bytes(small) + key_bytes(bigger)  # the small key and one PoRep key
    runtime = _runtime(redis_url, budget, key_bytes(small) if pinned else 0)
    try:
        # another process's PoRep partition holds what the keys leave of the budget
        partition = runtime.ledger.reserve("other-process:partition", budget // 3)
        rounds = [("winning", small)] + [
            rng.choice([("porep", big), ("porep-64", bigger)]) for _ in range(6)]
        rounds += [("porep", big), ("porep-64", bigger), ("winning", small)]
        loads = _serve(runtime, rounds)
        evicted = runtime.backend.evicted
        if pinned:
            assert small.circuit_id not in evicted and loads.count("winning") == 1
            assert small in runtime.residency.pinned() == [small]
            # the PoRep keys made room for each other, and one alone is reserved forced
            assert big.circuit_id in evicted and bigger.circuit_id in evicted
        else:  # the same pressure evicts it: what pinning is for
            assert small.circuit_id in evicted and loads.count("winning") == 2
        assert partition is not None
        partition.release()
    finally:
        runtime.close()


def test_pins_stop_at_the_pinned_bytes(redis_url, keys):
    small, big, _ = keys
    runtime = _runtime(redis_url, 10 * key_bytes(big), key_bytes(small) + key_bytes(big) - 1)
    try:
        _serve(runtime, [("a", small), ("b", big)])
        assert runtime.residency.pinned() == [small]  # the second would pass the total
    finally:
        runtime.close()
