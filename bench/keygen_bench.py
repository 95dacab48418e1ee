"""Development-key generation on one GPU: the fixed-base products, and the whole setup path.

* Products (``--g1``/``--g2``: log2 sizes): ``GpuFixedBase.products`` on device-resident
  scalars (CUDA events, median of ``--repeat`` after a warm-up: the kernel's rate), and
  ``mul_g1``/``mul_g2`` from host limbs to a ``PointArray`` (wall: what ``setup`` sees,
  transfers included); the first call's table making apart (``table_s``). ``--tree`` runs
  the same calls against another checkout (an older ``gpu.fixed_base`` has only the host
  path), for a before/after in one call.
* ``--setup SIZE`` (e.g. 512MiB, 32GiB): that Filecoin partition circuit's development key
  (``groth16.setup`` in density form with the GPU fixed base), each step timed: the R1CS,
  the QAP evaluation at τ, each basis; with ``--write DIR`` the key is then written in
  bellperson's formats and converted to proofq's layout (what workers load), each timed.

Prints a table and writes ``bench/results/keygen-<date>.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def product_rows(mul, group: int, log_sizes: list[int], repeat: int,
                 kernel_only: bool = False) -> list[dict]:
    import cupy

    from snark.fields import random_fr

    rng = np.random.default_rng(int.from_bytes(os.urandom(8), "little"))
    host_mul = mul.mul_g1 if group == 1 else mul.mul_g2
    _, table_s = timed(lambda: host_mul(random_fr(16, rng)))  # the table, compiles
    rows = []
    for log_n in log_sizes:
        n = 1 << log_n
        scalars = random_fr(n, rng)
        row = {"group": f"G{group}", "log_n": log_n, "table_s": round(table_s, 3)}
        if hasattr(mul, "products"):
            device = cupy.asarray(scalars)
            times = []
            for i in range(repeat + 1):
                start, stop = cupy.cuda.Event(), cupy.cuda.Event()
                start.record()
                out, inf = mul.products(group, device)
                stop.record()
                stop.synchronize()
                if i:
                    times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
                del out, inf
            kernel_s = statistics.median(times)
            row.update(kernel_s=round(kernel_s, 4), kernel_points_per_s=round(n / kernel_s),
                       kernel_spread=round((max(times) - min(times)) / kernel_s, 3))
            del device
        if kernel_only:
            rows.append(row)
            print(json.dumps(row), flush=True)
            continue
        host_mul(scalars[:1024])
        times = [timed(lambda s=scalars: host_mul(s))[1] for _ in range(max(1, repeat // 2))]
        host_s = statistics.median(times)
        row.update(host_s=round(host_s, 3), host_points_per_s=round(n / host_s))
        cupy.get_default_memory_pool().free_all_blocks()
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def setup_run(size: str, write_dir: str | None, save_dir: str | None) -> dict:
    from gpu.fixed_base import GpuFixedBase
    from snark import groth16
    from snark.filecoin import registered_proof
    from snark.filecoin.circuit import StackedShape, circuit_r1cs
    from snark.filecoin.registered_proofs import dev_stem

    proof = registered_proof(f"StackedDrg{size}V1_1")
    r1cs, r1cs_s = timed(lambda: circuit_r1cs(StackedShape.of(proof)))
    print(f"{size}: R1CS {r1cs_s:.1f} s, {r1cs.num_constraints} constraints", flush=True)
    marks: list[tuple[str, float]] = []
    fixed = GpuFixedBase()
    fixed.mul_g1(np.zeros((1, 4), dtype=np.uint64))  # tables and kernels ready: not setup's
    fixed.mul_g2(np.zeros((1, 4), dtype=np.uint64))
    start = time.perf_counter()

    def progress(step: str, done: int, total: int | None) -> None:
        if not marks or marks[-1][0] != step:  # a new step: say so as it starts
            print(f"{size}: {time.perf_counter() - start:7.1f} s  {step}", flush=True)
        marks.append((step, time.perf_counter()))

    # named as a worker names a development key (``development_key``): no hash of the
    # circuit to wait for, which at 32 GiB took longer than the rest of the setup
    key = groth16.setup(r1cs, fixed_base=fixed, density=True, progress=progress,
                        circuit_id=dev_stem(proof))
    setup_s = time.perf_counter() - start
    steps, last = {}, start
    for step, at in marks:  # each step: from the report before its first to its last
        steps[step] = steps.get(step, 0.0) + at - last
        last = at
    steps["assemble"] = start + setup_s - last
    counts = {name: len(getattr(key, name)) for name in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1")}
    g1 = sum(v for k, v in counts.items() if k != "b_g2")
    record = {"registered_proof": proof.name, "constraints": r1cs.num_constraints,
              "r1cs_s": round(r1cs_s, 1), "setup_s": round(setup_s, 1),
              "steps_s": {k: round(v, 2) for k, v in steps.items()}, "points": counts,
              "g1_points": g1, "setup_points_per_s": round((g1 + counts["b_g2"]) / setup_s)}
    print(json.dumps(record), flush=True)
    if save_dir:  # straight to the layout workers load (ProvingKey.save), no .params
        _, record["save_s"] = timed(lambda: key.save(Path(save_dir)))
        print(f"saved in {record['save_s']:.1f} s", flush=True)
    if write_dir:
        from snark.bellperson import write_key
        from snark.filecoin.params import load_proving_key

        directory = Path(write_dir)
        directory.mkdir(parents=True, exist_ok=True)
        params, vk = directory / "dev.params", directory / "dev.vk"
        _, record["write_s"] = timed(lambda: write_key(key, params, vk))
        record["params_bytes"] = params.stat().st_size
        del key
        converted, record["read_s"] = timed(lambda: load_proving_key(proof, params))
        _, record["convert_save_s"] = timed(lambda: converted.save(directory / "resident"))
        print(json.dumps({k: record[k] for k in ("write_s", "params_bytes", "read_s",
                                                  "convert_save_s")}), flush=True)
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--g1", default="20,22,24", help="log2 sizes of the G1 products")
    parser.add_argument("--g2", default="20,22", help="log2 sizes of the G2 products")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", default=str(HERE.parent), help="checkout whose gpu/ runs")
    parser.add_argument("--label", default="")
    parser.add_argument("--setup", default="", help="Filecoin sector size whose key to make")
    parser.add_argument("--write", default="", help="directory for the key in bellperson's "
                        "formats, then read back and converted")
    parser.add_argument("--save", default="", help="directory for the key in proofq's layout")
    parser.add_argument("--threads-per-sm", default="",
                        help="also time the kernel at these fixed_base.THREADS_PER_SM")
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args()
    sys.path.insert(0, args.tree)
    sys.path.insert(0, str(HERE))
    import cupy
    from provenance import commit

    from gpu.fixed_base import GpuFixedBase

    sizes = {g: [int(s) for s in v.split(",") if s] for g, v in ((1, args.g1), (2, args.g2))}
    mul = GpuFixedBase()
    rows = [row for g in (1, 2) for row in product_rows(mul, g, sizes[g], args.repeat)]
    for value in (int(v) for v in args.threads_per_sm.split(",") if v):
        import gpu.fixed_base as fixed_base
        default, fixed_base.THREADS_PER_SM = fixed_base.THREADS_PER_SM, value
        for row in product_rows(mul, 1, sizes[1], args.repeat, kernel_only=True):
            rows.append(dict(row, threads_per_sm=value))
        fixed_base.THREADS_PER_SM = default
    record = {
        "date": time.strftime("%Y-%m-%d-%H%M", time.gmtime()),
        "device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "commit": commit(), "label": args.label,
        "command": " ".join(["bench/keygen_bench.py", *sys.argv[1:]]), "products": rows}
    if args.setup:
        record["setup"] = setup_run(args.setup, args.write or None, args.save or None)
    print(f"\n{'group':>5} {'log n':>5} {'kernel M/s':>10} {'host M/s':>9} {'table s':>8}")
    for r in rows:
        if "threads_per_sm" in r:
            print(f"{r['group']:>5} {r['log_n']:>5} {r['kernel_points_per_s'] / 1e6:>10.1f} "
                  f"(kernel, {r['threads_per_sm']} threads a multiprocessor)")
            continue
        kernel = r.get("kernel_points_per_s")
        print(f"{r['group']:>5} {r['log_n']:>5} "
              f"{(kernel / 1e6 if kernel else float('nan')):>10.1f} "
              f"{r['host_points_per_s'] / 1e6:>9.1f} {r['table_s']:>8.2f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    suffix = f"-{args.label}" if args.label else ""
    path = out / f"keygen-{record['date']}{suffix}.json"
    path.write_text(json.dumps(record, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
