"""GPU benchmark: Fr NTT, G1/G2 MSM, device copy bandwidth, and full porep partitions.

    python bench/gpu_bench.py [--out DIR] [--ntt 16:26] [--g1 16:24] [--g2 16:22]
                              [--partitions 16,20,22] [--reps 5] [--sppark LOG]

Every figure is the median of ``--reps`` runs after one warm-up, timed with CUDA events
on the stream that runs the work; inputs are already on the device (uploads are timed
separately where they are part of a proof). Scalars and NTT inputs are random and
non-zero. MSM bases are distinct points k_i·G for random k_i, made on the device by
``gpu.fixed_base`` (their time is not part of any figure).

Partitions use the real porep circuit (sector 2 KiB, K challenges sized to the target
constraint count). The key's bases are slices of the random point pools and the witness is
random: timing depends on sizes and sparsity, not on values, so these proofs do not verify.
Correctness is the test suite's job.

Writes ``gpu-<date>-<HHMM>.json`` (device, commit, command, every sample) and prints a table last.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import importlib
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.provenance import commit  # noqa: E402

import cupy  # noqa: E402

import gpu  # noqa: E402
from gpu import device  # noqa: E402
from gpu.ntt import engine, plan  # noqa: E402
from snark.curve import G1Point, G2Point, PointArray  # noqa: E402
from snark.fields import random_fr  # noqa: E402
from snark.keys import ProvingKey, VerifyingKey  # noqa: E402
from snark.qap import COSET, ODD, QapForm  # noqa: E402
from snark.porep.circuit import challenges_for, circuit_r1cs, circuit_sizes  # noqa: E402
from snark.r1cs import R1CS  # noqa: E402

SECTOR = 2048
#: Reference figures on this H200 (sppark, inputs on the device), ms.
SPPARK_MS = {"ntt": {20: 0.28, 24: 4.7}, "g1": {16: 6.9, 20: 20.7, 22: 53.0, 24: 155.0}}
SPPARK_COPY_TBS = 4.17


# -- timing -------------------------------------------------------------------------------
def timed(fn, stream, reps: int) -> list[float]:
    """Milliseconds per call by CUDA events on ``stream``, after one warm-up call; each call
    starts on an idle stream (the warm-up too is waited for: else the first sample starts
    behind it, the way calls queued back to back do)."""
    fn()
    stream.synchronize()
    samples = []
    for _ in range(reps):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        fn()
        end.record(stream)
        end.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, end))
    return samples


def summary(samples: list[float]) -> dict:
    return {"median_ms": statistics.median(samples), "min_ms": min(samples), "samples_ms": samples}


def random_scalars(n: int):
    """Uniformly random Fr values as (n, 4) device limbs (zero has probability n/r).

    Uniform matters: bucket-sorted MSMs slow down when digits cluster (an earlier version
    drew each limb below 2^62, leaving two zero bits per limb, and timed some MSM sizes
    many times slower)."""
    return cupy.asarray(random_fr(n))


# -- inputs -------------------------------------------------------------------------------
def point_pool(group: int, count: int) -> PointArray:
    """``count`` distinct points k_i·G (random k_i), computed on the GPU."""
    from gpu.fixed_base import GpuFixedBase

    ks = random_fr(count)
    ks[:, 0] |= np.uint64(1)
    mul = GpuFixedBase()
    return mul.mul_g1(ks) if group == 1 else mul.mul_g2(ks)


def bench_key(r1cs: R1CS, g1: PointArray, g2: PointArray, name: str,
              qap: QapForm = COSET) -> ProvingKey:
    """A key of the right shapes whose bases are pool slices (not a ceremony's); the odd H
    form (snarkjs keys) has one H point per domain point, the coset form one fewer."""
    g, h = G1Point(), G2Point()
    nv, ni = r1cs.num_variables, r1cs.num_inputs
    h_points = qap.h_len(r1cs.domain_size)
    vk = VerifyingKey(name, g, h, h, h, [g] * ni)
    return ProvingKey(r1cs=r1cs, vk=vk, beta_g1=g, delta_g1=g, a_g1=g1[:nv], b_g1=g1[:nv],
                      b_g2=g2[:nv], l_g1=g1[ni:nv], h_g1=g1[:h_points], qap=qap)


# -- benchmarks ---------------------------------------------------------------------------
def bench_copy(stream, reps: int) -> dict:
    nbytes = 4 << 30
    src = cupy.empty(nbytes, dtype=cupy.uint8)
    dst = cupy.empty_like(src)
    src.fill(7)
    samples = timed(lambda: cupy.copyto(dst, src), stream, reps)
    ms = statistics.median(samples)
    return {"bytes": nbytes, "median_ms": ms, "tb_per_s": 2 * nbytes / ms / 1e9}


def back_to_back(fn, stream, calls: int = 50) -> dict:
    """``calls`` calls queued without waiting: the device's milliseconds per call (its
    kernels alone once the host keeps ahead) and the host's microseconds to queue one."""
    fn()
    stream.synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record(stream)
    began = time.perf_counter()
    for _ in range(calls):
        fn()
    host_s = time.perf_counter() - began
    end.record(stream)
    end.synchronize()
    return {"device_ms_per_call": cupy.cuda.get_elapsed_time(start, end) / calls,
            "host_us_per_call": host_s / calls * 1e6}


def bench_ntt(log_n: int, stream, reps: int) -> dict:
    """Natural-order forward (DIT, gathering first pass) and inverse (1/n fused), out of
    place, each call timed alone from an idle device (as sppark's bench times its own);
    beside it the same forward queued back to back (what latency costs)."""
    ntt = engine(cupy.cuda.Device().id)
    ntt.prepare(log_n)
    x = random_scalars(1 << log_n)
    y = cupy.empty_like(x)
    fwd = timed(lambda: ntt.dit(x, y, gather=True), stream, reps)
    inv = timed(lambda: ntt.dit(x, y, inverse=True, gather=True, post="n_inv"), stream, reps)
    queued = back_to_back(lambda: ntt.dit(x, y, gather=True), stream)
    print(f"ntt 2^{log_n}: {statistics.median(fwd):.4f} ms  intt {statistics.median(inv):.4f} ms"
          f"  back to back {queued['device_ms_per_call']:.4f} ms a call, host "
          f"{queued['host_us_per_call']:.1f} us", flush=True)
    return {"passes": len(plan(log_n)), "ntt": summary(fwd), "intt": summary(inv),
            "back_to_back": queued}


def bench_msm(group: int, log_n: int, pool: PointArray, stream, reps: int,
              tabled: bool = False, tuning=None) -> dict:
    from gpu.msm import TUNING, MsmBases, msm, table_plan

    tuning = tuning or TUNING
    t0 = time.perf_counter()
    table = table_plan(1 << log_n, tuning=tuning) if tabled else None
    bases = MsmBases(pool[:1 << log_n], stream, table=table)
    stream.synchronize()
    made_s = time.perf_counter() - t0
    scalars = random_scalars(1 << log_n)
    samples = timed(lambda: msm(bases, scalars, stream=stream, tuning=tuning), stream, reps)
    print(f"msm g{group} 2^{log_n}{' (window tables)' if tabled else ''}: "
          f"{statistics.median(samples):.2f} ms (bases made in {made_s:.2f} s)", flush=True)
    return {**summary(samples), "bases_s": made_s, "bases_bytes": bases.xy.nbytes}


def bench_partition(log_c: int, g1: PointArray, g2: PointArray, backend, reps: int,
                    qap: QapForm = COSET) -> dict:
    k = challenges_for(SECTOR, 1 << log_c)
    t0 = time.perf_counter()
    r1cs = circuit_r1cs(SECTOR, k)
    build_s = time.perf_counter() - t0
    key = bench_key(r1cs, g1, g2, f"bench-porep-2KiB-{k}-{qap}", qap)
    t0 = time.perf_counter()
    backend.prepare(key)
    prepare_s = time.perf_counter() - t0
    witness = random_fr(r1cs.num_variables)
    witness[0] = (1, 0, 0, 0)
    stream = backend.stream
    phases: dict[str, list[float]] = {}

    def once(record: bool) -> None:
        t = time.perf_counter()
        w = backend.load_witness(key, witness)
        stream.synchronize()
        times = {"upload": (time.perf_counter() - t) * 1e3}
        result = {}

        def step(name, fn):
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record(stream)
            result[name] = fn()
            end.record(stream)
            end.synchronize()
            times[name] = cupy.cuda.get_elapsed_time(start, end)

        step("abc", lambda: backend.evaluate_abc(key, w))
        step("h", lambda: backend.quotient(key, result["abc"]))
        backend.release(result["abc"])
        step("msm_a_g1", lambda: backend.msm_g1(key, "a_g1", w))
        step("msm_b_g1", lambda: backend.msm_g1(key, "b_g1", w))
        step("msm_b_g2", lambda: backend.msm_g2(key, "b_g2", w))
        step("msm_l_g1", lambda: backend.msm_g1(key, "l_g1", w[r1cs.num_inputs:]))
        step("msm_h_g1", lambda: backend.msm_g1(key, "h_g1", result["h"]))
        step("msm_batch", lambda: backend.proof_msms(key, w, result["h"]))
        g1_streams, backend.g1_streams = backend.g1_streams, ()  # the same, G1 on one stream
        step("msm_batch_one_g1_stream", lambda: backend.proof_msms(key, w, result["h"]))
        backend.g1_streams = g1_streams
        backend.release(w, result["h"])
        if record:
            for name, ms in times.items():
                phases.setdefault(name, []).append(ms)

    once(False)
    for _ in range(reps):
        once(True)
    medians = {name: statistics.median(s) for name, s in phases.items()}
    # the proving path (groth16.compute): abc, h, then the five MSMs as one batch
    total = medians["abc"] + medians["h"] + medians["msm_batch"]
    sequential = sum(v for name, v in medians.items()
                     if name not in ("upload", "msm_batch", "msm_batch_one_g1_stream"))
    print(f"partition 2^{log_c} ({qap} H): {r1cs.num_constraints} constraints, "
          f"compute {total:.1f} ms "
          f"(MSMs one by one: {sequential:.1f} ms; "
          f"{', '.join(f'{n} {v:.1f}' for n, v in medians.items())})", flush=True)
    return {"challenges": k, "constraints": r1cs.num_constraints, "domain": r1cs.domain_size,
            "variables": r1cs.num_variables, "nnz": [m.nnz for m in (r1cs.a, r1cs.b, r1cs.c)],
            "build_r1cs_s": build_s, "prepare_s": prepare_s, "compute_ms": total,
            "compute_sequential_ms": sequential,
            "phases_median_ms": medians, "phases_samples_ms": phases}


# -- driver -------------------------------------------------------------------------------
def msm_tuning(spec: str):
    """``gpu.msm.TUNING`` with the fields of ``spec`` ('chunk=32,later_chunk=16') replaced."""
    from gpu.msm import TUNING

    fields = dict(item.split("=") for item in spec.split(",") if item)
    return dataclasses.replace(TUNING, **{k: int(v) for k, v in fields.items()})


def log_range(text: str) -> list[int]:
    if not text:
        return []
    if ":" in text:
        lo, hi = text.split(":")
        return list(range(int(lo), int(hi) + 1))
    return [int(v) for v in text.split(",")]


def sppark_reference(path: str | None) -> dict:
    """sppark's figures by op and log size: from its JSON line (the last line of its
    output, ``--sppark``) when this run has one, else the reference above."""
    if not path:
        return {"source": "reference", "ntt": SPPARK_MS["ntt"], "g1": SPPARK_MS["g1"]}
    line = [v for v in Path(path).read_text().splitlines() if v.startswith("{")][-1]
    data = json.loads(line)
    return {"source": path, "line": data,
            "ntt": {int(k): v for k, v in data["ntt_ms"].items()},
            "g1": {int(k): v for k, v in data["msm_ms"].items()}}


def table(result: dict) -> str:
    copy = (result.get("copy") or {}).get("tb_per_s", float("nan"))
    ref_ms = result["sppark"]
    lines = [f"device: {result['device']}   copy {copy:.2f} TB/s (sppark ref {SPPARK_COPY_TBS})",
             f"sppark figures: {ref_ms['source']}"]

    def versus(ours: float, ref: float | None) -> str:
        return f"   sppark {ref:.3f} ms  ratio {ours / ref:.2f}" if ref else ""

    for log_n, r in (result.get("ntt") or {}).items():
        lines.append(f"ntt   2^{log_n:<3} {r['ntt']['median_ms']:9.3f} ms   "
                     f"intt {r['intt']['median_ms']:9.3f} ms"
                     + versus(r["ntt"]["median_ms"], ref_ms["ntt"].get(int(log_n))))
    for group in ("g1", "g2"):
        for suffix, label in (("", ""), ("_tables", " tables")):
            for log_n, r in (result.get(f"msm_{group}{suffix}") or {}).items():
                lines.append(f"msm {group}{label} 2^{log_n:<3} {r['median_ms']:9.2f} ms"
                             + versus(r["median_ms"], ref_ms.get(group, {}).get(int(log_n))))
    rows = [(f"{form}{label}", log_c, r)
            for form, name in (("coset", "partitions"), ("odd", "partitions_odd"))
            for suffix, label in (("", ""), ("_tables", ", window tables"))
            for log_c, r in result.get(name + suffix, {}).items()]
    for form, log_c, r in rows:
        ph = r["phases_median_ms"]
        lines.append(f"porep 2^{log_c} ({r['constraints']} c, {form} H): "
                     f"compute {r['compute_ms']:.1f} ms = "
                     f"abc {ph['abc']:.1f} + h {ph['h']:.1f} + msm_batch {ph['msm_batch']:.1f}"
                     f" (one by one {r['compute_sequential_ms']:.1f}: "
                     + " + ".join(f"{k} {v:.1f}" for k, v in ph.items() if k.startswith("msm_")
                                  and k != "msm_batch")
                     + f"); witness upload {ph['upload']:.1f} ms")
    lines += [f"ERROR {name}: {err}" for name, err in result.get("errors", {}).items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"))
    parser.add_argument("--ntt", default="16:26", help="log sizes, 'lo:hi' or 'a,b,c'")
    parser.add_argument("--g1", default="16:24")
    parser.add_argument("--g2", default="16:22")
    parser.add_argument("--partitions", default="16,20,22", help="log constraint counts")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--odd-partitions", default="",
                        help="log constraint counts to time again with the odd H form "
                             "(snarkjs keys: the groth16 proof type's prover path)")
    parser.add_argument("--table-bytes", type=int, default=0,
                        help="also time the MSMs with window tables and the partitions on a "
                             "backend with this table budget (PROOFQ_MSM_TABLE_BYTES)")
    parser.add_argument("--msm-tuning", default="",
                        help="'field=value,…': gpu.msm.MsmTuning fields for every MSM of the "
                             "run (the default tuning otherwise)")
    parser.add_argument("--sppark", default=None,
                        help="output of sppark's bench from the same run (its last line is JSON)")
    args = parser.parse_args(argv)
    ntt_logs, g1_logs, g2_logs, part_logs, odd_logs = (
        log_range(v) for v in (args.ntt, args.g1, args.g2, args.partitions,
                               args.odd_partitions))

    ok, why = gpu.available()
    if not ok:
        print(f"no GPU: {why}")
        return 2
    tuning = msm_tuning(args.msm_tuning)
    backend = gpu.get_backend(msm_tuning=tuning)
    stream = backend.stream
    dev = backend.device_id
    result = {"device": device.name(dev), "device_uuid": device.uuid(dev), "commit": commit(),
              "command": " ".join([Path(sys.argv[0]).name, *(argv or sys.argv[1:])]),
              "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "reps": args.reps, "msm_tuning": dataclasses.asdict(tuning),
              "sppark": sppark_reference(args.sppark)}

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"gpu-{dt.datetime.now(dt.timezone.utc):%Y-%m-%d-%H%M}.json"

    def section(name: str, fn):
        """Run one part and return its value; a failure is recorded (the rest still runs)."""
        try:
            return fn()
        except Exception as exc:  # a benchmark records what broke and moves on
            traceback.print_exc()
            result.setdefault("errors", {})[name] = f"{type(exc).__name__}: {exc}"
            return None

    def save() -> None:
        path.write_text(json.dumps(result, indent=1, default=str))

    def sweep(name: str, logs: list[int], fn) -> None:
        """One entry per size under ``result[name]``, saved after each."""
        result[name] = {}
        for log_n in logs:
            value = section(f"{name} 2^{log_n}", lambda log_n=log_n: fn(log_n))
            if value is not None:
                result[name][log_n] = value
            save()

    with cupy.cuda.Device(dev), stream:
        result["copy"] = section("copy", lambda: bench_copy(stream, args.reps))
        sweep("ntt", ntt_logs, lambda log_n: bench_ntt(log_n, stream, args.reps))
        try:
            for name in ("gpu.msm", "gpu.fixed_base"):
                importlib.import_module(name)
        except ImportError as exc:
            print(f"skipping MSM and partitions: {exc}")
            result["skipped"] = f"MSM and partitions: {exc}"
            g1_logs, g2_logs, part_logs, odd_logs = [], [], [], []
        shapes = [partition_shape(log_c) for log_c in part_logs + odd_logs]
        n_g1 = max([1 << max(g1_logs, default=0)] + [s for s, _ in shapes])
        n_g2 = max([1 << max(g2_logs, default=0)] + [v for _, v in shapes])
        t0 = time.perf_counter()
        partitions = part_logs or odd_logs
        g1 = section("pool_g1", lambda: point_pool(1, n_g1)) if g1_logs or partitions else None
        g2 = section("pool_g2", lambda: point_pool(2, n_g2)) if g2_logs or partitions else None
        result["point_pools"] = {"g1": n_g1, "g2": n_g2, "seconds": time.perf_counter() - t0}
        tables = [("", backend, False)]
        if args.table_bytes:
            tables.append(("_tables", gpu.get_backend(table_budget_bytes=args.table_bytes,
                                                      msm_tuning=tuning), True))
        for suffix, on, tabled in tables:
            if g1 is not None:
                sweep(f"msm_g1{suffix}", g1_logs,
                      lambda log_n, t=tabled: bench_msm(1, log_n, g1, stream, args.reps, t,
                                                        tuning))
            if g2 is not None:
                sweep(f"msm_g2{suffix}", g2_logs,
                      lambda log_n, t=tabled: bench_msm(2, log_n, g2, stream, args.reps, t,
                                                        tuning))
            if g1 is not None and g2 is not None:
                sweep(f"partitions{suffix}", part_logs,
                      lambda log_c, b=on: bench_partition(log_c, g1, g2, b, args.reps))
                sweep(f"partitions_odd{suffix}", odd_logs,
                      lambda log_c, b=on: bench_partition(log_c, g1, g2, b, args.reps,
                                                                 ODD))
    print(f"wrote {path}")
    print(table(result))
    return 0


def partition_shape(log_c: int) -> tuple[int, int]:
    """(G1 points, G2 points) a partition of ~2^log_c constraints needs from the pools."""
    inputs, aux, constraints = circuit_sizes(SECTOR, challenges_for(SECTOR, 1 << log_c))
    domain = 1 << max(1, (constraints - 1).bit_length())
    return max(inputs + aux, domain), inputs + aux


if __name__ == "__main__":
    sys.exit(main())
