"""GPU NTTs against ``snark.domain`` on fresh random inputs (gpu-marked), plus the
pass plans, the kernels' passes run on the host (g++ build of the same headers), their
shared-memory layout, the split power tables and the kernel source expansion (run
everywhere)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import gpu
from gpu import module
from gpu.ntt import (MAX_LOG_BLOCK, MAX_LOG_PER_THREAD, MAX_LOG_SIZE, SCALE_LO_BITS, Scale,
                     make_plan, plan, scales)
from snark.domain import Domain
from snark.fields import FR_MODULUS as R
from snark.fields import from_montgomery, limbs_to_ints, random_fr

GPU_OK, GPU_WHY = gpu.available()


def on_gpu(test):
    return pytest.mark.gpu(pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)(test))


# -- everywhere -------------------------------------------------------------------------
@pytest.mark.parametrize("log_n", range(1, MAX_LOG_SIZE + 1))
def test_plan_covers_every_stage_once(log_n):
    passes = plan(log_n)
    done = 0
    for p in passes:
        assert p.first_stage == done
        assert p.stages + p.log_cols <= MAX_LOG_BLOCK
        assert p.log_cols <= p.first_stage  # a block's columns lie within one span
        assert 1 <= p.log_per_thread <= min(p.stages, MAX_LOG_PER_THREAD)
        grid, block, shared = p.launch(log_n)
        assert grid[0] * block[0] << p.log_per_thread == 1 << log_n
        assert shared == 32 << p.log_elems
        done += p.stages
    assert done == log_n
    assert len(passes) <= 4


@pytest.mark.parametrize("shape, why", [
    (((4, 0, 2), (3, 0, 2)), "the passes cover 7 stages"),
    (((4, 1, 2), (4, 0, 2)), "pass (4, 1, 2) after 0 stages"),
    (((1, 0, 2), (7, 0, 2)), "pass (1, 0, 2) after 0 stages"),
    (((4, 0, 2), (4, 0, 3)), "pass (4, 0, 3) after 4 stages"),
    (((4, 0, 2), (4, 7, 2)), "pass (4, 7, 2) after 4 stages"),
])
def test_make_plan_rejects_passes_the_kernels_cannot_run(shape, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        make_plan(8, shape)


#: Host runs of the kernels' passes: every R, first rounds shorter than R, 0 to 3 columns
#: a block, one to three passes.
HOST_SHAPES = [
    ((7, 0, 1),), ((7, 0, 2),), ((3, 0, 2), (4, 2, 2)), ((2, 0, 2), (2, 1, 1), (3, 2, 2)),
    ((4, 0, 1), (3, 3, 2)), ((5, 0, 2), (2, 0, 2)),
]


@pytest.mark.parametrize("shape", HOST_SHAPES, ids=str)
@pytest.mark.parametrize("kind", ["ntt", "intt", "coset_ntt", "coset_intt"])
def test_host_passes_match_domain(kind, shape, np_rng):
    """The natural-order transforms as the backend launches them (a gathering DIT; the
    inverse's 1/n as one constant, the coset's shifts by split tables), run pass by pass
    on the host with the kernels' per-thread code."""
    from gpu import hostlib

    n = 1 << 7
    x = random_fr(n, np_rng)
    inverse = kind.endswith("intt")
    coset = kind.startswith("coset")
    post = ("unshift_n_inv" if coset else "n_inv") if inverse else None
    got = hostlib.ntt(x, make_plan(7, shape), inverse=inverse, gather=True,
                      pre="coset" if coset and not inverse else None, post=post)
    want = getattr(Domain(n), kind)(np.asarray(limbs_to_ints(x), dtype=object))
    assert limbs_to_ints(got) == list(want)


@pytest.mark.parametrize("shape", HOST_SHAPES, ids=str)
def test_host_quotient_chain_matches_domain(shape, np_rng):
    """The coset quotient's chain on the host (``GpuBackend.quotient``), for any a, b, c:
    a and b by a DIF inverse in place (natural → bit-reversed, 1/n and the coset shift on
    its stores) then a DIT forward in place; c by the DIF inverse alone (its coefficients,
    bit-reversed); the gathering coset inverse of a·b; then minus c's coefficients read at
    the bit-reversed index, over Z. That is coset_intt((A·B − C)/Z) of ``snark.domain``."""
    from gpu import hostlib
    from snark.fields import fr_to_limbs

    log_n = 7
    n, passes, d = 1 << log_n, make_plan(log_n, shape), Domain(1 << log_n)
    a, b, c = (random_fr(n, np_rng) for _ in range(3))
    values = [np.asarray(limbs_to_ints(v), dtype=object) for v in (a, b, c)]
    on_coset = [limbs_to_ints(hostlib.ntt(hostlib.ntt(v, passes, dif=True, inverse=True,
                                                      post="shift_n_inv"), passes))
                for v in (a, b)]
    assert on_coset[0] == list(d.coset_ntt(d.intt(values[0])))
    product = fr_to_limbs([x * y % R for x, y in zip(*on_coset)])
    coset_back = limbs_to_ints(hostlib.ntt(product, passes, inverse=True, gather=True,
                                           post="unshift_n_inv"))
    c_reversed = limbs_to_ints(hostlib.ntt(c, passes, dif=True, inverse=True, post="n_inv"))
    z_inv = d.vanishing_on_coset_inverse()
    rev = [int(f"{i:0{log_n}b}"[::-1], 2) for i in range(n)]
    got = [(coset_back[i] - c_reversed[rev[i]]) * z_inv % R for i in range(n)]
    a_c, b_c, c_c = (d.coset_ntt(d.intt(v)) for v in values)
    assert got == list(d.coset_intt((a_c * b_c - c_c) * z_inv % R))


@pytest.mark.parametrize("log_n, shape", [
    (10, ((10, 0, 2),)), (11, ((6, 0, 2), (5, 1, 2))), (12, None)])
def test_host_passes_at_full_blocks(log_n, shape, np_rng):
    """Blocks of 2^10 elements (the shared-memory limit) and the default plans."""
    from gpu import hostlib

    n = 1 << log_n
    x = random_fr(n, np_rng)
    got = hostlib.ntt(x, make_plan(log_n, shape) if shape else plan(log_n), gather=True)
    assert limbs_to_ints(got) == list(Domain(n).ntt(np.asarray(limbs_to_ints(x), dtype=object)))


def test_shared_slots_are_bank_conflict_free_permutations():
    """In every round of every pass a block can run, the swizzled slots of its threads'
    registers are a permutation of the block's 2^E slots, and the eight lanes of each
    quarter-warp (one 16-byte access each) hit eight different bank groups."""
    from gpu import hostlib

    for per_thread in range(1, MAX_LOG_PER_THREAD + 1):
        for log_elems in range(per_thread, MAX_LOG_BLOCK + 1):
            for log_cols in range(0, log_elems - per_thread + 1):
                stages = log_elems - log_cols
                for round_ in range(-(-stages // per_thread)):
                    slots = hostlib.ntt_shared_slots(per_thread, stages, log_cols, round_)
                    assert sorted(slots.ravel()) == list(range(1 << log_elems))
                    for k in range(slots.shape[1]):
                        for lanes in slots[:, k].reshape(-1, min(8, slots.shape[0])):
                            assert len(set(lanes % 8)) == len(lanes), (per_thread, stages,
                                                                       log_cols, round_, k)


def test_split_power_table_reconstructs_every_index(rng):
    base, factor = rng.randrange(2, R), rng.randrange(1, R)
    count = (3 << SCALE_LO_BITS) + 5
    lo, hi = Scale(base, factor).tables(count)
    lo_m, hi_m = from_montgomery(lo, R), from_montgomery(hi, R)
    for i in [0, 1, count - 1] + rng.sample(range(count), 20):
        got = lo_m[i & ((1 << SCALE_LO_BITS) - 1)] * hi_m[i >> SCALE_LO_BITS] % R
        assert got == factor * pow(base, i, R) % R


def test_scales_match_domain_constants():
    d = Domain(1 << 5)
    s = scales(d.n)
    assert s["coset"].base == d.shift and s["unshift_n_inv"].base == d.shift_inv
    assert s["n_inv"].factor == s["unshift_n_inv"].factor == d.n_inv
    assert s["odd_n_inv"].base == d.odd_shift and s["odd_n_inv"].factor == d.n_inv


def test_odd_scale_moves_an_intt_onto_the_odd_points(rng):
    """The odd H form's fused step on the host: the unscaled inverse transform, then the
    ``odd_n_inv`` table (rebuilt from its split halves) by natural index, then the forward
    transform, is ``Domain.odd_ntt(Domain.intt(x))``: evaluations at ψ^(2i+1)."""
    d = Domain(1 << 6)
    x = np.array([rng.randrange(R) for _ in range(d.n)], dtype=object)
    lo, hi = scales(d.n)["odd_n_inv"].tables(d.n)
    lo_m, hi_m = from_montgomery(lo, R), from_montgomery(hi, R)
    table = np.array([lo_m[i & ((1 << SCALE_LO_BITS) - 1)] * hi_m[i >> SCALE_LO_BITS] % R
                      for i in range(d.n)], dtype=object)
    unscaled = d._transform(x, d._twiddles_inv)
    got = d.ntt(unscaled * table % R)
    assert list(got) == list(d.odd_ntt(d.intt(x)))
    psi = d.odd_shift
    coeffs = d.intt(x)
    for i in rng.sample(range(d.n), 4):
        point = pow(psi, 2 * i + 1, R)
        assert got[i] == sum(c * pow(point, j, R) for j, c in enumerate(coeffs)) % R


@pytest.mark.parametrize("name", ["ntt.cu", "spmv.cu", "fr_ops.cu"])
def test_sources_expand_local_headers(name):
    text = module.expanded_source(name)
    assert not re.search(r'#\s*include\s+"', text)
    assert "struct mont_t" in text and "extern \"C\" __global__" in text


# -- on the GPU ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


def _ints(cp, x) -> list[int]:
    return limbs_to_ints(cp.asnumpy(x))


def _evaluate(coeffs: list[int], z: int) -> int:
    acc = 0
    for c in reversed(coeffs):
        acc = (acc * z + c) % R
    return acc


@on_gpu
@pytest.mark.parametrize("log_n", [1, 2, 3, 7, 10, 11, 13, 16])
@pytest.mark.parametrize("kind", ["ntt", "intt", "coset_ntt", "coset_intt"])
def test_matches_cpu_domain(cp, kind, log_n, np_rng):
    from gpu import ntt as gpu_ntt

    n = 1 << log_n
    x = random_fr(n, np_rng)
    want = getattr(Domain(n), kind)(np.asarray(limbs_to_ints(x), dtype=object))
    got = getattr(gpu_ntt, kind)(cp.asarray(x))
    assert _ints(cp, got) == list(want)


@on_gpu
@pytest.mark.parametrize("log_n", [18, 20, 22])
def test_large_sizes_round_trip_and_spot_check(cp, log_n, rng, np_rng):
    """Full CPU transforms are too slow here: check whole round trips on the device and
    a few outputs against direct evaluation (Horner) on the CPU; the quotient's DIF → DIT
    chain (in place, the DIF kernels' only use) against the gathering transforms."""
    from gpu import ntt as gpu_ntt

    n = 1 << log_n
    d = Domain(n)
    x = random_fr(n, np_rng)
    coeffs = limbs_to_ints(x)
    dx = cp.asarray(x)
    evals, coset_evals = gpu_ntt.ntt(dx), gpu_ntt.coset_ntt(dx)
    assert cp.array_equal(gpu_ntt.intt(evals), dx)
    assert cp.array_equal(gpu_ntt.coset_intt(coset_evals), dx)
    assert not cp.array_equal(evals, coset_evals)
    i = rng.randrange(n)
    assert _ints(cp, evals[i:i + 1])[0] == _evaluate(coeffs, pow(d.omega, i, R))
    assert _ints(cp, coset_evals[i:i + 1])[0] == _evaluate(coeffs, d.shift * pow(d.omega, i, R) % R)
    chained = evals.copy()
    engine = gpu_ntt.engine(cp.cuda.Device().id)
    engine.dif(chained, inverse=True, post="shift_n_inv")
    engine.dit(chained, chained)
    assert cp.array_equal(chained, gpu_ntt.coset_ntt(gpu_ntt.intt(evals)))


@on_gpu
def test_quotient_chain_needs_no_permutation(cp, np_rng):
    """DIF inverse (natural → bit-reversed, shift fused) then DIT forward equals
    coset_ntt(intt(x)) — the pairing the quotient relies on."""
    from gpu.ntt import engine

    n = 1 << 12
    x = random_fr(n, np_rng)
    d = Domain(n)
    v = cp.asarray(x)
    ntt = engine(cp.cuda.Device().id)
    ntt.dif(v, inverse=True, post="shift_n_inv")
    ntt.dit(v, v)
    assert _ints(cp, v) == list(d.coset_ntt(d.intt(np.asarray(limbs_to_ints(x), dtype=object))))
