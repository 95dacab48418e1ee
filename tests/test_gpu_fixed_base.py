"""The GPU fixed-base products (gpu/fixed_base.py) byte for byte against the CPU's
(``snark.native.fixed_base_mul``, arkworks' arithmetic), on fresh random scalars and edges."""

from __future__ import annotations

import numpy as np
import pytest

import gpu
from snark import native
from snark.curve import G1Point, G2Point, PointArray, Scalar
from snark.fields import FR_MODULUS as R
from snark.fields import fr_to_limbs, ints_to_limbs, limbs_to_ints, random_fr

GPU_OK, GPU_WHY = gpu.available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)]

GROUPS = [(1, G1Point), (2, G2Point)]
EDGES = [0, 1, 2, R - 1, R, R + 1, R - 2, 1 << 255, (1 << 256) - 1]


def scalars_with_edges(np_rng, n: int) -> np.ndarray:
    """n random scalars, the edges scattered among them (infinity between finite points)."""
    limbs = random_fr(n, np_rng)
    at = np_rng.choice(n, size=len(EDGES), replace=False)
    limbs[at] = ints_to_limbs(EDGES, 4)
    return limbs


def cpu_products(group: int, scalars: np.ndarray, g) -> PointArray:
    """The CPU's k·G, k reduced mod r first (it takes canonical scalars only)."""
    return native.fixed_base_mul(group, fr_to_limbs([k % R for k in limbs_to_ints(scalars)]), g)


def same_points(got: PointArray, expected: PointArray) -> None:
    assert got.group == expected.group and len(got) == len(expected)
    assert np.array_equal(got.inf, expected.inf)
    assert np.ascontiguousarray(got.xy).tobytes() == np.ascontiguousarray(expected.xy).tobytes()


@pytest.mark.parametrize("group, cls", GROUPS)
@pytest.mark.parametrize("n", [1, 127, 20_000])
def test_products_match_the_cpu_byte_for_byte(group, cls, n, rng, np_rng):
    from gpu.fixed_base import GpuFixedBase

    g = cls() * Scalar(rng.randrange(1, R))
    mul = GpuFixedBase(**{f"g{group}": g})
    scalars = scalars_with_edges(np_rng, max(n, len(EDGES)))[:n]
    got = (mul.mul_g1 if group == 1 else mul.mul_g2)(scalars)
    same_points(got, cpu_products(group, scalars, g))


@pytest.mark.parametrize("group, cls", GROUPS)
def test_many_points_a_thread_and_several_passes(group, cls, rng, np_rng, monkeypatch):
    """Few threads (up to 64 points a thread share one inversion) and uneven device passes
    (copies back on two streams): the same points as the CPU."""
    import gpu.fixed_base as fixed_base

    monkeypatch.setattr(fixed_base, "THREADS_PER_SM", 2)
    g = cls() * Scalar(rng.randrange(1, R))
    monkeypatch.setattr(fixed_base, "PASS", 7_001)
    mul = fixed_base.GpuFixedBase(**{f"g{group}": g})
    scalars = scalars_with_edges(np_rng, 30_000)
    got = (mul.mul_g1 if group == 1 else mul.mul_g2)(scalars)
    same_points(got, cpu_products(group, scalars, g))


@pytest.mark.parametrize("group, cls", GROUPS)
def test_device_table_rows_are_the_generators_multiples(group, cls, rng, np_rng):
    """Sampled rows of the width-16 table (made on the device from the width-8 one) are
    d·2^(16w)·G in Montgomery form, the top window's included."""
    from gpu.fixed_base import WIDTH, GpuFixedBase
    from gpu.msm import MsmBases

    g = cls() * Scalar(rng.randrange(1, R))
    table = GpuFixedBase(**{f"g{group}": g}).table(group).get()
    half = 1 << (WIDTH - 1)
    rows = np.concatenate([np_rng.integers(0, len(table), 40),
                           [0, half - 1, len(table) - half, len(table) - 1]])
    expected = [g * Scalar((int(r % half) + 1) * (1 << (WIDTH * int(r // half))) % R)
                for r in rows]
    montgomery = MsmBases(PointArray.from_points(expected)).xy.get()  # the MSM's own upload
    assert np.array_equal(table[rows], montgomery)


def test_products_stay_on_the_device(rng, np_rng):
    import cupy

    from gpu.fixed_base import GpuFixedBase

    mul = GpuFixedBase()
    scalars = scalars_with_edges(np_rng, 5_000)
    xy, inf = mul.products(1, cupy.asarray(scalars))
    assert isinstance(xy, cupy.ndarray) and isinstance(inf, cupy.ndarray)
    host = mul.mul_g1(scalars)
    assert np.array_equal(xy.get(), host.xy.reshape(len(host), 12))
    assert np.array_equal(inf.get().astype(bool), host.inf)


def test_bad_scalars_are_refused_with_the_field_named():
    import cupy

    from gpu.fixed_base import GpuFixedBase

    mul = GpuFixedBase()
    with pytest.raises(ValueError, match=r"scalars: expected \(n, 4\) uint64"):
        mul.products(1, cupy.zeros((3, 4), dtype=cupy.int64))
    with pytest.raises(ValueError, match=r"scalars: expected \(n, 4\) uint64"):
        mul.mul_g1(np.zeros((3, 4), dtype=np.int64))
    with pytest.raises(ValueError, match=r"scalars: expected \(n, 4\) uint64"):
        mul.mul_g2(fr_to_limbs([1, 2])[:, :3])
    assert len(mul.mul_g1(np.zeros((0, 4), dtype=np.uint64))) == 0
