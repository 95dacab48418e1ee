"""Pippenger multi-scalar multiplication on the GPU, G1 and G2 (kernels: ``kernels/msm.cu``).

``MsmBases`` uploads a key's affine bases once (standard form in, Montgomery on the device;
infinity rows stay zero, the kernels' infinity marker). ``msm`` cuts standard-form scalars
into signed c-bit digits, sorts the digits into buckets by a counting sort (histogram with
atomics, prefix sum, scatter), sums the buckets in chunks of equal work whatever the digit
distribution, reduces each window's buckets on the device and copies back one sum per
window, which the host weights by 2^(c·w) (``combine_windows`` says why).

Scalars at or above r are reduced mod r on the device (any 256-bit value is < 3r), which
matches Σ s_i·P_i for points of order r. Every launch is on the given stream; the only
synchronisation is the copy of the window sums back to the host.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from gpu import module
from snark.backend import DeviceMemoryError
from snark.curve import G1Point, G2Point, PointArray, point_from_xy, scalars_from_ints
from snark.fields import FQ_MODULUS, FR_MODULUS, fq_to_limbs, limbs_to_ints

SOURCE = "msm.cu"
SCALAR_BITS = 256  # digits cover 256 bits so a 255-bit scalar's top window never carries out
#: uint64 words of one Fq / Fq2 element, by group.
FIELD_WORDS = {1: 6, 2: 12}
THREADS = 128
#: Threads of msm_reduce_windows (MSM_REDUCE_THREADS in msm.cu).
REDUCE_THREADS = 64
#: Sorted digits one thread sums per bucket level (each level shrinks the list CHUNK/2-fold).
CHUNK = 32
#: Key of the unused digit slots (MSM_PAD_KEY in msm.cu).
PAD_KEY = 0xFFFFFFFF
#: Runs of buckets reduced in parallel across all windows (enough threads to fill the GPU).
TARGET_RUNS = 1 << 14


@dataclass(frozen=True)
class Plan:
    """Window layout for one MSM size: ``windows`` digits of ``c`` bits, 2^(c-1) buckets
    each; the bucket reduction splits each window into runs of 2^run_bits buckets."""

    c: int
    windows: int
    run_bits: int

    @property
    def bucket_bits(self) -> int:
        return self.c - 1

    @property
    def buckets(self) -> int:
        return 1 << self.bucket_bits

    @property
    def runs_per_window(self) -> int:
        return 1 << (self.bucket_bits - self.run_bits)


def plan(n: int) -> Plan:
    """Window size minimising the point additions: ``n`` mixed additions per window, plus
    about three general additions (two running sums, counted at the cost of ~1.4 mixed ones)
    per bucket in the reduction."""

    def cost(c: int) -> float:
        windows = -(-SCALAR_BITS // c)
        return windows * (n + 2.8 * (1 << (c - 1)))

    c = min(range(2, 21), key=cost)
    windows = -(-SCALAR_BITS // c)
    bucket_bits = c - 1
    runs = max(1, TARGET_RUNS // windows)
    run_bits = max(0, bucket_bits - min(bucket_bits, runs.bit_length() - 1))
    return Plan(c, windows, run_bits)


def _cupy():
    import cupy
    return cupy


def _blocks(count: int) -> tuple[int]:
    return (-(-count // THREADS),)


class MsmBases:
    """Affine bases resident on the current device, Montgomery form, ``(n, 2·words)``."""

    def __init__(self, points: PointArray, stream=None) -> None:
        cupy = _cupy()
        self.group = points.group
        self.words = FIELD_WORDS[points.group]
        self.device_id = cupy.cuda.Device().id
        host = np.array(points.xy, dtype=np.uint64).reshape(len(points), 2 * self.words)
        host[points.inf] = 0  # the kernels' infinity marker, whatever the masked rows held
        stream = stream or cupy.cuda.get_current_stream()
        try:
            with stream:
                self.xy = cupy.asarray(host)
                if len(points):
                    _kernel(f"msm_bases_to_mont_g{self.group}", self.device_id)(
                        _blocks(len(points)), (THREADS,), (self.xy, np.uint32(len(points))))
        except cupy.cuda.memory.OutOfMemoryError as exc:
            raise DeviceMemoryError(f"msm bases ({len(points)} G{self.group} points): {exc}") from exc

    def __len__(self) -> int:
        return self.xy.shape[0]


def _kernel(name: str, device_id: int):
    return module.function(SOURCE, name, device_id)


def msm(bases: MsmBases, scalars, stream=None) -> G1Point | G2Point:
    """Σ scalars[i]·bases[i] for i < len(scalars); ``scalars``: (n, 4) uint64 standard-form
    Fr limbs on the device (reduced mod r if ≥ r). ``DeviceMemoryError`` when memory runs out."""
    cupy = _cupy()
    n = _check_scalars(bases, scalars, cupy)
    if n == 0:
        return point_from_xy(np.zeros(2 * bases.words, dtype=np.uint64), bases.group)
    stream = stream or cupy.cuda.get_current_stream()
    try:
        with cupy.cuda.Device(bases.device_id), stream:
            p = plan(n)
            sums = _run(bases, cupy.ascontiguousarray(scalars), n, p, cupy)
            window_sums = sums.get(stream=stream)  # waits for this stream only
    except cupy.cuda.memory.OutOfMemoryError as exc:
        raise DeviceMemoryError(f"msm of {n} G{bases.group} points: {exc}") from exc
    return combine_windows(window_sums, bases.group, p.c)


def _check_scalars(bases: MsmBases, scalars, cupy) -> int:
    if not isinstance(scalars, cupy.ndarray):
        raise TypeError(f"scalars: expected a cupy.ndarray, got {type(scalars).__name__}")
    if scalars.dtype != np.uint64 or scalars.ndim != 2 or scalars.shape[1] != 4:
        raise ValueError(f"scalars: expected (n, 4) uint64 limbs, got {scalars.shape} {scalars.dtype}")
    n = scalars.shape[0]
    if n > len(bases):
        raise ValueError(f"scalars: {n} scalars for {len(bases)} bases")
    if n >= 1 << 31 or n * plan(n).windows >= 1 << 32:
        raise ValueError(f"scalars: {n} exceeds what one MSM indexes (31-bit points, 32-bit digits)")
    return n


def _run(bases: MsmBases, scalars, n: int, p: Plan, cupy, mark=lambda step: None):
    """Queue the whole MSM on the current stream; return the window sums (XYZZ, Montgomery)
    on the device. ``mark(step)`` is called after each step is queued (see ``phase_times``)."""
    group, words, dev = bases.group, bases.words, bases.device_id
    point_words = 4 * words  # XYZZ
    keys = p.windows * p.buckets
    u32 = np.uint32

    counts = cupy.zeros(keys + 1, dtype=cupy.uint32)
    _kernel("msm_count", dev)(_blocks(n), (THREADS,), (scalars, u32(n), u32(p.c), u32(p.windows), counts))
    mark("count")
    offsets = cupy.cumsum(counts, dtype=cupy.uint32)  # bucket k starts at offsets[k]
    del counts
    mark("prefix_sum")
    slots = n * p.windows  # room for every digit; slots past the non-zero ones keep PAD_KEY
    entries = cupy.empty(slots, dtype=cupy.uint32)
    slot_keys = cupy.full(slots, PAD_KEY, dtype=cupy.uint32)
    _kernel("msm_scatter", dev)(_blocks(n), (THREADS,),
                                (scalars, u32(n), u32(p.c), u32(p.windows), offsets, entries, slot_keys))
    del offsets
    mark("scatter")

    buckets = cupy.zeros((keys, point_words), dtype=cupy.uint64)  # zeros: infinity
    length, source = slots, (bases.xy, entries)
    level = f"msm_bucket_level0_g{group}"
    while True:
        chunks = -(-length // CHUNK)
        next_points = cupy.empty((2 * chunks, point_words), dtype=cupy.uint64)
        next_keys = cupy.empty(2 * chunks, dtype=cupy.uint32)
        _kernel(level, dev)(_blocks(chunks), (THREADS,),
                            (*source, slot_keys, u32(length), u32(CHUNK), buckets, next_points, next_keys))
        if chunks == 1:
            break
        length, source, slot_keys = 2 * chunks, (next_points,), next_keys
        level = f"msm_bucket_level_g{group}"
    del entries, source, slot_keys, next_points, next_keys
    mark("buckets")

    runs = p.windows * p.runs_per_window
    run_sums = cupy.empty((runs, point_words), dtype=cupy.uint64)
    _kernel(f"msm_reduce_segments_g{group}", dev)(
        _blocks(runs), (THREADS,), (buckets, u32(p.bucket_bits), u32(p.run_bits), u32(runs), run_sums))
    del buckets
    mark("reduce_segments")

    window_sums = cupy.empty((p.windows, point_words), dtype=cupy.uint64)
    _kernel(f"msm_reduce_windows_g{group}", dev)(
        (p.windows,), (REDUCE_THREADS,), (run_sums, u32(p.runs_per_window), window_sums))
    mark("reduce_windows")
    return window_sums


def combine_windows(window_sums: np.ndarray, group: int, c: int) -> G1Point | G2Point:
    """Σ_w 2^(c·w)·window_w from the device's XYZZ window sums (Montgomery form), on the host.

    The weighting is ~255 dependent doublings: one GPU thread runs them at the latency of its
    carry chains (4 ms for G1, 13 ms for G2 measured on the H200), arkworks' multiexp over
    the handful of window sums in a fraction of a millisecond. Affine x = X/ZZ, y = Y/ZZZ
    (the Montgomery factor R cancels in each ratio), with one batched inversion."""
    field = _Fq2 if group == 2 else _Fq
    width = FIELD_WORDS[group]
    per = width // 6  # Fq values per coordinate
    flat = limbs_to_ints(window_sums.reshape(-1, 6))
    values = [field(*flat[i:i + per]) for i in range(0, len(flat), per)]
    rows = [values[i:i + 4] for i in range(0, len(values), 4)]
    finite = [row for row in rows if not row[2].is_zero()]
    inverses = iter(_batch_inverse([v for _, _, zz, zzz in finite for v in (zz, zzz)]))
    coords = []
    for X, Y, ZZ, ZZZ in rows:
        if ZZ.is_zero():
            coords.extend([0] * (2 * per))
        else:
            coords.extend((X * next(inverses)).ints() + (Y * next(inverses)).ints())
    xy = fq_to_limbs(coords).reshape(len(rows), 2 * width)
    points = [point_from_xy(row, group) for row in xy]
    return (G1Point if group == 1 else G2Point).multiexp_unchecked(points, _window_weights(c, len(rows)))


@lru_cache(maxsize=None)
def _window_weights(c: int, windows: int) -> list:
    return scalars_from_ints(pow(2, c * w, FR_MODULUS) for w in range(windows))


def _batch_inverse(values: list) -> list:
    """Inverses of non-zero field elements with one field inversion (Montgomery's trick)."""
    prefix, acc = [], None
    for v in values:
        acc = v if acc is None else acc * v
        prefix.append(acc)
    if acc is None:
        return []
    inv, out = acc.inverse(), [None] * len(values)
    for i in range(len(values) - 1, 0, -1):
        out[i] = inv * prefix[i - 1]
        inv = inv * values[i]
    out[0] = inv
    return out


class _Fq:
    """Just enough Fq on ints for ``combine_windows``."""

    def __init__(self, v: int) -> None:
        self.v = v % FQ_MODULUS

    def ints(self) -> list[int]:
        return [self.v]

    def is_zero(self) -> bool:
        return self.v == 0

    def __mul__(self, o: "_Fq") -> "_Fq":
        return _Fq(self.v * o.v)

    def inverse(self) -> "_Fq":
        return _Fq(pow(self.v, -1, FQ_MODULUS))


class _Fq2:
    """Fq2 = Fq[u]/(u^2 + 1) on ints, for ``combine_windows``."""

    def __init__(self, c0: int, c1: int) -> None:
        self.c0, self.c1 = c0 % FQ_MODULUS, c1 % FQ_MODULUS

    def ints(self) -> list[int]:
        return [self.c0, self.c1]

    def is_zero(self) -> bool:
        return self.c0 == 0 and self.c1 == 0

    def __mul__(self, o: "_Fq2") -> "_Fq2":
        return _Fq2(self.c0 * o.c0 - self.c1 * o.c1, self.c0 * o.c1 + self.c1 * o.c0)

    def inverse(self) -> "_Fq2":
        norm = pow(self.c0 * self.c0 + self.c1 * self.c1, -1, FQ_MODULUS)
        return _Fq2(self.c0 * norm, -self.c1 * norm)


def phase_times(bases: MsmBases, scalars, stream=None) -> dict[str, float]:
    """Milliseconds of each MSM step (CUDA events between the launches), for benchmarks."""
    cupy = _cupy()
    n = _check_scalars(bases, scalars, cupy)
    stream = stream or cupy.cuda.get_current_stream()
    events = [("start", cupy.cuda.Event())]
    with cupy.cuda.Device(bases.device_id), stream:
        events[0][1].record(stream)

        def mark(step: str) -> None:
            event = cupy.cuda.Event()
            event.record(stream)
            events.append((step, event))

        p = plan(n)
        sums = _run(bases, cupy.ascontiguousarray(scalars), n, p, cupy, mark).get(stream=stream)
        events[-1][1].synchronize()
    times = {step: cupy.cuda.get_elapsed_time(prev, event)
             for (_, prev), (step, event) in zip(events, events[1:])}
    started = time.perf_counter()
    combine_windows(sums, bases.group, p.c)
    times["combine_host"] = 1e3 * (time.perf_counter() - started)
    return times


def main(argv: list[str] | None = None) -> int:
    """``python -m gpu.msm [--g1 16,20,22] [--g2 16,20] [--reps 5] [--out FILE]``: MSM times
    (median of --reps after a warm-up, CUDA events, bases and scalars on the device) with
    each step's share, as JSON. Bases are distinct k_i·G from ``gpu.fixed_base``."""
    import argparse
    import json
    import statistics

    from gpu.fixed_base import GpuFixedBase
    from snark.fields import random_fr

    parser = argparse.ArgumentParser(prog="python -m gpu.msm")
    parser.add_argument("--g1", default="16,20,22")
    parser.add_argument("--g2", default="16,20")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    cupy = _cupy()
    stream = cupy.cuda.Stream(non_blocking=True)
    fixed = GpuFixedBase()
    device = cupy.cuda.Device().id
    report = {"device": cupy.cuda.runtime.getDeviceProperties(device)["name"].decode(), "reps": args.reps}
    for group, text in ((1, args.g1), (2, args.g2)):
        logs = [int(v) for v in text.split(",") if v]
        if not logs:
            continue
        pool = (fixed.mul_g1 if group == 1 else fixed.mul_g2)(random_fr(1 << max(logs)))
        for log_n in logs:
            n = 1 << log_n
            bases = MsmBases(pool[:n], stream)
            with stream:
                scalars = cupy.asarray(random_fr(n))
            msm(bases, scalars, stream)  # warm-up: compile, pool growth
            samples = []
            for _ in range(args.reps):
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                start.record(stream)
                msm(bases, scalars, stream)
                end.record(stream)
                end.synchronize()
                samples.append(cupy.cuda.get_elapsed_time(start, end))
            phases = phase_times(bases, scalars, stream)
            p = plan(n)
            report[f"g{group}_2^{log_n}"] = {
                "median_ms": statistics.median(samples), "samples_ms": samples,
                "c": p.c, "windows": p.windows, "run_bits": p.run_bits, "phases_ms": phases}
            print(f"msm g{group} 2^{log_n}: {statistics.median(samples):8.2f} ms  (c={p.c}) "
                  + " ".join(f"{k}={v:.2f}" for k, v in phases.items()), flush=True)
            del bases, scalars
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
