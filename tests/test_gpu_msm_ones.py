"""The witness's ones summed apart from the digit sort (``MsmTuning.split_ones``), on the
GPU: the split's lists and counts, MSMs against arkworks and against the path that sorts
every digit (mixes of 0, 1, r + 1 and other values; all ones; no ones; leading
infinities; G1 and G2, plain and tabled bases), a batch sharing one split and sort, and
density-form proofs byte-identical to the CPU backend's. Needs a GPU."""

from __future__ import annotations

import dataclasses

import pytest

import gpu
from snark.curve import G1Point, G2Point
from snark.fields import FR_MODULUS as R
from snark.fields import fr_to_limbs, limbs_to_ints
from tests.test_gpu_msm import random_pools, random_scalars, reference

GPU_OK, GPU_WHY = gpu.available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)]

GROUPS = [(1, G1Point), (2, G2Point)]


@pytest.fixture(scope="module")
def pools(module_rng):
    return random_pools(module_rng)


def witness_mix(rng, n: int) -> list[int]:
    """Mostly 0 and 1 (r + 1 is a one too, once reduced), some 2, r − 1 and random values."""
    others = (2, R - 1, R + 1, rng.randrange(R), rng.randrange(R))
    return [rng.choice((0, 1)) if rng.random() < 0.85 else rng.choice(others)
            for _ in range(n)]


def device_msm(points, scalars: list[int], *, split: bool, tabled: bool = False,
               leading_infinity: int = 0):
    import cupy
    from gpu.msm import TUNING, MsmBases, msm, table_plan

    table = table_plan(leading_infinity + len(points)) if tabled else None
    bases = MsmBases(points, leading_infinity=leading_infinity, table=table)
    tuning = dataclasses.replace(TUNING, split_ones=split)
    return msm(bases, cupy.asarray(fr_to_limbs(scalars)), tuning=tuning)


def test_split_lists_the_ones_and_counts_the_others(rng):
    import cupy
    from gpu.msm import split_ones

    for n in (1, 31, 33, 5000, 70_001):
        ints = witness_mix(rng, n)
        ints[:40] = [1] * len(ints[:40])  # whole warps of ones
        scalars = cupy.asarray(fr_to_limbs(ints))
        stream = cupy.cuda.Stream(non_blocking=True)
        (ones,) = split_ones([(scalars, n)], cupy.cuda.Device().id, stream)
        want = [i for i, v in enumerate(ints) if v % R == 1]
        assert ones.count == len(want), n
        assert sorted(ones.indices[:ones.count].get(stream=stream).tolist()) == want, n
        assert ones.others == sum(v % R not in (0, 1) for v in ints), n


@pytest.mark.parametrize("group, cls", GROUPS)
@pytest.mark.parametrize("n", [1, 31, 33, 1000, 40_001])
def test_ones_apart_match_arkworks_and_the_full_sort(pools, group, cls, n, rng):
    points = pools[group][:n]
    scalars = witness_mix(rng, n)
    want = reference(cls, points, scalars)
    for tabled in (False, True):
        assert device_msm(points, scalars, split=True, tabled=tabled) == want, tabled
        assert device_msm(points, scalars, split=False, tabled=tabled) == want, tabled


@pytest.mark.parametrize("group, cls", GROUPS)
def test_all_ones_no_ones_and_nothing_but_bits(pools, group, cls, rng, np_rng):
    """All ones (no digit at all: the ones' sum alone), no ones (uniform), only 0s and 1s,
    all zero, and a single one among zeros; on 2^16 bases so that the ones' partial sums
    take the two-stage reduction."""
    n = len(pools[group])
    points = pools[group]
    single = [0] * n
    single[rng.randrange(n)] = 1
    cases = {
        "all ones": [1] * n,
        "no ones": random_scalars(np_rng, n),
        "zeros and ones": [rng.choice((0, 1)) for _ in range(n)],
        "all zero": [0] * n,
        "one one": single,
    }
    for name, scalars in cases.items():
        assert device_msm(points, scalars, split=True) == reference(cls, points, scalars), name


@pytest.mark.parametrize("group, cls", GROUPS)
def test_ones_at_leading_infinities_add_nothing(pools, group, cls, rng):
    """l_g1's bases start with infinities for the inputs, and witness[0] = 1: the ones
    there are listed and add infinity."""
    points = pools[group][:3000]
    scalars = [1, 1, 1] + witness_mix(rng, len(points))
    for tabled in (False, True):
        got = device_msm(points, scalars, split=True, tabled=tabled, leading_infinity=3)
        assert got == reference(cls, points, scalars[3:]), tabled


def test_a_batch_shares_one_split_and_one_sort_per_vector(pools, rng, monkeypatch):
    """G1 and G2 MSMs of one witness on three streams (and a slice of it, and an all-ones
    vector) split each vector once and sort its other scalars once per layout."""
    import cupy
    from gpu import msm as gpu_msm
    from gpu.msm import MsmBases, msm_many, table_plan

    n = 20_000
    calls = {"split": 0, "sort": 0}

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            calls[name] += len(args[0]) if name == "split" else 1
            return fn(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(gpu_msm, "split_ones", counted("split", gpu_msm.split_ones))
    monkeypatch.setattr(gpu_msm, "sort_digits", counted("sort", gpu_msm.sort_digits))
    ints = witness_mix(rng, n)
    witness = cupy.asarray(fr_to_limbs(ints))
    ones = cupy.asarray(fr_to_limbs([1] * n))
    g1, g2 = MsmBases(pools[1][:n]), MsmBases(pools[2][:n])
    g1_tabled = MsmBases(pools[1][:n], table=table_plan(n))
    jobs = [(g1, witness), (g2, witness), (g1_tabled, witness), (g1, witness[5:]),
            (g2, ones), (g1, witness)]
    streams = {"g2_stream": cupy.cuda.Stream(non_blocking=True),
               "g1_streams": (cupy.cuda.Stream(non_blocking=True),)}
    want = [reference(G1Point, pools[1][:n], ints), reference(G2Point, pools[2][:n], ints),
            reference(G1Point, pools[1][:n], ints),
            reference(G1Point, pools[1][:n - 5], ints[5:]),
            reference(G2Point, pools[2][:n], [1] * n),
            reference(G1Point, pools[1][:n], ints)]
    assert msm_many(jobs, **streams) == want
    # three vectors; the witness sorted for plain and tabled bases, its slice once, the
    # all-ones vector not at all
    assert calls == {"split": 3, "sort": 3}
    # the ones of the witness alone apart: the slice and the ones sorted whole
    assert msm_many(jobs, **streams, ones_apart=[witness]) == want
    assert calls == {"split": 4, "sort": 7}
    assert limbs_to_ints(witness.get()) == ints  # the scalars are read, never written


@pytest.fixture(scope="module")
def bits_circuit(module_rng):
    """A witness of bits (80% of them) and their running products, where B never reads the
    running values and A never reads one variable: density masks with holes."""
    from snark.r1cs import ONE, ConstraintSystem

    cs = ConstraintSystem(check=True)
    x = cs.alloc_input(module_rng.randrange(R))
    bits = [cs.alloc(module_rng.randrange(2)) for _ in range(400)]
    for bit in bits:
        cs.enforce({ONE: 1, bit: -1}, {bit: 1}, {})
    acc = x
    for bit in bits[:100]:
        nxt = cs.alloc(cs.eval(acc) * (cs.eval(bit) + 2) % R)
        cs.enforce(acc, {bit: 1, ONE: 2}, nxt)
        acc = nxt
    only_b = cs.alloc(module_rng.randrange(R))
    cs.enforce({ONE: 1}, {only_b: 1}, {only_b: 1})
    return cs


@pytest.mark.parametrize("density", [True, False], ids=["density", "dense"])
def test_proofs_of_a_bits_witness_are_byte_identical_to_the_cpu(bits_circuit, density, rng):
    """``GpuBackend.proof_msms`` with the ones apart (the default) and without, on a key in
    density form and a dense one: the CPU backend's proof, byte for byte, and it verifies."""
    from snark import groth16
    from snark.cpu_backend import CpuBackend

    from gpu.msm import TUNING

    key = groth16.setup(bits_circuit.compile(), density=density)
    w = bits_circuit.witness()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    want = groth16.prove(key, w, CpuBackend(), r=r, s=s)
    assert groth16.verify(key.vk, bits_circuit.public_inputs(), want)
    for split in (True, False):
        backend = gpu.get_backend(msm_tuning=dataclasses.replace(TUNING, split_ones=split))
        assert groth16.prove(key, w, backend, r=r, s=s).to_bytes() == want.to_bytes(), split
