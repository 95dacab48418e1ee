"""Multi-scalar multiplication and fixed-base batch multiplication over G1 and G2 in
native code.

``Bases`` holds a ``PointArray`` converted once to the library's form (Montgomery
coordinates); ``msm`` sums ``scalars[i]·bases[i]`` — zeros skipped, ones added plainly,
the rest by Pippenger's method — and returns an arkworks point. ``fixed_base_mul`` gives
``k_i·G`` for the generator (or another base) as a ``PointArray``, for key setup.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.curve import G1Point, G2Point, PointArray, point_from_xy
from snark.native.field import fr_limbs
from snark.native.library import call, ptr

_WORDS = {1: 12, 2: 24}  # uint64 words of one affine point


@dataclass(frozen=True)
class Bases:
    """A ``PointArray`` in Montgomery coordinates (``mont``, (n, words)) with its infinity
    mask as bytes; made once per key by the CPU backend."""

    group: int
    mont: np.ndarray
    inf: np.ndarray

    def __len__(self) -> int:
        return self.mont.shape[0]

    @classmethod
    def from_points(cls, points: PointArray) -> "Bases":
        n, words = len(points), _WORDS[points.group]
        xy = np.ascontiguousarray(points.xy, dtype=np.uint64).reshape(n, words)
        inf = np.ascontiguousarray(points.inf, dtype=np.uint8)
        if inf.shape != (n,):
            raise ValueError(f"points: infinity mask of shape {inf.shape} for {n} points")
        mont = np.empty((n, words), dtype=np.uint64)
        call("pq_points_to_mont", points.group, ptr(xy), ptr(inf), n, ptr(mont))
        return cls(points.group, mont, inf)


def msm(bases: Bases | PointArray, scalars: np.ndarray,
        index: np.ndarray | None = None) -> G1Point | G2Point:
    """Σ_i scalars[i]·bases[i]; with ``index``, Σ_i scalars[index[i]]·bases[i] (a gather:
    a density key's bases against the whole witness)."""
    if isinstance(bases, PointArray):
        bases = Bases.from_points(bases)
    scalars = fr_limbs(scalars, "scalars")
    if index is None:
        if scalars.shape[0] != len(bases):
            raise ValueError(f"scalars: {scalars.shape[0]} for {len(bases)} bases")
    else:
        index = np.ascontiguousarray(index, dtype=np.int64)
        if index.shape != (len(bases),):
            raise ValueError(f"index: shape {index.shape} for {len(bases)} bases")
    out = np.zeros(_WORDS[bases.group], dtype=np.uint64)
    out_inf = np.zeros(1, dtype=np.uint8)
    call("pq_msm", bases.group, ptr(bases.mont), ptr(bases.inf), ptr(scalars),
         scalars.shape[0], ptr(index), len(bases), ptr(out), ptr(out_inf))
    return point_from_xy(out, bases.group)


def _generator_xy(group: int) -> np.ndarray:
    point = G1Point() if group == 1 else G2Point()
    return np.frombuffer(point.to_xy_bytes_le(), dtype="<u8").astype(np.uint64)


def fixed_base_mul(group: int, scalars: np.ndarray,
                   base: G1Point | G2Point | None = None) -> PointArray:
    """``scalars[i]·base`` for every row (``base``: the group's generator unless given),
    as affine points; a zero scalar gives the point at infinity."""
    if group not in _WORDS:
        raise ValueError(f"group: {group} is not 1 or 2")
    scalars = fr_limbs(scalars, "scalars")
    n = scalars.shape[0]
    if n == 0:
        return PointArray.concat([], group)
    base_xy = _generator_xy(group) if base is None else \
        np.frombuffer(base.to_xy_bytes_le(), dtype="<u8").astype(np.uint64)
    if not base_xy.any():
        raise ValueError("base: the point at infinity has no multiples to tabulate")
    xy = np.empty((n, _WORDS[group]), dtype=np.uint64)
    inf = np.empty(n, dtype=np.uint8)
    call("pq_fixed_base", group, ptr(base_xy), ptr(scalars), n, ptr(xy), ptr(inf))
    shape = (n, 2, 6) if group == 1 else (n, 2, 2, 6)
    return PointArray(group, xy.reshape(shape), inf.astype(bool))
