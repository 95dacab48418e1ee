"""The GPU field, curve and digit code, built for the host with g++ (gpu/hostlib), against
Python ints and arkworks on fresh random inputs. Runs everywhere g++ exists."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from snark.curve import G1Point, G2Point, PointArray, Scalar
from snark.fields import FQ_MODULUS as Q
from snark.fields import FR_MODULUS as R
from snark.fields import ints_to_limbs, limbs_to_ints

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

hostlib = pytest.importorskip("gpu.hostlib")

COUNT = 200


# -- fields -------------------------------------------------------------------------------
class Fq2:
    """Reference Fq2 = Fq[u]/(u^2 + 1) on Python ints."""

    def __init__(self, c0: int, c1: int) -> None:
        self.c = (c0 % Q, c1 % Q)

    def __add__(self, o): return Fq2(self.c[0] + o.c[0], self.c[1] + o.c[1])
    def __sub__(self, o): return Fq2(self.c[0] - o.c[0], self.c[1] - o.c[1])
    def __neg__(self): return Fq2(-self.c[0], -self.c[1])

    def __mul__(self, o):
        a0, a1 = self.c
        b0, b1 = o.c
        return Fq2(a0 * b0 - a1 * b1, a0 * b1 + a1 * b0)

    def scale(self, k: int): return Fq2(self.c[0] * k, self.c[1] * k)

    def inverse(self):
        a0, a1 = self.c
        norm = pow(a0 * a0 + a1 * a1, -1, Q)
        return Fq2(a0 * norm, -a1 * norm)


def random_values(rng, modulus: int, count: int) -> list[int]:
    """Uniform values plus the edges 0, 1, modulus - 1 and one whose two halves of limbs
    sum past a half's width (a carry that any product split into halves must handle; rare
    in uniform values)."""
    half = (modulus.bit_length() + 63) // 64 * 32
    carrying = 1 << (modulus.bit_length() - 2) | (1 << half) - 1
    return [0, 1, modulus - 1, carrying] + [rng.randrange(modulus) for _ in range(count - 4)]


def prime_field_reference(op: str, a: int, b: int, p: int, r_mont: int) -> int:
    r_inv = pow(r_mont, -1, p)
    return {
        "add": (a + b) % p,
        "sub": (a - b) % p,
        "mul": a * b * r_inv % p,
        "sqr": a * a * r_inv % p,
        "to_mont": a * r_mont % p,
        "from_mont": a * r_inv % p,
        # a is a Montgomery value a·R: its inverse in Montgomery form is R^2 / a
        "inverse": pow(a, -1, p) * r_mont * r_mont % p if a else 0,
        "neg": -a % p,
        "product_difference": (a * b - b * b) * r_inv % p,
    }[op]


@pytest.mark.parametrize("entry, p, limbs", [("fr", R, 4), ("fq", Q, 6)])
@pytest.mark.parametrize("op", hostlib.FIELD_OPS)
def test_prime_field_op_matches_python_ints(entry, p, limbs, op, rng):
    a, b = random_values(rng, p, COUNT), random_values(rng, p, COUNT)
    rng.shuffle(b)
    out = hostlib.apply(entry, op, ints_to_limbs(a, limbs), ints_to_limbs(b, limbs))
    r_mont = 1 << (64 * limbs)
    expected = [prime_field_reference(op, x, y, p, r_mont) for x, y in zip(a, b)]
    assert limbs_to_ints(out) == expected


@pytest.mark.parametrize("entry, p, limbs", [("fr", R, 4), ("fq", Q, 6)])
@pytest.mark.parametrize("op", ["mul", "sqr", "product_difference"])
def test_products_of_every_pair_of_edges(entry, p, limbs, op, rng):
    """The edges of random_values against each other (shuffled, a pair of them seldom
    meets), and two of those values' halves each: both halves' carries at once."""
    edges = random_values(rng, p, 4)
    edges += [edges[3] - 1, p - 1 - (1 << (64 * limbs // 2))]
    a = [x for x in edges for _ in edges]
    b = edges * len(edges)
    out = hostlib.apply(entry, op, ints_to_limbs(a, limbs), ints_to_limbs(b, limbs))
    r_mont = 1 << (64 * limbs)
    assert limbs_to_ints(out) == [prime_field_reference(op, x, y, p, r_mont)
                                  for x, y in zip(a, b)]


@pytest.mark.parametrize("entry, p, limbs", [("fr", R, 4), ("fq", Q, 6)])
@pytest.mark.parametrize("op", hostlib.LAZY_OPS)
def test_lazy_op_is_congruent_and_below_twice_p(entry, p, limbs, op, rng):
    """Lazy operands anywhere below 2p (below R for a product's left one, whose right one
    is reduced), edges included: the result is the field's and stays below 2p."""
    r_mont = 1 << (64 * limbs)
    top = r_mont if op == "mul_lazy" else 2 * p
    a = [0, 1, p - 1, p, 2 * p - 1, top - 1] + [rng.randrange(top) for _ in range(COUNT - 6)]
    b = (random_values(rng, p, COUNT) if op == "mul_lazy"
         else [2 * p - 1, p, 0, 2 * p - 1, 2 * p - 1, 1] + [rng.randrange(2 * p)
                                                            for _ in range(COUNT - 6)])
    out = limbs_to_ints(hostlib.apply(f"{entry}_lazy", op, ints_to_limbs(a, limbs),
                                      ints_to_limbs(b, limbs)))
    field_op = op.removesuffix("_lazy")
    for x, y, z in zip(a, b, out):
        assert z < 2 * p and z % p == prime_field_reference(field_op, x % p, y % p, p, r_mont)


def fq2_limbs(values: list[Fq2]) -> np.ndarray:
    return ints_to_limbs([c for v in values for c in v.c], 6).reshape(-1, 12)


def fq2_values(limbs: np.ndarray) -> list[Fq2]:
    flat = limbs_to_ints(limbs.reshape(-1, 6))
    return [Fq2(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


@pytest.mark.parametrize("op", hostlib.FIELD_OPS)
def test_fq2_op_matches_python_ints(op, rng):
    xs, ys = random_values(rng, Q, COUNT), random_values(rng, Q, COUNT)[::-1]
    a = [Fq2(x, y) for x, y in zip(xs, ys)]
    b = a[1:] + a[:1]
    out = fq2_values(hostlib.apply("fq2", op, fq2_limbs(a), fq2_limbs(b)))
    r_mont = 1 << 384
    r_inv = pow(r_mont, -1, Q)

    def reference(x: Fq2, y: Fq2) -> Fq2:
        if op == "inverse":
            if x.c == (0, 0):
                return Fq2(0, 0)
            return x.scale(r_inv).inverse().scale(r_mont)
        return {
            "add": lambda: x + y,
            "sub": lambda: x - y,
            "mul": lambda: (x * y).scale(r_inv),
            "sqr": lambda: (x * x).scale(r_inv),
            "to_mont": lambda: x.scale(r_mont),
            "from_mont": lambda: x.scale(r_inv),
            "neg": lambda: -x,
            "product_difference": lambda: (x * y - y * y).scale(r_inv),
        }[op]()

    assert [v.c for v in out] == [reference(x, y).c for x, y in zip(a, b)]


# -- points -------------------------------------------------------------------------------
def random_points(rng, cls, count: int) -> list:
    g = cls()
    return [g * Scalar(rng.randrange(1, R)) for _ in range(count)]


def reference_point(op: str, p, q):
    return {
        "add": lambda: p + q,
        "madd": lambda: p + q,
        "dbl": lambda: p + p,
        "dbl_affine": lambda: p + p,
        "add_proj": lambda: (p + p) + (q + q),
        "madd_proj": lambda: (p + p) + q,
        "madd_neg": lambda: p - q,
    }[op]()


def run_points(group: int, op: str, ps: list, qs: list) -> PointArray:
    a, b = PointArray.from_points(ps), PointArray.from_points(qs)
    flat = 12 if group == 1 else 24
    out = hostlib.apply(f"g{group}", op, a.xy.reshape(-1, flat), b.xy.reshape(-1, flat))
    return PointArray(group, out.reshape(a.xy.shape), ~out.any(axis=1))


def exceptional_pairs(rng, cls) -> tuple[list, list]:
    """P + P, P + (-P), either operand or both at infinity, and P + 2P."""
    p = random_points(rng, cls, 1)[0]
    zero = cls.identity()
    return [p, p, p, zero, zero, p], [p, -p, zero, p, zero, p + p]


@pytest.mark.parametrize("group, cls", [(1, G1Point), (2, G2Point)])
@pytest.mark.parametrize("op", hostlib.POINT_OPS)
def test_point_formula_matches_arkworks(group, cls, op, rng):
    ps, qs = random_points(rng, cls, 12), random_points(rng, cls, 12)
    special_p, special_q = exceptional_pairs(rng, cls)
    ps, qs = ps + special_p, qs + special_q
    got = run_points(group, op, ps, qs).to_points()
    expected = [reference_point(op, p, q) for p, q in zip(ps, qs)]
    unary = op in ("dbl", "dbl_affine")
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g == e, f"{op} case {i}: {'2P' if unary else 'P + Q'} differs from arkworks"


# -- scalar digits ------------------------------------------------------------------------
@pytest.mark.parametrize("c", [2, 5, 8, 13, 16, 19, 20])
def test_signed_digits_reconstruct_the_scalar_mod_r(c, rng):
    windows = -(-256 // c)
    values = [0, 1, R - 1, R, R + 5, 2 * R + 7, (1 << 256) - 1] + \
        [rng.randrange(1 << 256) for _ in range(COUNT)]
    digits = hostlib.signed_digits(ints_to_limbs(values, 4), c, windows)
    half = 1 << (c - 1)
    assert digits.min() > -half and digits.max() <= half
    for value, row in zip(values, digits.tolist()):
        recon = sum(d << (c * j) for j, d in enumerate(row))
        assert recon == value % R


# -- the MSM's bucket phase (same per-thread code as the kernels) -------------------------
def skewed_scalar_sets(rng, n: int) -> dict[str, list[int]]:
    uniform = [rng.randrange(R) for _ in range(n)]
    return {
        "uniform": uniform,
        "all ones (one bucket takes every point)": [1] * n,
        "zeros and ones": [rng.choice((0, 1)) for _ in range(n)],
        "small values": [rng.randrange(8) for _ in range(n)],
        "all zero": [0] * n,
        ">= r": [v + R for v in uniform[: n // 2]] + [(1 << 256) - 1] * (n - n // 2),
        "a witness: 0, 1, r + 1 (a one), 2 and others": [
            rng.choice((0, 1, 1, 1, R + 1, 2, rng.randrange(R))) for _ in range(n)],
    }


def bucket_counts(rng) -> dict[str, tuple[list[int], int]]:
    """Digits a bucket key and padding slots past them, as the device's sorts leave them."""
    gaps = []  # runs between gaps of empty buckets of every length, long ones too
    for _ in range(60):
        gaps += [0] * rng.choice((0, 0, 1, 2, 3, 7, 64, 1000)) + [rng.randrange(1, 9)]
    one = [0] * 300
    return {
        "runs and gaps of empty buckets": (gaps, 37),
        "runs and gaps, no padding": (gaps + [0] * 5, 0),
        "every digit in the first bucket": ([50] + [0] * 299, 11),
        "every digit in a middle bucket": (one[:150] + [50] + one[151:], 11),
        "every digit in the last bucket": (one[:-1] + [50], 3),
        "no digits": (one, 40),
        "one key": ([9], 4),
        "dense": ([rng.randrange(1, 5) for _ in range(200)], 17),
    }


@pytest.mark.parametrize("chunk", [1, 3, 4, 7, 64])
def test_level_0_walks_the_bucket_ends_to_every_slots_key(chunk, rng):
    """Level 0 reads no key array: each thread binary-searches the sort's bucket ends for
    its chunk's first key and walks on (galloping over empty buckets); every slot's key,
    padding past the last end, and whether each chunk's end runs continue into its
    neighbours, all as the sorted keys themselves give them."""
    for name, (counts, padding) in bucket_counts(rng).items():
        ends = np.cumsum(counts, dtype=np.uint32)
        length = int(ends[-1]) + padding
        keys, open_ = hostlib.bucket_ends_walk(ends, length, chunk)
        expected = np.searchsorted(ends, np.arange(length), side="right")
        expected = np.where(expected == len(ends), 0xFFFFFFFF, expected).astype(np.uint32)
        assert (keys == expected).all(), name
        for t, (before, after) in enumerate(open_.tolist()):
            start, end = t * chunk, min(length, (t + 1) * chunk)
            assert before == (start > 0 and expected[start - 1] == expected[start]), (name, t)
            assert after == (end < length and expected[end] == expected[end - 1]), (name, t)


@pytest.mark.parametrize("group, cls", [(1, G1Point), (2, G2Point)])
@pytest.mark.parametrize("n, c, run_bits, chunk", [
    (1, 5, 2, 4), (2, 4, 1, 4), (37, 6, 2, 4), (100, 8, 3, 6), (64, 7, 0, 32), (64, 7, 6, 4),
    (50, 3, 1, 5)])
def test_bucket_phase_matches_arkworks_multiexp(group, cls, n, c, run_bits, chunk, rng):
    check_bucket_phase(group, cls, n, c, run_bits, chunk, rng, tabled=False)


@pytest.mark.parametrize("group, cls", [(1, G1Point), (2, G2Point)])
@pytest.mark.parametrize("n, c, run_bits, chunk", [(1, 5, 2, 4), (2, 4, 1, 4), (23, 6, 2, 4)])
def test_window_tables_match_arkworks_multiexp(group, cls, n, c, run_bits, chunk, rng):
    """Window tables (rows 2^(c·w)·P_i, built by the device's per-thread code) put every
    window's digits into one bucket set; the one sum equals the multiexp (fewer shapes than
    above: each table costs n·windows inversions on the host)."""
    check_bucket_phase(group, cls, n, c, run_bits, chunk, rng, tabled=True)


@pytest.mark.parametrize("group, cls", [(1, G1Point), (2, G2Point)])
@pytest.mark.parametrize("n, c, run_bits, chunk, ones_per", [(1, 5, 2, 4, 1), (13, 6, 2, 4, 3)])
def test_ones_summed_apart_match_arkworks_multiexp(group, cls, n, c, run_bits, chunk,
                                                   ones_per, rng):
    """The scalars equal to 1 (r + 1 too) get no digits and their bases are summed by
    ``ones_partial`` threads, ``ones_per`` each; the ones' row plus the windows' sums equal
    the multiexp, plain and tabled."""
    for tabled in (False, True):
        check_bucket_phase(group, cls, n, c, run_bits, chunk, rng, tabled=tabled,
                           ones_per=ones_per)


@pytest.mark.parametrize("group, cls", [(1, G1Point), (2, G2Point)])
@pytest.mark.parametrize("n, c, cuts", [(37, 6, (0, 20, 43)), (29, 5, (0, 1, 2, 52)),
                                        (40, 8, (0, 16, 17, 32))])
def test_window_groups_sum_to_the_multiexp(group, cls, n, c, cuts, rng):
    """Windows sorted and summed a group at a time (``gpu.msm.window_groups``: the carries
    of the windows below a group still count, its sets number from its first window, whose
    weight its first sum takes): the groups' weighted sums add up to the multiexp, with
    the ones summed apart too."""
    from gpu.msm import combine_windows

    bases = [cls() * Scalar(rng.randrange(1, R)) for _ in range(n)]
    points = PointArray.from_points(bases)
    windows = -(-256 // c)
    assert cuts[-1] == windows
    for scalar_name, scalars in skewed_scalar_sets(rng, n).items():
        expected = cls.multiexp_unchecked(bases, [Scalar(s % R) for s in scalars])
        limbs = ints_to_limbs(scalars, 4)
        got = cls.identity()
        for lo, hi in zip(cuts, cuts[1:]):
            sums = hostlib.msm_window_sums(points, limbs, c, windows, 2, 4,
                                           group=range(lo, hi))
            assert sums.shape[0] == hi - lo
            got += combine_windows(sums, group, c, lo)
        assert got == expected, scalar_name
        ones = hostlib.msm_window_sums(points, limbs, c, windows, 2, 4, ones_per=3,
                                       group=range(cuts[1], windows))
        low = hostlib.msm_window_sums(points, limbs, c, windows, 2, 4, ones_per=3,
                                      group=range(0, cuts[1]))
        apart = (combine_windows(low[:-1], group, c) + combine_windows(low[-1:], group, c)
                 + combine_windows(ones[:-1], group, c, cuts[1]))
        assert apart == expected, f"{scalar_name}, ones apart"


@pytest.mark.slow  # ~30 s on one core: run once, in G1 (G2 shares the code above)
def test_ones_summed_apart_at_more_threads_and_chunks(rng):
    """A longer scalar vector: several ones' threads and 32-digit bucket chunks, plain and
    tabled."""
    for tabled in (False, True):
        check_bucket_phase(1, G1Point, 64, 7, 0, 32, rng, tabled=tabled, ones_per=7)


def check_bucket_phase(group, cls, n, c, run_bits, chunk, rng, *, tabled, ones_per=0):
    from gpu.msm import combine_windows

    g = cls()
    distinct = [g * Scalar(rng.randrange(1, R)) for _ in range(n)]
    p = distinct[0]
    base_sets = {
        "distinct": distinct,
        "one point repeated": [p] * n,
        "P and -P alternating": [p if i % 2 else -p for i in range(n)],
        "with infinity": [cls.identity() if i % 3 == 0 else q for i, q in enumerate(distinct)],
    }
    windows = -(-256 // c)
    for base_name, bases in base_sets.items():
        points = PointArray.from_points(bases)
        for scalar_name, scalars in skewed_scalar_sets(rng, n).items():
            sums = hostlib.msm_window_sums(points, ints_to_limbs(scalars, 4), c, windows,
                                           run_bits, chunk, tabled, ones_per)
            assert sums.shape[0] == (1 if tabled else windows) + bool(ones_per)
            expected = cls.multiexp_unchecked(bases, [Scalar(s % R) for s in scalars])
            got = combine_windows(sums[:sums.shape[0] - bool(ones_per)], group, c)
            if ones_per:
                got += combine_windows(sums[-1:], group, c)
            assert got == expected, f"{base_name}, {scalar_name}"


# -- fixed-base products (fixed_base.cuh) ---------------------------------------------------
def montgomery_rows(points: PointArray) -> np.ndarray:
    """A table's affine rows as the kernels hold them: every Fq limb group in Montgomery form."""
    from snark.fields import to_montgomery

    flat = np.asarray(points.xy, dtype=np.uint64).reshape(-1, 6)
    words = 12 if points.group == 1 else 24
    return to_montgomery(limbs_to_ints(flat), Q, 6).reshape(len(points), words)


def fixed_base_scalars(rng, count: int) -> list[int]:
    """Edges (0 and r give infinity between finite points, >= r is reduced) and uniform."""
    edges = [0, 1, 2, R - 1, R, R + 1, (1 << 256) - 1, 1 << 255, R - 2]
    return edges + [rng.randrange(R) for _ in range(count - len(edges))]


@pytest.mark.parametrize("group, cls", [(1, G1Point), (2, G2Point)])
@pytest.mark.parametrize("n, per_thread, threads", [(1, 1, 1), (9, 1, 9), (37, 4, 10),
                                                    (64, 30, 3)])
def test_fixed_base_threads_match_arkworks(group, cls, n, per_thread, threads, rng):
    """Any split of the points over threads (Montgomery's trick over each thread's points,
    infinity among them) gives arkworks' k·G, byte for byte, standard form."""
    from gpu.fixed_base import window_table

    g = cls() * Scalar(rng.randrange(1, R))
    ks = fixed_base_scalars(rng, max(n, 9))
    rng.shuffle(ks)
    ks = ks[:n]
    out, inf = hostlib.fixed_base(group, montgomery_rows(window_table(g, 4)), 4,
                                  ints_to_limbs(ks, 4), per_thread, threads)
    expected = PointArray.from_points([g * Scalar(k % R) for k in ks])
    assert inf.tolist() == expected.inf.astype(np.uint8).tolist()
    assert out.tobytes() == np.ascontiguousarray(expected.xy).tobytes()


@pytest.mark.parametrize("group, cls", [(1, G1Point), (2, G2Point)])
def test_fixed_base_makes_the_wider_table(group, cls, rng):
    """A width-4 table makes the width-8 one (``table_scalars``, the top window's logs above
    r reduced) in Montgomery form, row for row what arkworks builds."""
    from gpu.fixed_base import table_scalars, window_table

    g = cls() * Scalar(rng.randrange(1, R))
    scalars = table_scalars(8)
    out, inf = hostlib.fixed_base(group, montgomery_rows(window_table(g, 4)), 4, scalars,
                                  per_thread=7, threads=-(-len(scalars) // 7), mont_out=True)
    assert not inf.any()
    assert np.array_equal(out, montgomery_rows(window_table(g, 8)))
