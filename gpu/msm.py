"""Pippenger multi-scalar multiplication on the GPU, G1 and G2 (kernels: ``kernels/msm.cu``).

``MsmBases`` uploads a key's affine bases once (standard form in, Montgomery on the device;
infinity rows stay zero, the kernels' infinity marker). ``msm`` cuts standard-form scalars
into signed c-bit digits, sorts the digits into buckets by a counting sort (histogram with
atomics, prefix sum, scatter), sums each bucket with mixed additions, reduces buckets and
windows on the device and copies back one affine point.

Scalars at or above r are reduced mod r on the device (any 256-bit value is < 3r), which
matches Σ s_i·P_i for points of order r. Every launch is on the given stream; the only
synchronisation is the copy of the result back to the host.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpu import module
from snark.backend import DeviceMemoryError
from snark.curve import G1Point, G2Point, PointArray, point_from_xy

SOURCE = "msm.cu"
SCALAR_BITS = 256  # digits cover 256 bits so a 255-bit scalar's top window never carries out
#: uint64 words of one Fq / Fq2 element, by group.
FIELD_WORDS = {1: 6, 2: 12}
THREADS = 128
#: Threads of msm_reduce_windows (MSM_REDUCE_THREADS in msm.cu).
REDUCE_THREADS = 64
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
        host = np.ascontiguousarray(points.xy, dtype=np.uint64).reshape(len(points), 2 * self.words)
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
            out = _run(bases, cupy.ascontiguousarray(scalars), n, plan(n), cupy)
            xy = out.get(stream=stream)  # waits for this stream only
    except cupy.cuda.memory.OutOfMemoryError as exc:
        raise DeviceMemoryError(f"msm of {n} G{bases.group} points: {exc}") from exc
    return point_from_xy(xy, bases.group)


def _check_scalars(bases: MsmBases, scalars, cupy) -> int:
    if not isinstance(scalars, cupy.ndarray):
        raise TypeError(f"scalars: expected a cupy.ndarray, got {type(scalars).__name__}")
    if scalars.dtype != np.uint64 or scalars.ndim != 2 or scalars.shape[1] != 4:
        raise ValueError(f"scalars: expected (n, 4) uint64 limbs, got {scalars.shape} {scalars.dtype}")
    n = scalars.shape[0]
    if n > len(bases):
        raise ValueError(f"scalars: {n} scalars for {len(bases)} bases")
    if n >= 1 << 31:
        raise ValueError(f"scalars: {n} exceeds the 2^31 points one MSM indexes")
    return n


def _run(bases: MsmBases, scalars, n: int, p: Plan, cupy, mark=lambda step: None):
    """Queue the whole MSM on the current stream; return the (2·words,) result on device.
    ``mark(step)`` is called after each step is queued (``phase_times`` records events)."""
    group, words, dev = bases.group, bases.words, bases.device_id
    point_words = 4 * words  # XYZZ
    keys = p.windows * p.buckets
    u32 = np.uint32

    counts = cupy.zeros(keys + 1, dtype=cupy.uint32)
    _kernel("msm_count", dev)(_blocks(n), (THREADS,), (scalars, u32(n), u32(p.c), u32(p.windows), counts))
    mark("count")
    offsets = cupy.cumsum(counts, dtype=cupy.uint32)  # bucket k spans offsets[k] .. offsets[k+1]
    cursor = offsets[:-1].copy()
    mark("prefix_sum")
    entries = cupy.empty(n * p.windows, dtype=cupy.uint32)
    _kernel("msm_scatter", dev)(_blocks(n), (THREADS,),
                                (scalars, u32(n), u32(p.c), u32(p.windows), cursor, entries))
    mark("scatter")
    del counts, cursor

    buckets = cupy.empty((keys, point_words), dtype=cupy.uint64)
    _kernel(f"msm_accumulate_g{group}", dev)(_blocks(keys), (THREADS,),
                                              (bases.xy, entries, offsets, u32(keys), buckets))
    mark("accumulate")
    del entries, offsets

    runs = p.windows * p.runs_per_window
    run_sums = cupy.empty((runs, point_words), dtype=cupy.uint64)
    _kernel(f"msm_reduce_segments_g{group}", dev)(
        _blocks(runs), (THREADS,), (buckets, u32(p.bucket_bits), u32(p.run_bits), u32(runs), run_sums))
    mark("reduce_segments")
    del buckets

    window_sums = cupy.empty((p.windows, point_words), dtype=cupy.uint64)
    _kernel(f"msm_reduce_windows_g{group}", dev)(
        (p.windows,), (REDUCE_THREADS,), (run_sums, u32(p.runs_per_window), window_sums))
    mark("reduce_windows")
    out = cupy.empty(2 * words, dtype=cupy.uint64)
    _kernel(f"msm_combine_g{group}", dev)((1,), (1,), (window_sums, u32(p.windows), u32(p.c), out))
    mark("combine")
    return out


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

        _run(bases, cupy.ascontiguousarray(scalars), n, plan(n), cupy, mark)
        events[-1][1].synchronize()
    return {step: cupy.cuda.get_elapsed_time(prev, event)
            for (_, prev), (step, event) in zip(events, events[1:])}


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
    report = {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "reps": args.reps}
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
