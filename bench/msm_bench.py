"""MSM step times:
``python bench/msm_bench.py [--g1 16,20,22] [--g2 16,20] [--tables [--table-c 19,20]]
[--bits F] [--reps 5] [--out FILE]``.

Median of --reps after a warm-up (CUDA events, bases and scalars on the device), with each
step's share from ``gpu.msm.phase_times``, as JSON. Bases are distinct k_i·G from
``gpu.fixed_base``; scalars are uniformly random, or with ``--bits F`` a witness's mix: a
random share F of them 0 or 1 (a Filecoin partition's auxiliaries are ~90% bits).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.provenance import commit  # noqa: E402
from gpu.fixed_base import GpuFixedBase  # noqa: E402
from gpu.msm import TUNING, MsmBases, MsmTuning, msm, phase_times, table_plan  # noqa: E402
from snark.fields import random_fr  # noqa: E402


def msm_inputs(fixed: GpuFixedBase, stream, sizes: dict[int, str],
               tables: bool = False, table_c: int | None = None) -> Iterator[tuple]:
    """(group, log_n, bases, scalars) for each size of ``sizes`` ({1: "16,20", 2: "20"}):
    distinct k_i·G bases (one pool per group, prefixes of it; with window tables if
    ``tables``, of window size ``table_c`` if given) and uniform scalars."""
    import cupy

    for group, text in sizes.items():
        logs = [int(v) for v in text.split(",") if v]
        if not logs:
            continue
        pool = (fixed.mul_g1 if group == 1 else fixed.mul_g2)(random_fr(1 << max(logs)))
        for log_n in logs:
            bases = MsmBases(pool[:1 << log_n], stream,
                             table=table_plan(1 << log_n, table_c) if tables else None)
            with stream:
                scalars = cupy.asarray(random_fr(1 << log_n))
            yield group, log_n, bases, scalars
            del bases, scalars  # freed before the next size's are made


def witness_like(scalars, bits: float, seed: int = 1):
    """``scalars`` with a random share ``bits`` of its rows replaced by 0 or 1, in place."""
    import cupy

    rng = cupy.random.default_rng(seed)
    rows = cupy.flatnonzero(rng.random(scalars.shape[0]) < bits)
    scalars[rows] = 0
    scalars[rows, 0] = rng.integers(0, 2, rows.size, dtype=cupy.uint64)
    return scalars


def time_msm(bases, scalars, stream, reps: int,
             tuning: MsmTuning = TUNING) -> tuple[object, list[float]]:
    """The MSM's result and ``reps`` CUDA-event times (ms) after a warm-up (compile, pool)."""
    import cupy

    result = msm(bases, scalars, stream, tuning)
    samples = []
    for _ in range(reps):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        msm(bases, scalars, stream, tuning)
        end.record(stream)
        end.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, end))
    return result, samples


def main(argv: list[str] | None = None) -> int:
    import cupy

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--g1", default="16,20,22")
    parser.add_argument("--g2", default="16,20")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tables", action="store_true", help="bases with window tables")
    parser.add_argument("--table-c", default="",
                        help="window sizes to run the tables with (default: table_plan's)")
    parser.add_argument("--bits", type=float, default=0.0,
                        help="share of the scalars that are 0 or 1 (a witness's mix)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    stream = cupy.cuda.Stream(non_blocking=True)
    fixed = GpuFixedBase()
    device = cupy.cuda.Device().id
    name = cupy.cuda.runtime.getDeviceProperties(device)["name"].decode()
    report = {"date": time.strftime("%Y-%m-%d-%H%M", time.gmtime()), "device": name,
              "commit": commit(), "command": " ".join(["bench/msm_bench.py", *sys.argv[1:]]),
              "reps": args.reps, "tables": args.tables, "bits": args.bits}
    sizes = {1: args.g1, 2: args.g2}
    table_cs = [int(v) for v in args.table_c.split(",") if v] or [None]
    runs = ((c, inputs) for c in table_cs
            for inputs in msm_inputs(fixed, stream, sizes, args.tables, c))
    for table_c, (group, log_n, bases, scalars) in runs:
        if args.bits:
            with stream:
                witness_like(scalars, args.bits)
        _, samples = time_msm(bases, scalars, stream, args.reps)
        phases = phase_times(bases, scalars, stream)
        p = bases.plan_for(1 << log_n)
        report[f"g{group}_2^{log_n}" + (f"_c{table_c}" if table_c else "")] = {
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
