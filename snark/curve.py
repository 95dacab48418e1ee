"""G1/G2 points: arkworks objects for single points, limb arrays for vectors of points.

A vector of affine points is ``xy`` — G1 ``(n, 2, 6)`` = (x, y), G2 ``(n, 2, 2, 6)`` =
((x.c0, x.c1), (y.c0, y.c1)) — standard-form Fq limbs (see ``snark.fields``), plus ``inf``,
an explicit ``(n,)`` bool mask of points at infinity whose ``xy`` rows are zero.
Curve arithmetic and pairings are py-arkworks-bls12381's.

Compressed points from outside (proofs, verifying keys) are decoded strictly, as bellman and
zcash do: the compression flag set, infinity only as ``c0 00…00`` and refused where a
Groth16 proof or key cannot have it, x below q; then on the curve and in the subgroup. The
error says which of these failed, instead of arkworks' one message for all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, overload

import numpy as np
from py_arkworks_bls12381 import GT, G1Point, G2Point, Scalar

from snark.fields import FQ_BYTES, FQ_MODULUS, FR_BYTES

G1_XY_BYTES = 2 * FQ_BYTES
G2_XY_BYTES = 4 * FQ_BYTES


@dataclass(frozen=True)
class PointArray:
    """Affine points in limbs with an infinity mask; ``group`` is 1 (G1) or 2 (G2)."""

    group: int
    xy: np.ndarray
    inf: np.ndarray

    def __len__(self) -> int:
        return self.xy.shape[0]

    def __getitem__(self, index: slice) -> "PointArray":
        return PointArray(self.group, self.xy[index], self.inf[index])

    @property
    def point_bytes(self) -> int:
        return G1_XY_BYTES if self.group == 1 else G2_XY_BYTES

    @classmethod
    def from_points(cls, points: Sequence[G1Point | G2Point]) -> "PointArray":
        group = 1 if not points or isinstance(points[0], G1Point) else 2
        width = G1_XY_BYTES if group == 1 else G2_XY_BYTES
        raw = b"".join(p.to_xy_bytes_le() for p in points)
        shape = (-1, 2, 6) if group == 1 else (-1, 2, 2, 6)
        xy = np.frombuffer(raw, dtype="<u8").reshape(shape).astype(np.uint64) \
            if points else np.zeros((0,) + shape[1:], dtype=np.uint64)
        return cls(group, xy, xy.reshape(len(points), width // 8).max(axis=1, initial=0) == 0)

    @classmethod
    def concat(cls, parts: list["PointArray"], group: int) -> "PointArray":
        """The parts one after another (``group`` names it when there are none)."""
        if not parts:
            shape = (0, 2, 6) if group == 1 else (0, 2, 2, 6)
            return cls(group, np.zeros(shape, dtype=np.uint64), np.zeros(0, dtype=bool))
        return cls(group, np.concatenate([p.xy for p in parts]),
                   np.concatenate([p.inf for p in parts]))

    def to_points(self) -> list[G1Point] | list[G2Point]:
        """arkworks points without subgroup checks: the arrays come from trusted keys."""
        return self.g1_points() if self.group == 1 else self.g2_points()

    def g1_points(self) -> list[G1Point]:
        """``to_points`` where the caller knows the group is G1."""
        return [G1Point.from_xy_bytes_unchecked_le(row) for row in self._rows(1)]

    def g2_points(self) -> list[G2Point]:
        return [G2Point.from_xy_bytes_unchecked_le(row) for row in self._rows(2)]

    def _rows(self, group: int) -> list[bytes]:
        if self.group != group:
            raise ValueError(f"these are G{self.group} points, not G{group}")
        raw = np.ascontiguousarray(self.xy, dtype="<u8").tobytes()
        width = self.point_bytes
        return [raw[i * width:(i + 1) * width] for i in range(len(self))]


@overload
def point_from_xy(xy: np.ndarray, group: Literal[1]) -> G1Point: ...
@overload
def point_from_xy(xy: np.ndarray, group: Literal[2]) -> G2Point: ...
@overload
def point_from_xy(xy: np.ndarray, group: int) -> G1Point | G2Point: ...
def point_from_xy(xy: np.ndarray, group: int) -> G1Point | G2Point:
    """One affine point in limbs (zeros = infinity) as an arkworks point."""
    raw = np.ascontiguousarray(xy, dtype="<u8").tobytes()
    if group == 1:
        return G1Point.from_xy_bytes_unchecked_le(raw)
    return G2Point.from_xy_bytes_unchecked_le(raw)


_COMPRESSED, _INFINITY, _LARGER_Y = 0x80, 0x40, 0x20
_FLAGS = _COMPRESSED | _INFINITY | _LARGER_Y


class PointFormatError(ValueError):
    """Bytes that are not a canonical compressed point of the group; the message says why."""


@overload
def decode_compressed(data: bytes, group: Literal[1]) -> G1Point: ...
@overload
def decode_compressed(data: bytes, group: Literal[2]) -> G2Point: ...
@overload
def decode_compressed(data: bytes, group: int) -> G1Point | G2Point: ...
def decode_compressed(data: bytes, group: int) -> G1Point | G2Point:
    """A finite point of G1 (48 bytes) or G2 (96 bytes) from its zcash encoding, strictly."""
    size = FQ_BYTES * group
    if len(data) != size:
        raise PointFormatError(f"expected {size} bytes, got {len(data)}")
    flags = data[0] & _FLAGS
    if not flags & _COMPRESSED:
        raise PointFormatError("not canonical: the compression flag (0x80) is not set")
    if flags & _INFINITY:
        if flags & _LARGER_Y or data[0] & ~_FLAGS or any(data[1:]):
            raise PointFormatError("not canonical: an infinity flag with other bits set "
                                   "(infinity is c0 00…00)")
        raise PointFormatError("the point at infinity is not allowed here")
    x = bytes([data[0] & ~_FLAGS]) + bytes(data[1:])
    coordinates = (int.from_bytes(x[i:i + FQ_BYTES], "big") for i in range(0, size, FQ_BYTES))
    if any(c >= FQ_MODULUS for c in coordinates):
        raise PointFormatError("not canonical: x is not below the field modulus q")
    cls_ = G1Point if group == 1 else G2Point
    try:
        point = cls_.from_compressed_bytes_unchecked(bytes(data))
    except ValueError:
        raise PointFormatError("not on the curve (x has no y)") from None
    if not point.is_in_subgroup():
        raise PointFormatError("not in the prime-order subgroup")
    return point


def scalars_from_ints(values) -> list[Scalar]:
    """Standard-form ints (< r) as arkworks scalars (via bytes: ~40x faster than Scalar(int))."""
    return [Scalar.from_le_bytes(int(v).to_bytes(FR_BYTES, "little")) for v in values]


def g1_generator() -> G1Point:
    return G1Point()


def g2_generator() -> G2Point:
    return G2Point()


__all__ = [
    "GT", "G1Point", "G2Point", "Scalar", "PointArray", "PointFormatError", "decode_compressed",
    "point_from_xy", "scalars_from_ints", "g1_generator", "g2_generator",
]
