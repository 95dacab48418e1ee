"""snark.native's MSM and fixed-base multiplication against arkworks, edge cases included:
scalars 0, 1, r − 1; bases at infinity; P + P and P + (−P) in every addition path."""

from __future__ import annotations

import numpy as np
import pytest

from snark import native
from snark.curve import G1Point, G2Point, PointArray, Scalar, scalars_from_ints
from snark.fields import FQ_MODULUS, FR_MODULUS as R
from snark.fields import fr_to_limbs, limbs_to_ints, random_fr

GROUPS = [(1, G1Point), (2, G2Point)]


def _points(cls, rng, count: int) -> list:
    return [cls() * Scalar(rng.randrange(1, R)) for _ in range(count)]


def _reference(points: PointArray, scalars: np.ndarray):
    cls = G1Point if points.group == 1 else G2Point
    keep = ~points.inf
    if not keep.any():
        return cls.identity()
    return cls.multiexp_unchecked(points[keep].to_points(),
                                  scalars_from_ints(np.asarray(limbs_to_ints(scalars),
                                                               dtype=object)[keep]))


@pytest.mark.parametrize("group, cls", GROUPS)
@pytest.mark.parametrize("n", [1, 2, 7, 300])
def test_msm_matches_arkworks_with_edge_scalars(group, cls, n, rng):
    base = _points(cls, rng, min(n, 20))
    points = PointArray.from_points([base[i % len(base)] for i in range(n)])
    choices = [0, 1, R - 1, 2, (R - 1) // 2]
    scalars = fr_to_limbs([rng.choice(choices + [rng.randrange(R)]) for _ in range(n)])
    assert native.msm(points, scalars) == _reference(points, scalars)


@pytest.mark.parametrize("group, cls", GROUPS)
def test_doubling_cancellation_and_infinity_in_the_ones_sum(group, cls, rng):
    p, q = _points(cls, rng, 2)
    # P + P, P + (−P), infinity bases with scalar 1, all in the plain-addition path
    bases = [p, p, q, -q, cls.identity(), p] + _points(cls, rng, 40) + [p] * 40
    points = PointArray.from_points(bases)
    ones = fr_to_limbs([1] * len(bases))
    assert native.msm(points, ones) == _reference(points, ones)
    opposite = PointArray.from_points([p, -p])
    assert native.msm(opposite, fr_to_limbs([1, 1])) == cls.identity()
    assert native.msm(opposite, fr_to_limbs([5, 5])) == cls.identity()
    assert native.msm(PointArray.from_points([cls.identity()]), fr_to_limbs([7])) == \
        cls.identity()


@pytest.mark.slow
@pytest.mark.parametrize("group, cls", GROUPS)
def test_affine_buckets_with_collisions(group, cls, rng, np_rng):
    """Enough dense scalars for batched affine buckets (2^15): random ones, and one
    scalar repeated so every point of a window lands in one bucket (doubling, overflow),
    then P and −P in that bucket (cancellation)."""
    n = 1 << 15
    points = native.fixed_base_mul(group, random_fr(n, np_rng))
    scalars = random_fr(n, np_rng)
    scalars[::97] = fr_to_limbs([0])[0]
    scalars[1::89] = fr_to_limbs([1])[0]
    assert native.msm(points, scalars) == _reference(points, scalars)
    k = rng.randrange(2, R)
    same = PointArray(group, np.repeat(points.xy[:4], n // 4, axis=0),
                      np.zeros(n, dtype=bool))
    repeated = fr_to_limbs([k] * n)
    assert native.msm(same, repeated) == _reference(same, repeated)
    p = points[:1].to_points()[0]
    pairs = PointArray.from_points([p, -p] * 8)
    both = PointArray.concat([pairs, points[16:]], group)
    mixed = np.concatenate([fr_to_limbs([k] * 16), scalars[16:]])
    assert native.msm(both, mixed) == _reference(both, mixed)


def test_gather_by_index_and_the_thread_count(rng, np_rng):
    points = native.fixed_base_mul(1, random_fr(500, np_rng))
    witness = random_fr(2000, np_rng)
    index = np.sort(np_rng.choice(2000, 500, replace=False))
    want = native.msm(points, witness[index])
    assert native.msm(native.Bases.from_points(points), witness, index) == want
    before = native.threads()
    try:
        for threads in (1, 4):
            native.set_threads(threads)
            assert native.msm(points, witness[index]) == want
    finally:
        native.set_threads(before)


def test_msm_errors_name_the_argument(np_rng):
    points = native.fixed_base_mul(1, random_fr(4, np_rng))
    scalars = random_fr(4, np_rng)
    with pytest.raises(ValueError, match="scalars: 3 for 4 bases"):
        native.msm(points, scalars[:3])
    bad = scalars.copy()
    bad[2] = fr_to_limbs([R])[0]
    with pytest.raises(ValueError, match=r"scalars\[2\] is not a canonical Fr element"):
        native.msm(points, bad)
    with pytest.raises(ValueError, match=r"index\[1\] = 9 is not below the 4 scalars"):
        native.msm(points, scalars, np.array([0, 9, 1, 2]))
    off = PointArray(1, points.xy.copy(), points.inf)
    off.xy[3, 0, :] = np.frombuffer(FQ_MODULUS.to_bytes(48, "little"), dtype="<u8")
    with pytest.raises(ValueError, match=r"points\[3\] has a coordinate that is not below q"):
        native.Bases.from_points(off)


@pytest.mark.parametrize("group, cls", GROUPS)
def test_fixed_base_matches_arkworks(group, cls, rng):
    scalars = [0, 1, 2, R - 1, R - 2, 1 << 128, (1 << 254) + 12345] + \
        [rng.randrange(R) for _ in range(60)]
    got = native.fixed_base_mul(group, fr_to_limbs(scalars))
    want = PointArray.from_points([cls() * Scalar(k) for k in scalars])
    assert np.array_equal(got.xy, want.xy) and np.array_equal(got.inf, want.inf)
    assert got.inf.tolist()[:2] == [True, False]
    other = cls() * Scalar(rng.randrange(1, R))
    assert native.fixed_base_mul(group, fr_to_limbs(scalars[:5]), other).to_points() == \
        [other * Scalar(k) for k in scalars[:5]]
    with pytest.raises(ValueError, match="infinity"):
        native.fixed_base_mul(group, fr_to_limbs([1]), cls.identity())


@pytest.mark.slow
@pytest.mark.parametrize("group, cls", GROUPS)
def test_fixed_base_with_the_large_table(group, cls, rng, np_rng):
    """2^14 scalars and more use the 16-bit window tables."""
    scalars = random_fr(1 << 14, np_rng)
    scalars[:3] = fr_to_limbs([0, 1, R - 1])
    got = native.fixed_base_mul(group, scalars)
    for i in [0, 1, 2] + rng.sample(range(3, 1 << 14), 20):
        k = limbs_to_ints(scalars[i:i + 1])[0]
        assert got[i:i + 1].to_points()[0] == cls() * Scalar(k), i
