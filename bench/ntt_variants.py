"""NTT plans against each other, in one process on one GPU: which pass shape is fastest.

    python bench/ntt_variants.py [--logs 16,18,20,22,24,27] [--reps 15] [--out FILE]

For every size, candidate shapes (``gpu.ntt.Shape``: two to four passes, 0 to 3 columns a
block in the later passes, 2^1..2^2 elements a thread, the first pass's R apart from the
rest's) time the natural-order forward transform (a gathering DIT, out of place, as
``gpu_bench`` times it) by CUDA events: three runs each, then ``--reps`` for the five
fastest and the default plan. Every variant's output must equal the default plan's byte
for byte (else the run stops); the default's round trip through the inverse must give the
input back. The table at the end names the fastest shape per size, to copy into
``gpu.ntt.SHAPES``; the host time of one call (launches only) is printed beside it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cupy  # noqa: E402

from bench.gpu_bench import timed  # noqa: E402

from gpu.ntt import (MAX_LOG_BLOCK, MAX_LOG_PER_THREAD, default_shape, engine,  # noqa: E402
                     make_plan)
from snark.fields import random_fr  # noqa: E402


def candidates(log_n: int) -> list[tuple]:
    """Distinct valid shapes: even splits and a full first pass, over columns and R."""
    shapes = {default_shape(log_n)}
    fewest = -(-log_n // MAX_LOG_BLOCK)
    for count, cols, r_first, r_rest in itertools.product(
            range(max(2, fewest), fewest + 2), range(4), *[range(1, MAX_LOG_PER_THREAD + 1)] * 2):
        cap = MAX_LOG_BLOCK - cols
        for first in {log_n - min(cap, -(-log_n // count)) * (count - 1),
                      min(MAX_LOG_BLOCK, log_n - (count - 1))}:
            rest = log_n - first
            later = [rest // (count - 1) + (i < rest % (count - 1)) for i in range(count - 1)]
            stages = [first, *later]
            shape = tuple((s, min(cols, sum(stages[:i])) if i else 0,
                           min(r_first if i == 0 else r_rest, s)) for i, s in enumerate(stages))
            try:
                make_plan(log_n, shape)
            except ValueError:
                continue
            shapes.add(shape)
    return sorted(shapes)


def sweep_size(base, log_n: int, reps: int, stream) -> tuple[dict, str] | None:
    """One size's candidates: (its report entry, its table row), or None on a mismatch."""
    base.prepare(log_n)
    x = cupy.asarray(random_fr(1 << log_n))
    y = cupy.empty_like(x)
    base.dit(x, y, gather=True)
    expected = y.copy()
    back = cupy.empty_like(x)
    base.dit(expected, back, inverse=True, gather=True, post="n_inv")
    if not cupy.array_equal(back, x):
        print(f"ROUND TRIP FAILED at 2^{log_n}", flush=True)
        return None
    del back

    def forward(ntt):
        return lambda: ntt.dit(x, y, gather=True)

    quick = {}
    for shape in candidates(log_n):
        ntt = base.with_shapes({log_n: shape})
        y.fill(0)
        samples = timed(forward(ntt), stream, 3)
        if not cupy.array_equal(y, expected):
            print(f"MISMATCH: 2^{log_n} shape {shape}", flush=True)
            return None
        quick[shape] = statistics.median(samples)
    default = default_shape(log_n)
    finalists = sorted(quick, key=quick.get)[:5]
    finalists += [default] if default not in finalists else []
    final = {shape: timed(forward(base.with_shapes({log_n: shape})), stream, reps)
             for shape in finalists}
    medians = {shape: statistics.median(v) for shape, v in final.items()}
    best = min(medians, key=medians.get)
    ntt = base.with_shapes({log_n: best})
    forward(ntt)()
    stream.synchronize()
    started = time.perf_counter()
    for _ in range(20):
        forward(ntt)()
    host_us = (time.perf_counter() - started) / 20 * 1e6
    stream.synchronize()
    inverse = statistics.median(timed(
        lambda: ntt.dit(x, y, inverse=True, gather=True, post="n_inv"), stream, reps))
    entry = {"quick_ms": {str(k): v for k, v in quick.items()},
             "final_ms": {str(k): v for k, v in final.items()},
             "best": best, "best_ms": medians[best], "default": default,
             "default_ms": medians[default], "best_intt_ms": inverse,
             "host_us_per_call": host_us}
    row = (f"2^{log_n:<3} best {medians[best]:8.4f} ms  intt {inverse:8.4f} ms  "
           f"default {medians[default]:8.4f} ms  host {host_us:5.1f} us  {best}")
    return entry, row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", default="16,18,20,22,24,27")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    base = engine(cupy.cuda.Device().id)
    report = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "reps": args.reps, "sizes": {}}
    rows = []
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        for log_n in (int(v) for v in args.logs.split(",")):
            swept = sweep_size(base, log_n, args.reps, stream)
            if swept is None:
                return 1
            report["sizes"][log_n], row = swept
            rows.append(row)
            print(row, flush=True)
            cupy.get_default_memory_pool().free_all_blocks()
            if args.out:
                Path(args.out).write_text(json.dumps(report, indent=1))
    print("\n".join(["", "fastest shape per size (all outputs equal the default's):", *rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
