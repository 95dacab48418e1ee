"""The full-size checks of a timing-key partition (``bench/full_size_check.py``), on the CPU
backend at a size it proves in a moment: every step of an honest partition passes, and a
changed quotient coefficient, witness value or MSM point fails its own step."""

from __future__ import annotations

import numpy as np
import pytest

from bench.filecoin_gpu import timing_key
from bench.full_size_check import check_partition, folded_dot
from snark.cpu_backend import CpuBackend
from snark.fields import FR_MODULUS, fr_to_limbs, limbs_to_ints
from snark.groth16 import CpuFixedBase
from tests.circuits import random_circuit


@pytest.fixture(scope="module")
def partition(module_rng):
    """A density circuit's timing key (32 distinct points a G1 tile, 4 a G2 one), its
    witness, and each step's results on the CPU backend."""
    circuit = random_circuit(num_inputs=3, num_constraints=200, rng=module_rng)
    r1cs = circuit.compile()
    rng = np.random.default_rng(module_rng.getrandbits(64))
    key, logs = timing_key(r1cs, rng, CpuFixedBase(), distinct=32)
    backend = CpuBackend()
    backend.prepare(key)
    assignment = circuit.witness()
    abc = backend.evaluate_abc(key, assignment)
    h = backend.quotient(key, abc)
    points = {basis: backend.msm_g1(key, basis, scalars) for basis, scalars in
              (("a_g1", assignment), ("b_g1", assignment),
               ("l_g1", assignment[r1cs.num_inputs:]), ("h_g1", h))}
    points["b_g2"] = backend.msm_g2(key, "b_g2", assignment)
    return key, logs, assignment, tuple(np.array(v) for v in abc), np.array(h), points, rng


def test_an_honest_partition_passes_every_check(partition):
    key, logs, assignment, abc, h, points, rng = partition
    assert check_partition(key, logs, assignment, abc, h, points, rng) == {
        "quotient": True, "a_g1": True, "b_g1": True, "b_g2": True, "l_g1": True,
        "h_g1": True}


def test_each_wrong_step_fails_its_own_check(partition):
    key, logs, assignment, abc, h, points, rng = partition
    wrong_h = h.copy()
    wrong_h[len(h) // 2] = fr_to_limbs([(limbs_to_ints(h[len(h) // 2:len(h) // 2 + 1])[0] + 1)
                                        % FR_MODULUS])[0]
    verdicts = check_partition(key, logs, assignment, abc, wrong_h, points, rng)
    assert not verdicts["quotient"] and not verdicts["h_g1"] and verdicts["a_g1"]
    swapped = dict(points, l_g1=points["a_g1"])
    verdicts = check_partition(key, logs, assignment, abc, h, swapped, rng)
    assert not verdicts["l_g1"] and verdicts["a_g1"] and verdicts["quotient"]


def test_a_witness_that_does_not_satisfy_has_no_quotient_check(partition):
    key, logs, assignment, abc, h, points, rng = partition
    assert check_partition(key, logs, assignment, None, h, points, rng) == {
        "a_g1": True, "b_g1": True, "b_g2": True, "l_g1": True, "h_g1": True}


@pytest.mark.parametrize("spec", ["2KiB", "window:2KiB", "winning:2KiB", "snap:2KiB"])
def test_each_timing_target_says_truly_whether_its_witness_satisfies(spec, np_rng):
    """What ``--time`` proves: PoRep's sparse sector and PoSt's padded sparse sectors
    satisfy their circuits (so the quotient is checked at full size); an update's random
    values do not, and the target says so."""
    from bench.filecoin_gpu import target

    what = target(spec, np_rng)
    r1cs, plan = what.r1cs(), what.plan()
    assignment = plan.run(what.values(0)).assignment()
    assert r1cs.is_satisfied(assignment) == what.satisfied


def test_the_folded_dot_is_the_dot_over_the_tile(np_rng):
    logs = np_rng.integers(0, 2**62, size=(5, 4), dtype=np.uint64)
    logs[:, 3] = 0
    scalars = np_rng.integers(0, 2**62, size=(23, 4), dtype=np.uint64)
    scalars[:, 3] = 0
    s, k = limbs_to_ints(scalars), limbs_to_ints(logs)
    assert folded_dot(scalars, logs) == sum(s[t] * k[t % 5] for t in range(23)) % FR_MODULUS


@pytest.mark.gpu
def test_the_bench_checks_every_step_of_a_gpu_partition(module_rng):
    """The bench's own path on the GPU (``step_times``: device handles, the backend's
    forms): an honest partition passes every check, so a failing check at 2^27 is news."""
    import gpu
    from bench.filecoin_gpu import step_times
    from gpu.fixed_base import GpuFixedBase

    ok, why = gpu.available()
    if not ok:
        pytest.skip(why)
    import cupy

    circuit = random_circuit(num_inputs=3, num_constraints=1500, rng=module_rng)
    rng = np.random.default_rng(module_rng.getrandbits(64))
    key, logs = timing_key(circuit.compile(), rng, GpuFixedBase(), distinct=32)
    backend = gpu.get_backend()
    backend.prepare(key)
    witness = cupy.asarray(circuit.witness())
    _, scratch, checks = step_times(key, logs, witness, backend, rng)
    assert checks == {"quotient": True, "a_g1": True, "b_g1": True, "b_g2": True,
                      "l_g1": True, "h_g1": True}
    assert set(scratch) == {"abc", "quotient", "a_g1", "b_g1", "l_g1", "h_g1", "b_g2"}
    assert scratch["abc"] >= 3 * 32 * key.domain_size  # A·w, B·w, C·w are new arrays
    assert all(bytes_ >= 0 for bytes_ in scratch.values()) and scratch["h_g1"] > 0
