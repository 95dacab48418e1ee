"""GPU MSM (G1, G2) and fixed-base multiplication against arkworks on fresh random inputs,
plus the edge cases: zero scalars, repeated points, P and -P in one bucket, infinity
bases, scalars >= r, n = 1, sizes that are not powers of two. Window planning runs
everywhere; the rest needs a GPU (marker ``gpu``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import gpu
from gpu.msm import MAX_TABLE_C, SCALAR_BITS, TUNING, plan, table_plan
from snark.curve import G1Point, G2Point, PointArray, Scalar, scalars_from_ints
from snark.fields import FR_MODULUS as R
from snark.fields import fr_to_limbs, limbs_to_ints, random_fr

GPU_OK, GPU_WHY = gpu.available()


def on_gpu(test):
    return pytest.mark.gpu(pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)(test))


GROUPS = [(1, G1Point), (2, G2Point)]


# -- everywhere -------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 1000, 1 << 16, 1 << 20, 1 << 24, (1 << 31) - 1])
def test_plan_covers_256_bits_and_splits_windows_into_runs(n):
    for p, max_c, sets in ((plan(n), 20, None), (table_plan(n), MAX_TABLE_C, 1)):
        assert 2 <= p.c <= max_c
        assert p.windows * p.c >= SCALAR_BITS > (p.windows - 1) * p.c
        assert p.sets == (p.windows if sets is None else sets)
        assert 0 <= p.run_bits <= p.bucket_bits
        assert p.runs_per_window << p.run_bits == p.buckets


def test_plan_widens_windows_only_up_to_max_c():
    """At 2^27 the cost model prefers c = 22 (12 windows) to 20 (13), which measured slower
    (the tuning field's docstring): the default keeps 20, a wider max_c lets 22 through."""
    wide = dataclasses.replace(TUNING, max_c=24)
    assert (plan(1 << 27).c, plan(1 << 27).windows) == (20, 13)
    assert (plan(1 << 27, wide).c, plan(1 << 27, wide).windows) == (22, 12)
    assert plan(1 << 20, wide) == plan(1 << 20)


def test_table_plan_takes_wider_windows_where_tables_pay():
    """One reduction instead of one per window: at 2^20, c = 20 (13 digits a scalar)
    against c = 16 (16 digits) for plain bases."""
    assert (plan(1 << 20).c, plan(1 << 20).windows) == (16, 16)
    assert (table_plan(1 << 20).c, table_plan(1 << 20).windows) == (20, 13)
    assert all(table_plan(n).windows <= plan(n).windows for n in (1, 100, 1 << 12, 1 << 24))


@pytest.mark.parametrize("n, slots", [(1 << 27, 1 << 30), (1 << 27, 1 << 40), (1000, 2500),
                                      (1000, 1), (1 << 20, 3 << 20)])
def test_window_groups_cover_the_windows_within_the_slots(n, slots):
    """Contiguous groups of near-equal size, as few as keep each sort within the slots
    (a window a group at the least); at 2^27, 1 G slots: h_g1's 13 windows in two."""
    from gpu.msm import TUNING, window_groups

    p = plan(n)
    groups = window_groups(p, n, dataclasses.replace(TUNING, max_sort_slots=slots))
    assert [w for g in groups for w in g] == list(range(p.windows))
    assert max(len(g) for g in groups) - min(len(g) for g in groups) <= 1
    assert all(n * len(g) <= max(slots, n) for g in groups)
    assert len(groups) == -(-p.windows // max(1, slots // n))
    if (n, slots) == (1 << 27, 1 << 30):
        assert (p.windows, [len(g) for g in groups]) == (13, [6, 7])


@pytest.mark.parametrize("windows", [range(0, 1), range(0, 7), range(6, 13), range(2, 5)])
@pytest.mark.parametrize("per_window, slots", [(1 << 27, 1 << 29), (1 << 27, 1), (1000, 3500),
                                               (1000, 1 << 40)])
def test_the_staged_scatter_stages_in_near_equal_turns(windows, per_window, slots):
    """Runs of the sort's windows in order, near-equal, each within the staging slots (a
    window at the least), as few as that allows; by default h_g1's group of 7 windows of
    2^27 digits in turns of 3 and 4 (4.3 GB of staging instead of 7.5)."""
    from gpu.msm import TUNING, staging_turns

    turns = staging_turns(windows, per_window, dataclasses.replace(TUNING, staging_slots=slots))
    assert [w for t in turns for w in t] == list(windows)
    assert max(map(len, turns)) - min(map(len, turns)) <= 1
    assert all(per_window * len(t) <= max(slots, per_window) for t in turns)
    assert len(turns) == -(-len(windows) // max(1, slots // per_window))
    if (len(windows), per_window, slots) == (7, 1 << 27, TUNING.staging_slots):
        assert [len(t) for t in turns] == [3, 4]


@pytest.mark.parametrize("keys", [1, 2, 3, 1000, 6 << 19, 7 << 19, 13 << 15, 1 << 23])
@pytest.mark.parametrize("bins", [1, 48, 64, 1024, 5000])
def test_staged_scatter_bins_are_as_wide_as_the_bin_count_needs(keys, bins):
    """The narrowest bins (fewest keys, a power of two) that make at most ``scatter_bins``
    of them, and never more than shared memory holds (MAX_BINS); by default a dense 2^27
    MSM's window groups of 6 and 7 windows (2^19 keys each) take 48 and 56 bins."""
    from gpu.msm import MAX_BINS, TUNING, bin_shift

    most = min(bins, MAX_BINS)
    shift = bin_shift(keys, dataclasses.replace(TUNING, scatter_bins=bins))
    assert -(-keys // (1 << shift)) <= most
    assert shift == 0 or -(-keys // (1 << (shift - 1))) > most
    if bins == TUNING.scatter_bins and keys in (6 << 19, 7 << 19):
        assert -(-keys // (1 << shift)) == 8 * (keys >> 19)


def test_level0_chunks_by_sort_size():
    """Half chunks below 2^23 digits, 256 from 2^29 on: only a dense 2^27 MSM's window
    group (h_g1's, 6 or 7 windows of 2^27 digits) takes the longest chunks."""
    from gpu.msm import TUNING, window_groups

    assert [TUNING.level0_chunk(d) for d in (1, (1 << 23) - 1, 1 << 23, (1 << 29) - 1,
                                            1 << 29)] == [32, 32, 64, 64, 256]
    n = 1 << 27
    assert all(TUNING.level0_chunk(n * len(g)) == 256 for g in window_groups(plan(n), n))
    assert TUNING.level0_chunk(n // 10 * plan(n // 10).windows) == 64  # a witness's others


def test_table_choice_takes_g2_first_then_the_largest_g1_bases_within_budget(rng):
    from gpu.backend import table_choice
    from snark import groth16
    from tests.circuits import random_circuit

    key = groth16.setup(random_circuit(num_inputs=3, num_constraints=300, rng=rng).compile())
    every = table_choice(key, 1 << 40)
    assert set(every) == {"a_g1", "b_g1", "b_g2", "l_g1", "h_g1"}
    for name, extra in every.items():  # windows − 1 more copies of the rows
        points = getattr(key, name)
        rows = len(points) + (key.r1cs.num_inputs if name == "l_g1" else 0)
        assert extra == (table_plan(rows).windows - 1) * points.xy.nbytes // len(points) * rows
    g1_by_size = sorted((n for n in every if n != "b_g2"), key=lambda n: -len(getattr(key, n)))
    assert table_choice(key, 0) == {}
    assert set(table_choice(key, every["b_g2"] + every[g1_by_size[0]])) == {"b_g2", g1_by_size[0]}
    short = table_choice(key, every["b_g2"] - 1)  # no G2 table, the G1 ones that fit
    assert "b_g2" not in short and short and sum(short.values()) < every["b_g2"]


# -- on the GPU ---------------------------------------------------------------------------
def reference(cls, points: PointArray, scalars: list[int]):
    return cls.multiexp_unchecked(points.to_points(), scalars_from_ints(s % R for s in scalars))


def random_pools(module_rng) -> dict[int, PointArray]:
    """2^16 distinct random points per group (k·G on the GPU; checked by the fixed-base test)."""
    from gpu.fixed_base import GpuFixedBase

    mul = GpuFixedBase()
    n = 1 << 16
    rng = np.random.default_rng(module_rng.getrandbits(64))
    return {1: mul.mul_g1(random_fr(n, rng)), 2: mul.mul_g2(random_fr(n, rng))}


@pytest.fixture(scope="module")
def pools(module_rng):
    return random_pools(module_rng)


def run_msm(points: PointArray, scalars: list[int], base_count: int | None = None,
            tabled: bool = False):
    import cupy
    from gpu.msm import MsmBases, msm

    points = points if base_count is None else points[:base_count]
    bases = MsmBases(points, table=table_plan(len(points)) if tabled else None)
    device_scalars = cupy.asarray(fr_to_limbs(scalars) if scalars else np.zeros((0, 4), np.uint64))
    return msm(bases, device_scalars)


def random_scalars(np_rng, n: int) -> list[int]:
    return limbs_to_ints(random_fr(n, np_rng))


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
@pytest.mark.parametrize("log_n", range(1, 17))
def test_msm_matches_arkworks_powers_of_two(pools, group, cls, log_n, np_rng):
    n = 1 << log_n
    points = pools[group][:n]
    scalars = random_scalars(np_rng, n)
    assert run_msm(points, scalars) == reference(cls, points, scalars)


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
@pytest.mark.parametrize("n", [1, 3, 7, 1000, 12345])
def test_msm_odd_sizes_use_a_prefix_of_the_bases(pools, group, cls, n, np_rng):
    points = pools[group][:n + 17]
    scalars = random_scalars(np_rng, n)
    assert run_msm(points, scalars) == reference(cls, points[:n], scalars)


def edge_cases(np_rng, cls, pool: PointArray) -> dict[str, tuple[PointArray, list[int]]]:
    n = 300
    pts = pool.to_points() if len(pool) <= n else pool[:n].to_points()
    p = pts[0]
    zero = cls.identity()
    s = random_scalars(np_rng, n)
    some_zero = [0 if i % 3 == 0 else v for i, v in enumerate(s)]
    with_inf = [zero if i % 4 == 1 else q for i, q in enumerate(pts)]
    plus_minus = [p, -p] * (n // 2)
    shared = [s[0]] * n
    return {
        "all scalars zero": (PointArray.from_points(pts), [0] * n),
        "some scalars zero": (PointArray.from_points(pts), some_zero),
        "one point repeated": (PointArray.from_points([p] * n), s),
        "one point, one scalar (one hot bucket, P + P)": (PointArray.from_points([p] * n), shared),
        "P and -P with equal scalars (P + (-P))": (PointArray.from_points(plus_minus), shared),
        "infinity bases": (PointArray.from_points(with_inf), s),
        "all bases at infinity": (PointArray.from_points([zero] * n), s),
        "scalars >= r reduced": (PointArray.from_points(pts), [v + R for v in s[:n // 2]] +
                                 [(1 << 256) - 1 - i for i in range(n - n // 2)]),
        "scalar r - 1 and 1": (PointArray.from_points(pts[:2]), [R - 1, 1]),
        "all scalars one (one bucket per window 0)": (PointArray.from_points(pts), [1] * n),
        "zeros and ones": (PointArray.from_points(pts), [i % 2 for i in range(n)]),
        "n = 1": (PointArray.from_points(pts[:1]), s[:1]),
    }


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
def test_msm_edge_cases(pools, group, cls, np_rng):
    for name, (points, scalars) in edge_cases(np_rng, cls, pools[group]).items():
        assert run_msm(points, scalars) == reference(cls, points, scalars), name


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
def test_msm_with_skewed_scalars_at_2_16(pools, group, cls, rng):
    """A witness-like vector (mostly 0, 1 and small values) piles points into few buckets."""
    points = pools[group]
    n = len(points)
    scalars = [rng.choice((0, 1, 1, 2, 3, rng.randrange(R))) for _ in range(n)]
    assert run_msm(points, scalars) == reference(cls, points, scalars)


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
def test_msm_of_no_scalars_is_infinity(pools, group, cls):
    assert run_msm(pools[group][:4], []) == cls.identity()


@on_gpu
def test_leading_infinities_ignore_the_first_scalars(pools, np_rng):
    import cupy
    from gpu.msm import MsmBases, msm

    points, scalars = pools[1][:100], random_scalars(np_rng, 103)
    full = cupy.asarray(fr_to_limbs(scalars))
    expected = reference(G1Point, points, scalars[3:])
    for table in (None, table_plan(103)):
        assert msm(MsmBases(points, leading_infinity=3, table=table), full) == expected


@on_gpu
def test_msm_many_shares_sorts_and_matches_single_msms(pools, np_rng):
    """One batch: the same scalars for G1 and G2 (one sort, read on three streams: G2 on
    its own, G1 on two in turn), a slice of them, another vector, and an empty one."""
    import cupy
    from gpu.msm import MsmBases, msm_many

    n = 5000
    shared = cupy.asarray(fr_to_limbs(random_scalars(np_rng, n)))
    other = cupy.asarray(fr_to_limbs(random_scalars(np_rng, n)))
    g1, g2 = MsmBases(pools[1][:n]), MsmBases(pools[2][:n])
    jobs = [(g1, shared), (g2, shared), (g1, other), (g2, shared[7:]), (g1, shared),
            (g1, shared[:0])]
    got = msm_many(jobs, g2_stream=cupy.cuda.Stream(non_blocking=True),
                   g1_streams=(cupy.cuda.Stream(non_blocking=True),))
    ints = {id(v): limbs_to_ints(cupy.asnumpy(v)) for v in (shared, other)}
    expected = [reference(G1Point, pools[1][:n], ints[id(shared)]),
                reference(G2Point, pools[2][:n], ints[id(shared)]),
                reference(G1Point, pools[1][:n], ints[id(other)]),
                reference(G2Point, pools[2][:n - 7], ints[id(shared)][7:]),
                reference(G1Point, pools[1][:n], ints[id(shared)]),
                G1Point.identity()]
    assert got == expected


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
def test_window_groups_match_one_sort(pools, group, cls, np_rng, rng):
    """A sort too large for ``max_sort_slots`` goes a window group at a time (the count and
    scatter kernels over a window range): plain and tabled bases, uniform scalars, a
    witness's mix of bits (ones apart), and a batch whose shared vector is grouped for one
    MSM and shared by none."""
    import cupy
    from gpu.msm import TUNING, MsmBases, msm, msm_many, window_groups

    n = 1 << 14
    points = pools[group][:n]
    uniform = random_scalars(np_rng, n)
    witness = [rng.choice((0, 1)) if rng.random() < 0.8 else rng.randrange(R)
               for _ in range(n)]
    for slots in (n * 5, n * 2, n):  # from a few groups to a window a group
        tuning = dataclasses.replace(TUNING, max_sort_slots=slots)
        for tabled in (False, True):
            bases = MsmBases(points, table=table_plan(n) if tabled else None)
            assert len(window_groups(bases.plan_for(n), n, tuning)) > 1
            for scalars in (uniform, witness):
                got = msm(bases, cupy.asarray(fr_to_limbs(scalars)), tuning=tuning)
                assert got == reference(cls, points, scalars), (slots, tabled)
    shared = cupy.asarray(fr_to_limbs(uniform))
    plain = MsmBases(points)
    tuning = dataclasses.replace(TUNING, max_sort_slots=n * 3)
    got = msm_many([(plain, shared), (plain, shared[5:]), (plain, shared)], tuning=tuning,
                   g1_streams=(cupy.cuda.Stream(non_blocking=True),),
                   g2_stream=cupy.cuda.Stream(non_blocking=True))
    assert got == [reference(cls, points, uniform), reference(cls, points[:n - 5], uniform[5:]),
                   reference(cls, points, uniform)]


#: The staged scatter at test sizes: every sort staged, in as many bins as it may make.
STAGED = dataclasses.replace(TUNING, staged_scatter_digits=0, scatter_bins=1 << 10)
#: ... and a window a turn.
STAGED_IN_TURNS = dataclasses.replace(STAGED, staging_slots=1)


@on_gpu
@pytest.mark.parametrize("tuning", [TUNING, STAGED, STAGED_IN_TURNS],
                         ids=["direct", "staged", "staged-in-turns"])
def test_the_sort_leaves_the_bucket_ends_that_level_0_reads(rng, tuning):
    """Level 0 reads no key a slot: the scatter's cursors must end one past each bucket's
    last slot, and each bucket's slots hold its digits' entries (index | sign << 31); a
    witness's mix (window 0 placed a warp at a time), all windows and a window group (keys
    from the group's first window); the direct scatter and the staged one."""
    import cupy
    from gpu.msm import sort_digits

    n = 3000
    p = plan(n)
    half = 1 << (p.c - 1)
    scalars = [rng.choice((0, 1)) if rng.random() < 0.7 else rng.randrange(R) for _ in range(n)]
    device = cupy.asarray(fr_to_limbs(scalars))
    for windows in (range(p.windows), range(2, 5)):
        keys, entries = [], []
        for i, v in enumerate(scalars):
            carry = 0
            for w in range(windows.stop):
                raw = (v >> (w * p.c) & (2 * half - 1)) + carry
                carry = int(raw > half)
                d = raw - 2 * half if carry else raw
                if d and w >= windows.start:
                    keys.append((w - windows.start) * half + abs(d) - 1)
                    entries.append(i | (d < 0) << 31)
        digits = sort_digits(device, n, cupy.cuda.Device().id, p, windows=windows,
                             tuning=tuning)
        count = len(windows) * half
        ends = digits.ends.get()[:count]
        assert (ends == np.cumsum(np.bincount(keys, minlength=count))).all(), windows
        got = digits.entries.get()[:len(keys)].astype(np.int64)
        slot_keys = np.searchsorted(ends, np.arange(len(keys)), side="right")
        keys, entries = np.array(keys), np.array(entries, dtype=np.int64)
        expected = np.lexsort((entries, keys))
        assert (got[np.lexsort((got, slot_keys))] == entries[expected]).all(), windows


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
def test_the_staged_scatter_matches_arkworks(pools, group, cls, np_rng, rng):
    """MSMs whose sorts are all staged: uniform scalars, a witness's mix (ones apart, and
    not: window 0's hot key in the second pass), plain and tabled bases, one sort and
    window groups, one bin to as many as shared memory holds, a scalar or three a thread."""
    import cupy
    from gpu.msm import MsmBases, msm

    n = 1 << 14
    points = pools[group][:n]
    uniform = random_scalars(np_rng, n)
    witness = [rng.choice((0, 1)) if rng.random() < 0.8 else rng.randrange(R)
               for _ in range(n)]
    for tuning in (STAGED, dataclasses.replace(STAGED, scatter_bins=1, bin_scalars=3),
                   dataclasses.replace(STAGED, scatter_bins=5000, bin_scalars=1),
                   dataclasses.replace(STAGED, max_sort_slots=2 * n), STAGED_IN_TURNS,
                   dataclasses.replace(STAGED_IN_TURNS, staging_slots=3 * n,
                                       max_sort_slots=7 * n),
                   dataclasses.replace(STAGED, split_ones=False)):
        for tabled in (False, True):
            bases = MsmBases(points, table=table_plan(n) if tabled else None)
            for scalars in (uniform, witness):
                got = msm(bases, cupy.asarray(fr_to_limbs(scalars)), tuning=tuning)
                assert got == reference(cls, points, scalars), (tuning, tabled)


@on_gpu
def test_msm_many_other_streams_wait_for_the_inputs(pools, np_rng):
    """Scalars still being written on the batch's stream when the batch is queued (behind
    ~100 ms of other work): the job that runs on the second G1 stream sorts them only after
    they are there."""
    import cupy
    from gpu.msm import MsmBases, msm_many

    n = 1 << 14
    ints = [random_scalars(np_rng, n) for _ in range(2)]
    bases = MsmBases(pools[1][:n])
    batch_stream = cupy.cuda.Stream(non_blocking=True)
    with batch_stream:
        first = cupy.asarray(fr_to_limbs(ints[0]))
        msm_many([(bases, first)], stream=batch_stream)  # loads the kernels: that syncs
        staged = cupy.asarray(fr_to_limbs(ints[1]))
        busy = cupy.ones(1 << 26)
        for _ in range(400):
            busy = cupy.sin(busy)
        second = cupy.zeros_like(staged)
        second[...] = staged
    got = msm_many([(bases, first), (bases, second)], stream=batch_stream,
                   g1_streams=(cupy.cuda.Stream(non_blocking=True),))
    assert got == [reference(G1Point, pools[1][:n], v) for v in ints]


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
@pytest.mark.parametrize("n", [31, 33, 40_001])
def test_a_witness_mix_of_bits_counts_window_0_a_warp_at_a_time(pools, group, cls, n, rng):
    """Window 0's digits are counted and placed once per key and warp (msm_count,
    msm_scatter): runs of ones, zeros and other values, partial warps at the end, plain and
    tabled bases."""
    points = pools[group][:n]
    others = (2, R - 1, rng.randrange(R))
    scalars = [rng.choice((0, 1)) if rng.random() < 0.9 else rng.choice(others)
               for _ in range(n)]
    scalars[:64] = [1] * len(scalars[:64])  # whole warps on one key (n of them if n < 64)
    for tabled in (False, True):
        assert run_msm(points, scalars, tabled=tabled) == reference(cls, points, scalars), tabled


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
@pytest.mark.parametrize("n", [1, 5, 1000, 1 << 14, 1 << 16])
def test_window_tables_match_arkworks(pools, group, cls, n, np_rng):
    """Bases with window tables (rows 2^(c·w)·P_i, one bucket set for every window), on
    uniform scalars and on skewed ones (zeros, ones, scalars >= r)."""
    points = pools[group][:n]
    uniform = random_scalars(np_rng, n)
    skewed = [[0, 1, R - 1, R, (1 << 256) - 1][i % 5] if i % 2 else s
              for i, s in enumerate(uniform)]
    for scalars in (uniform, skewed):
        assert run_msm(points, scalars, tabled=True) == reference(cls, points, scalars)


@on_gpu
def test_msm_many_mixes_tabled_and_plain_bases(pools, np_rng):
    """The same scalars on tabled and plain bases lay digits out differently: each layout
    gets its own sort, and every result matches."""
    import cupy
    from gpu.msm import MsmBases, msm_many

    n = 3000
    ints = random_scalars(np_rng, n)
    shared = cupy.asarray(fr_to_limbs(ints))
    g1 = MsmBases(pools[1][:n])
    g1_tabled = MsmBases(pools[1][:n], table=table_plan(n))
    g2_tabled = MsmBases(pools[2][:n], table=table_plan(n))
    got = msm_many([(g1, shared), (g1_tabled, shared), (g2_tabled, shared), (g1_tabled, shared)],
                   g2_stream=cupy.cuda.Stream(non_blocking=True),
                   g1_streams=(cupy.cuda.Stream(non_blocking=True),))
    g1_sum = reference(G1Point, pools[1][:n], ints)
    assert got == [g1_sum, g1_sum, reference(G2Point, pools[2][:n], ints), g1_sum]


@on_gpu
def test_msm_rejects_bad_scalar_arrays(pools):
    import cupy
    from gpu.msm import MsmBases, msm

    bases = MsmBases(pools[1][:8])
    with pytest.raises(ValueError, match="scalars: 9 scalars for 8 bases"):
        msm(bases, cupy.zeros((9, 4), dtype=cupy.uint64))
    with pytest.raises(ValueError, match=r"scalars: expected \(n, 4\) uint64"):
        msm(bases, cupy.zeros((8, 4), dtype=cupy.int64))
    with pytest.raises(TypeError, match="scalars: expected a cupy.ndarray"):
        msm(bases, np.zeros((8, 4), dtype=np.uint64))


@on_gpu
@pytest.mark.parametrize("group, cls", GROUPS)
def test_fixed_base_matches_arkworks(group, cls, rng, np_rng):
    from gpu.fixed_base import GpuFixedBase

    g = cls() * Scalar(rng.randrange(1, R))  # a generator other than the default
    mul = GpuFixedBase(**{f"g{group}": g})
    ks = [0, 1, R - 1, R, R + 2, (1 << 256) - 1] + random_scalars(np_rng, 500)
    out = (mul.mul_g1 if group == 1 else mul.mul_g2)(fr_to_limbs(ks))
    assert out.inf.tolist() == [k % R == 0 for k in ks]
    assert out.to_points() == [g * Scalar(k % R) for k in ks]

