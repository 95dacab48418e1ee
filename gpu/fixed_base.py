"""Batch fixed-base scalar multiplication k_i·G on the GPU (kernel: ``kernels/fixed_base.cu``).

For development setups of large proving keys (2^20+ points), where one CPU scalar
multiplication per point is far too slow. The table d·2^(8w)·G (32 byte-windows × 256)
is built once per generator on the host with arkworks (8160 additions), uploaded in
Montgomery form, and each thread sums one entry per non-zero scalar byte. Results come
back as a standard-form ``PointArray``. Scalars at or above r are reduced mod r.
"""

from __future__ import annotations

import numpy as np

from gpu import module
from gpu.msm import FIELD_WORDS, THREADS, MsmBases
from snark.backend import DeviceMemoryError
from snark.curve import G1Point, G2Point, PointArray, Scalar

SOURCE = "fixed_base.cu"
WINDOWS = 32
ENTRIES = 256


def window_table(generator: G1Point | G2Point) -> PointArray:
    """Row w·256 + d holds d·2^(8w)·G (d = 0: infinity), affine, standard form."""
    identity = type(generator).identity()
    shift = Scalar(ENTRIES)
    points, base = [], generator
    for _ in range(WINDOWS):
        acc = identity
        points.append(identity)
        for _ in range(1, ENTRIES):
            acc = acc + base
            points.append(acc)
        base = base * shift
    return PointArray.from_points(points)


class GpuFixedBase:
    """k·G for many k on the current device, for one G1 and one G2 generator."""

    def __init__(self, g1: G1Point | None = None, g2: G2Point | None = None) -> None:
        self._generators = {1: g1 or G1Point(), 2: g2 or G2Point()}
        self._tables: dict[int, MsmBases] = {}

    def mul_g1(self, scalars: np.ndarray) -> PointArray:
        return self._mul(1, scalars)

    def mul_g2(self, scalars: np.ndarray) -> PointArray:
        return self._mul(2, scalars)

    def _table(self, group: int) -> MsmBases:
        if group not in self._tables:
            self._tables[group] = MsmBases(window_table(self._generators[group]))
        return self._tables[group]

    def _mul(self, group: int, scalars: np.ndarray) -> PointArray:
        import cupy

        scalars = np.asarray(scalars)
        if scalars.dtype != np.uint64 or scalars.ndim != 2 or scalars.shape[1] != 4:
            raise ValueError(f"scalars: expected (n, 4) uint64 limbs, "
                             f"got {scalars.shape} {scalars.dtype}")
        n = scalars.shape[0]
        if n >= 1 << 31:
            raise ValueError(f"scalars: {n} exceeds the 2^31 points one launch writes")
        words = FIELD_WORDS[group]
        shape = (n, 2, 6) if group == 1 else (n, 2, 2, 6)
        if n == 0:
            return PointArray(group, np.zeros(shape, dtype=np.uint64), np.zeros(0, dtype=bool))
        table = self._table(group)
        try:
            with cupy.cuda.Device(table.device_id):
                device_scalars = cupy.asarray(np.ascontiguousarray(scalars))
                out = cupy.empty((n, 2 * words), dtype=cupy.uint64)
                module.function(SOURCE, f"fixed_base_mul_g{group}", table.device_id)(
                    (-(-n // THREADS),), (THREADS,), (table.xy, device_scalars, np.uint32(n), out))
                xy = out.get()
        except cupy.cuda.memory.OutOfMemoryError as exc:
            raise DeviceMemoryError(
                f"fixed-base multiplication of {n} G{group} points: {exc}") from exc
        return PointArray(group, xy.reshape(shape), ~xy.any(axis=1))
