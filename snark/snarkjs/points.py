"""Decoding snarkjs point vectors (affine, Montgomery LE, no flags) and checking them.

A G1 point is x ‖ y (96 bytes), a G2 point x.c0 ‖ x.c1 ‖ y.c0 ‖ y.c1 (192 bytes), every
coordinate an Fq element in Montgomery form (R = 2^384), little-endian; all-zero bytes are
the point at infinity. Decoding is vectorised (``snark.fields.montgomery_reduce``) and
yields a ``PointArray`` in this project's standard form. ``check_points`` then makes
arkworks check every point (on the curve, in the prime-order subgroup): once, at import.
``encode_points`` is the way back, for files this project writes (``bench/ptau.py``).
"""

from __future__ import annotations

import numpy as np

from snark.curve import G1_XY_BYTES, G2_XY_BYTES, G1Point, G2Point, PointArray
from snark.fields import FQ_LIMBS, FQ_MODULUS, is_canonical, montgomery_encode, montgomery_reduce
from snark.snarkjs.binfile import SnarkjsFormatError


def point_size(group: int) -> int:
    return G1_XY_BYTES if group == 1 else G2_XY_BYTES


def decode_points(raw: np.ndarray, group: int, count: int, field: str) -> PointArray:
    """``count`` points of ``group`` from ``raw`` bytes (exactly that many)."""
    size = point_size(group)
    if raw.size != count * size:
        raise SnarkjsFormatError(f"{field}: {raw.size} bytes, expected {count} points of "
                                 f"{size} bytes = {count * size}")
    limbs = np.ascontiguousarray(raw).view("<u8").reshape(count, size // 8 // FQ_LIMBS, FQ_LIMBS)
    bad = ~is_canonical(limbs, FQ_MODULUS)
    if bad.any():
        index, coordinate = np.argwhere(bad)[0]
        raise SnarkjsFormatError(f"{field}[{index}]: coordinate {coordinate} is not below q")
    standard = montgomery_reduce(limbs, FQ_MODULUS)
    shape = (count, 2, FQ_LIMBS) if group == 1 else (count, 2, 2, FQ_LIMBS)
    inf = np.count_nonzero(limbs.reshape(count, -1), axis=1) == 0
    return PointArray(group, standard.reshape(shape), inf)


def encode_points(points: PointArray) -> bytes:
    """snarkjs's bytes of ``points``: Montgomery coordinates, infinity as all zeros."""
    mont = montgomery_encode(points.xy, FQ_MODULUS)
    mont[points.inf] = 0
    return np.ascontiguousarray(mont, dtype="<u8").tobytes()


def check_points(points: PointArray, field: str) -> None:
    """Every point on the curve and in the subgroup (arkworks' checked decoding)."""
    cls = G1Point if points.group == 1 else G2Point
    raw = np.ascontiguousarray(points.xy, dtype="<u8").tobytes()
    width = points.point_bytes
    for i in range(len(points)):
        try:
            cls.from_xy_bytes_le(raw[i * width:(i + 1) * width])
        except ValueError as exc:
            raise SnarkjsFormatError(f"{field}[{i}]: {exc}") from None


def single_point(raw: np.ndarray, group: int, field: str) -> G1Point | G2Point:
    """One checked point (a key's alpha, beta, …) as an arkworks point."""
    points = decode_points(raw, group, 1, field)
    check_points(points, field)
    cls = G1Point if group == 1 else G2Point
    return cls.from_xy_bytes_le(np.ascontiguousarray(points.xy, dtype="<u8").tobytes())
