"""Batch fixed-base scalar multiplication k_i·G on the GPU (kernel: ``kernels/fixed_base.cu``).

For development setups of large proving keys (2^20+ points), where one CPU scalar
multiplication per point is far too slow. Each generator gets a window table of width 16
resident on the device (16 windows × 2^15 affine rows d·2^(16w)·G, 50 MB for G1, 100 MB
for G2), so a point costs at most 15 mixed additions and its share of one inversion
(Montgomery's trick over the points a thread makes). That table is itself made on the
device, as the products d·2^(16w) over a width-8 table (32 × 128 rows, built on the host
with arkworks: 4,096 additions). Scalars at or above r are reduced mod r.

``mul_g1``/``mul_g2`` take host limbs and return a standard-form ``PointArray``, in
device passes of ``PASS`` points whose copies back overlap the next pass; ``products``
leaves the points on the device for a caller that keeps them there.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

from gpu import module
from gpu.msm import FIELD_WORDS, THREADS, MsmBases
from snark.backend import DeviceMemoryError
from snark.curve import G1Point, G2Point, PointArray, Scalar

Point = TypeVar("Point", G1Point, G2Point)

SOURCE = "fixed_base.cu"
#: Window width of the host-built table, and of the device table it makes.
HOST_WIDTH = 8
WIDTH = 16
#: Threads a pass aims to run per multiprocessor: fewer points a thread below that, more
#: (up to MAX_PER_THREAD) above, so one inversion serves up to 64 points.
THREADS_PER_SM = 1024
MAX_PER_THREAD = 64
#: Points per device pass (G1 scratch and output ~1 GB, G2 ~2 GB), and the threads that
#: move a pass's points from pinned memory into the result.
PASS = 1 << 22
COPY_THREADS = 8


def window_table(generator: Point, width: int = HOST_WIDTH) -> PointArray:
    """Row w·2^(width-1) + d - 1 holds d·2^(width·w)·G for d in [1, 2^(width-1)], affine,
    standard form (the layout ``fixed_base_sum`` reads)."""
    half = 1 << (width - 1)
    shift = Scalar(1 << width)
    points: list[Point] = []
    base = generator
    for _ in range(256 // width):
        acc = base
        points.append(acc)
        for _ in range(1, half):
            acc = acc + base
            points.append(acc)
        base = base * shift
    return PointArray.from_points(points)


def table_scalars(width: int = WIDTH) -> np.ndarray:
    """The discrete logs d·2^(width·w) of a width-``width`` table's rows, as Fr limbs
    (those of the top window may exceed r: the kernel reduces them)."""
    half = 1 << (width - 1)
    windows = 256 // width
    limbs = np.zeros((windows * half, 4), dtype=np.uint64)
    d = np.arange(1, half + 1, dtype=np.uint64)
    for w in range(windows):
        bit = width * w
        limbs[w * half:(w + 1) * half, bit // 64] = d << np.uint64(bit % 64)
    return limbs


def _check_limbs(scalars) -> None:
    """Host or device limbs: (n, 4) uint64, else a one-line error naming them."""
    if scalars.dtype != np.uint64 or scalars.ndim != 2 or scalars.shape[1] != 4:
        raise ValueError(f"scalars: expected (n, 4) uint64 limbs, "
                         f"got {scalars.shape} {scalars.dtype}")


def per_thread(n: int, sms: int) -> int:
    """Points a thread makes: enough threads to fill ``sms`` multiprocessors, then more
    points a thread (one inversion each thread) up to MAX_PER_THREAD."""
    return max(1, min(MAX_PER_THREAD, -(-n // (sms * THREADS_PER_SM))))


class GpuFixedBase:
    """k·G for many k on the current device, for one G1 and one G2 generator."""

    #: Points per call from ``snark.groth16.setup`` (a progress report each): a 32 GiB
    #: key's largest basis in one call, a few seconds.
    chunk = 1 << 27

    def __init__(self, g1: G1Point | None = None, g2: G2Point | None = None) -> None:
        self._generators: dict[int, Any] = {1: g1 or G1Point(), 2: g2 or G2Point()}
        self._tables: dict[int, object] = {}

    def mul_g1(self, scalars: np.ndarray) -> PointArray:
        return self._mul(1, scalars)

    def mul_g2(self, scalars: np.ndarray) -> PointArray:
        return self._mul(2, scalars)

    def table(self, group: int):
        """The generator's width-16 table on the device (made on first use)."""
        if group not in self._tables:
            import cupy

            host = MsmBases(window_table(self._generators[group]))
            with cupy.cuda.Device(host.device_id):
                self._tables[group] = self._launch(
                    f"fixed_base_table_g{group}", host.xy, HOST_WIDTH,
                    cupy.asarray(table_scalars()), group)[0]
                cupy.cuda.get_current_stream().synchronize()  # ready for any stream
        return self._tables[group]

    def products(self, group: int, scalars):
        """k·G for the device limbs ``scalars`` ``(n, 4)`` uint64: device arrays ``(n, 2·words)``
        standard-form affine rows and ``(n,)`` uint8 infinity flags."""
        _check_limbs(scalars)
        return self._launch(f"fixed_base_mul_g{group}", self.table(group), WIDTH, scalars,
                            group)

    def _launch(self, kernel: str, table, width: int, scalars, group: int):
        import cupy

        n = len(scalars)
        words = FIELD_WORDS[group]
        device_id = cupy.cuda.Device().id
        sms = cupy.cuda.Device(device_id).attributes["MultiProcessorCount"]
        k = per_thread(n, sms)
        blocks = max(1, -(-n // (k * THREADS)))
        scratch = cupy.empty((n, 3 * words), dtype=cupy.uint64)  # ZZ, ZZZ, running product
        out = cupy.empty((n, 2 * words), dtype=cupy.uint64)
        inf = cupy.empty(n, dtype=cupy.uint8)
        if n:
            module.function(SOURCE, kernel, device_id)(
                (blocks,), (THREADS,),
                (table, np.uint32(width), scalars, np.uint32(n), np.uint32(k), scratch, out, inf))
        return out, inf

    def _mul(self, group: int, scalars: np.ndarray) -> PointArray:
        """Passes of PASS points on two streams: a pass's points come back into pinned
        memory while the next one runs, then move into the result on COPY_THREADS threads
        (numpy copies without the GIL: one thread's copy was slower than the passes)."""
        import cupy
        import cupyx

        scalars = np.asarray(scalars)
        _check_limbs(scalars)
        n = scalars.shape[0]
        if n >= 1 << 31:
            raise ValueError(f"scalars: {n} exceeds the 2^31 points one call writes")
        words = FIELD_WORDS[group]
        xy = np.empty((n, 2 * words), dtype=np.uint64)
        inf = np.empty(n, dtype=np.uint8)
        rows = min(n, PASS)
        staging = [(cupyx.empty_pinned((rows, 2 * words), dtype=np.uint64),
                    cupyx.empty_pinned(rows, dtype=np.uint8)) for _ in range(2)]
        streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(2)]

        def land(slot: int, start: int, end: int) -> None:
            streams[slot].synchronize()
            cuts = np.linspace(start, end, COPY_THREADS + 1, dtype=np.int64)

            def move(a: int, b: int) -> None:
                xy[a:b] = staging[slot][0][a - start:b - start]
                inf[a:b] = staging[slot][1][a - start:b - start]

            list(copies.map(move, cuts[:-1], cuts[1:]))

        try:
            with ThreadPoolExecutor(COPY_THREADS) as copies:
                pending = None
                for j, start in enumerate(range(0, n, PASS)):
                    end, slot = min(n, start + PASS), j % 2
                    with streams[slot]:
                        out, flags = self.products(
                            group, cupy.asarray(np.ascontiguousarray(scalars[start:end])))
                        out.get(out=staging[slot][0][:end - start], blocking=False)
                        flags.get(out=staging[slot][1][:end - start], blocking=False)
                    if pending:
                        land(*pending)
                    pending = (slot, start, end)
                if pending:
                    land(*pending)
        except cupy.cuda.memory.OutOfMemoryError as exc:
            raise DeviceMemoryError(
                f"fixed-base multiplication of {n} G{group} points: {exc}") from exc
        shape = (n, 2, 6) if group == 1 else (n, 2, 2, 6)
        return PointArray(group, xy.reshape(shape), inf.view(bool))
