"""MSM step times:
``python bench/msm_bench.py [--g1 16,20,22] [--g2 16,20] [--tables [--table-c 19,20]]
[--bits F[,F…]] [--split on|off|both] [--chunk 64,128] [--sort-slots 30,40] [--reps 5]
[--out FILE]``.

Median of --reps after a warm-up (CUDA events, bases and scalars on the device), with each
step's share from ``gpu.msm.phase_times``, as JSON. Bases are distinct k_i·G from
``gpu.fixed_base``; scalars are uniformly random (F = 0), or a witness's mix: a random
share F of them 0 or 1 (a Filecoin partition's auxiliaries are ~90% bits), each F on the
same bases. ``--split both`` times every MSM with the ones summed apart
(``MsmTuning.split_ones``) and without, on the same bases and scalars, in alternating
rounds, checks that both give the same point, and prints the two side by side;
``--chunk`` does the same for level-0 chunk sizes (``MsmTuning.chunk`` and ``huge_chunk``:
the digits a thread sums, which set the size of the partial sums passed to the next level;
``level0_chunk`` in the JSON is the one a sort of that size takes), and
``--sort-slots`` for ``MsmTuning.max_sort_slots`` as powers of two (above it the windows
are sorted and summed in groups). Each variant's scratch is the pool's peak in use during
its first call (``scratch_bytes``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.pool_peak import PoolPeak  # noqa: E402
from bench.provenance import commit  # noqa: E402
from gpu.fixed_base import GpuFixedBase  # noqa: E402
from gpu.msm import (TUNING, MsmBases, MsmTuning, msm, phase_times, split_ones,  # noqa: E402
                     table_plan, window_groups)
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
             tuning: MsmTuning = TUNING) -> tuple[object, list[float], int]:
    """The MSM's result, ``reps`` CUDA-event times (ms) after a warm-up (compile, pool), and
    the warm-up's scratch bytes."""
    import cupy

    with PoolPeak() as peak:
        result = msm(bases, scalars, stream, tuning)
    samples = []
    for _ in range(reps):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        msm(bases, scalars, stream, tuning)
        end.record(stream)
        end.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, end))
    return result, samples, peak.scratch_bytes


def sort_sizes(bases, scalars, stream, tuning: MsmTuning) -> dict:
    """The digit sort's plan, window groups and slot bytes (the entries, 4 B a slot: the
    keys come from the bucket ends; the largest group's) under ``tuning``, and the ones'
    list where they are summed apart."""
    n = scalars.shape[0]
    ones = split_ones([(scalars, n)], bases.device_id, stream)[0]
    digit_scalars = ones.others if tuning.split_ones else n
    p = bases.plan_for(digit_scalars, tuning)
    groups = window_groups(p, digit_scalars, tuning)
    return {"c": p.c, "windows": p.windows, "run_bits": p.run_bits, "ones": ones.count,
            "others": ones.others, "window_groups": [len(g) for g in groups],
            "level0_chunk": tuning.level0_chunk(digit_scalars * max(len(g) for g in groups)),
            "sort_slot_bytes": 4 * digit_scalars * max(len(g) for g in groups),
            "ones_list_bytes": 4 * n if tuning.split_ones else 0}


def main(argv: list[str] | None = None) -> int:
    import cupy

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--g1", default="16,20,22")
    parser.add_argument("--g2", default="16,20")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tables", action="store_true", help="bases with window tables")
    parser.add_argument("--table-c", default="",
                        help="window sizes to run the tables with (default: table_plan's)")
    parser.add_argument("--bits", default="0",
                        help="shares of the scalars that are 0 or 1 (a witness's mix), "
                             "comma-separated")
    parser.add_argument("--split", choices=("on", "off", "both"), default="on",
                        help="sum the ones apart (MsmTuning.split_ones), or not, or both")
    parser.add_argument("--chunk", default="",
                        help="level-0 chunks to run, comma-separated: each is MsmTuning's "
                             "chunk and huge_chunk (default: TUNING's)")
    parser.add_argument("--sort-slots", default=str(TUNING.max_sort_slots.bit_length() - 1),
                        help="log2 of the digits one sort may hold (MsmTuning.max_sort_slots) "
                             "to run, comma-separated")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    stream = cupy.cuda.Stream(non_blocking=True)
    fixed = GpuFixedBase()
    device = cupy.cuda.Device().id
    name = cupy.cuda.runtime.getDeviceProperties(device)["name"].decode()
    shares = [float(v) for v in args.bits.split(",")]
    report = {"date": time.strftime("%Y-%m-%d-%H%M", time.gmtime()), "device": name,
              "commit": commit(), "command": " ".join(["bench/msm_bench.py", *sys.argv[1:]]),
              "reps": args.reps, "tables": args.tables, "bits": shares, "split": args.split}
    splits = ("off", "on") if args.split == "both" else (args.split,)
    chunks = [int(v) for v in args.chunk.split(",") if v] or [None]
    slot_logs = [int(v) for v in args.sort_slots.split(",")]
    variants = {f"split-{v}" + (f"_chunk{k}" if len(chunks) > 1 else "")
                + (f"_slots2^{g}" if len(slot_logs) > 1 else ""):
                dataclasses.replace(TUNING, split_ones=v == "on", max_sort_slots=1 << g,
                                    **({"chunk": k, "huge_chunk": k} if k else {}))
                for v in splits for k in chunks for g in slot_logs}
    sizes = {1: args.g1, 2: args.g2}
    table_cs = [int(v) for v in args.table_c.split(",") if v] or [None]
    runs = ((c, inputs) for c in table_cs
            for inputs in msm_inputs(fixed, stream, sizes, args.tables, c))
    table = []
    for table_c, (group, log_n, bases, uniform) in runs:
        for bits in shares:
            with stream:
                scalars = witness_like(uniform.copy(), bits) if bits else uniform
            samples, results, scratch = {v: [] for v in variants}, {}, {}
            for _ in range(2):  # alternating rounds: drift hits both variants alike
                for v, tuning in variants.items():
                    results[v], times, scratch[v] = time_msm(bases, scalars, stream,
                                                             args.reps, tuning)
                    samples[v] += times
            first, *rest = results.values()
            if any(point != first for point in rest):
                raise SystemExit(f"g{group} 2^{log_n} bits {bits}: the variants differ")
            medians = {}
            for v, tuning in variants.items():
                medians[v] = statistics.median(samples[v])
                phases = phase_times(bases, scalars, stream, tuning)
                key = (f"g{group}_2^{log_n}" + (f"_c{table_c}" if table_c else "")
                       + f"_bits{bits:g}" + (f"_{v}" if len(variants) > 1 else ""))
                report[key] = {"median_ms": medians[v], "samples_ms": samples[v],
                               "split_ones": tuning.split_ones, "chunk": tuning.chunk,
                               "max_sort_slots": tuning.max_sort_slots,
                               "scratch_bytes": scratch[v], "phases_ms": phases,
                               **sort_sizes(bases, scalars, stream, tuning)}
                print(f"msm {key}: {medians[v]:8.2f} ms  (c={report[key]['c']}, scratch "
                      f"{scratch[v] / 1e9:.2f} GB) "
                      + " ".join(f"{k}={t:.2f}" for k, t in phases.items()), flush=True)
            table.append((f"g{group} 2^{log_n} bits {bits:g}", medians))
            del scalars
        del bases, uniform
    print("\n| MSM | " + " | ".join(f"{v} ms" for v in variants) + " |")
    for label, medians in table:
        print(f"| {label} | " + " | ".join(f"{medians[v]:.2f}" for v in variants) + " |")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
