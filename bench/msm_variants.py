"""A/B of compile-time variants of the MSM kernels, in one process on one GPU.

    python bench/msm_variants.py [--variant NAME=-DX,-DY,runs=K,chunk=K,wide=K,later=K ...]
                                 [--cubins DIR]
                                 [--g1 20,22] [--g2 20] [--tables] [--reps 5]
                                 [--out FILE]

The baseline is ``gpu/kernels/msm.cu`` as the backend loads it (NVRTC). Each variant is the
same source with extra defines, loaded from ``DIR/NAME.cubin`` when present (built with
``nvcc -cubin -arch=sm_90`` on a machine without a GPU, which saves device time) or
compiled by NVRTC here; a cubin built from another commit's ``msm.cu`` times that commit's
kernels in the same process as this tree's (its define then only names it: the before and
after of docs/performance.md). The other tokens set fields of its ``gpu.msm.MsmTuning``:
``runs=K`` ``target_runs`` = 2^K (plain plans: a table's plan is fixed when its bases are
made), ``chunk=K``, ``wide=K`` and ``later=K`` the bucket levels' ``chunk``,
``wide_chunk_digits`` (2^K) and ``later_chunk``, ``maxc=K`` ``max_c``, ``staged=K``
``staged_scatter_digits`` (2^K), ``bins=K`` ``scatter_bins``, ``per=K`` ``bin_scalars`` and
``slots=K`` ``max_sort_slots`` (2^K). For every
size, all variants run on the same bases and scalars; a variant whose result differs from
the baseline's stops the run. Times are medians of ``--reps`` after a warm-up (CUDA
events), with the steps of ``gpu.msm.phase_times``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cupy  # noqa: E402

from bench.msm_bench import msm_inputs, time_msm  # noqa: E402
from bench.provenance import commit  # noqa: E402
from gpu import module  # noqa: E402
from gpu import msm as gpu_msm  # noqa: E402
from gpu.fixed_base import GpuFixedBase  # noqa: E402


def variant_module(name: str, defines: list[str], cubins: Path | None):
    path = cubins / f"{name}.cubin" if cubins else None
    if path is not None and path.exists():
        try:
            mod = cupy.RawModule(path=str(path))
            mod.get_function("msm_count")  # loads the image: a driver that refuses it says so here
            return mod
        except cupy.cuda.driver.CUDADriverError as exc:
            print(f"{path}: {exc}; compiling {name} with NVRTC instead", flush=True)
    mod = cupy.RawModule(code=module.expanded_source(gpu_msm.SOURCE),
                         options=(*module.NVRTC_OPTIONS, *defines))
    mod.compile()
    return mod


#: Variant tokens that set a ``gpu.msm.MsmTuning`` field instead of a define: runs=K (2^K),
#: chunk=K, wide=K (2^K), later=K, maxc=K (the widest plain window), staged=K (2^K digits),
#: bins=K, per=K (the staged scatter's bins and scalars a thread), slots=K (2^K digits a sort),
#: stage=K (2^K digits a turn of the staged scatter).
SETTINGS = {"runs": "target_runs", "chunk": "chunk", "wide": "wide_chunk_digits",
            "later": "later_chunk", "maxc": "max_c", "staged": "staged_scatter_digits",
            "bins": "scatter_bins", "per": "bin_scalars", "slots": "max_sort_slots",
            "stage": "staging_slots"}
POWERS = ("runs", "wide", "staged", "slots", "stage")  # settings given as log2


def _setting(token: str) -> tuple[str, int]:
    key, _, value = token.partition("=")
    return SETTINGS[key], (1 << int(value)) if key in POWERS else int(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", action="append", default=[], help="NAME=-DX,-DY")
    parser.add_argument("--cubins", default=None)
    parser.add_argument("--g1", default="20,22")
    parser.add_argument("--g2", default="20")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tables", action="store_true", help="bases with window tables")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    cubins = Path(args.cubins) if args.cubins else None
    variants, settings = {"baseline": None}, {}
    for spec in args.variant:
        name, _, tokens = spec.partition("=")
        tokens = [t for t in tokens.split(",") if t]
        settings[name] = dict(_setting(t) for t in tokens if not t.startswith("-"))
        defines = [t for t in tokens if t.startswith("-")]
        variants[name] = defines or None
    production_kernel = gpu_msm._kernel
    modules = {name: None if defines is None else variant_module(name, defines, cubins)
               for name, defines in variants.items()}
    stream = cupy.cuda.Stream(non_blocking=True)
    fixed = GpuFixedBase()
    device = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()
    report = {"date": time.strftime("%Y-%m-%d-%H%M", time.gmtime()), "device": device,
              "commit": commit(), "command": " ".join(["bench/msm_variants.py", *sys.argv[1:]]),
              "variants": {k: v or [] for k, v in variants.items()}, "settings": settings,
              "reps": args.reps, "tables": args.tables}
    rows = []
    for group, log_n, bases, scalars in msm_inputs(fixed, stream, {1: args.g1, 2: args.g2},
                                                      args.tables):
        expected = None
        for name, mod in modules.items():
            tuning = dataclasses.replace(gpu_msm.TUNING, **settings.get(name, {}))
            if mod is not None:  # the kernels of a compile-time variant
                gpu_msm._kernel = lambda kernel, device_id, mod=mod: mod.get_function(kernel)
            try:
                result, samples, _ = time_msm(bases, scalars, stream, args.reps, tuning)
                phases = gpu_msm.phase_times(bases, scalars, stream, tuning)
            finally:
                gpu_msm._kernel = production_kernel
            expected = expected or result
            if result != expected:
                print(f"MISMATCH: variant {name} at g{group} 2^{log_n}", flush=True)
                return 1
            median = statistics.median(samples)
            report[f"{name} g{group} 2^{log_n}"] = {"median_ms": median, "samples_ms": samples,
                                                    "phases_ms": phases}
            rows.append(f"g{group} 2^{log_n:<3} {name:<12} {median:9.2f} ms   "
                        + " ".join(f"{k}={v:.2f}" for k, v in phases.items()))
            print(rows[-1], flush=True)
        del bases, scalars
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1))
    print("\n".join(["", "variant table (all results equal the baseline's):", *rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
