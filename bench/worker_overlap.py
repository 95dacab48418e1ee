"""How well several worker processes keep one GPU busy through the memory/compute lock pair.

    python bench/worker_overlap.py                                  # GPU: 2^20, 2^22
    python bench/worker_overlap.py --backend cpu --sizes 12 --workers 1,2

For each size (log2 of the constraint count; a 2KiB porep sector with as many challenges as
fit), each worker count and each staging mode, this starts that many real
``workers.standalone`` processes on GPU 0 against an embedded redis-server; each proves one
warm-up partition (key load, resident bases) and waits for the others, so no measured
partition shares the GPU with a key upload; then ``--partitions-per-worker`` measured
partitions of the same job. Every proof is verified by the worker (its verify phase).

Modes:  prestage  inputs uploaded in the memory phase (the ledger has room)
        stream    prestage off: inputs uploaded inside the compute phase
        tight     VRAM budget = the resident keys + ONE partition: the ledger refuses most
                  pre-staging, so most partitions take the fallback path

Witness (``--witness``): ``device`` lets a backend that computes the porep witness do so
(the GPU kernel; workers upload only the compact inputs), ``cpu`` builds it in the worker.

Figures come from the ``proofq:events`` stream, over the measured window (first measured
event start → last measured event end):

    parts/min        measured partitions completed per minute
    busy             Σ compute phases (any job, clipped to the window) / window
    busy_ready       Σ compute / the time some partition was waiting for or holding compute:
                     how well the lock hand-over keeps the GPU fed when work is ready,
                     independent of how fast the CPU synthesizes
    handoff_ms       median gap between consecutive compute phases when one was waiting
    prestaged        fraction of measured partitions whose inputs were pre-staged

Keys are made once per size in a child process (``gpu.fixed_base`` on the GPU) under a
temporary params directory, so this process never touches CUDA. Prints a table and writes
``overlap-<date>.json`` to ``--out`` (default ``$OUT`` if set, else ``bench/results``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import multiprocessing as mp
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.provenance import commit  # noqa: E402

import redis  # noqa: E402

from client.embedded import EmbeddedRedis  # noqa: E402
from snark.porep.circuit import challenges_for, constraints_estimate  # noqa: E402
from snark.porep.seal import seal  # noqa: E402
from workers.telemetry import PHASES, PhaseEvent, read_events  # noqa: E402
from workers.standalone import results_key  # noqa: E402

SECTOR = 2048
MODES = ("prestage", "stream", "tight")


# -- keys (in a child: CUDA stays out of this process) ------------------------------------
def _make_key(c1_path: str, params: str, backend: str, out) -> None:
    from snark.params import load_or_setup
    from snark.porep.c1 import parse_c1
    from snark.porep.circuit import circuit_r1cs
    from workers.ledger import key_bytes, partition_bytes

    c1 = parse_c1(Path(c1_path).read_bytes())
    fixed_base = None
    if backend == "gpu":
        from gpu.fixed_base import GpuFixedBase
        fixed_base = GpuFixedBase()
    started = time.time()
    key = load_or_setup(circuit_r1cs(c1.sector_size, c1.challenges), Path(params),
                        fixed_base=fixed_base)
    out.put({"setup_s": time.time() - started, "key_bytes": key_bytes(key),
             "partition_bytes": partition_bytes(key), "domain_size": key.domain_size,
             "num_constraints": key.r1cs.num_constraints})


def make_key(c1_path: Path, params: Path, backend: str) -> dict:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_make_key, args=(str(c1_path), str(params), backend, out))
    proc.start()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"key setup failed (exit {proc.exitcode})")
    return out.get()


# -- one run ------------------------------------------------------------------------------
def run_once(url: str, c1_path: Path, params: Path, backend: str, workers: int, mode: str,
             witness: str, per_worker: int, partitions: int, key: dict, lease_s: float,
             tag: str) -> dict:
    client = redis.Redis.from_url(url)
    queue = f"bench:{tag}"
    for i in range(workers * per_worker):
        client.rpush(queue, json.dumps({"job": tag, "partition": i % partitions}))
    env = dict(os.environ, PROOFQ_BACKEND=backend, PROOFQ_PARAMS_DIR=str(params),
               PROOFQ_LOCK_LEASE_S=str(lease_s), PROOFQ_HEARTBEAT_S=str(lease_s / 6),
               PROOFQ_PRESTAGE="false" if mode == "stream" else "true",
               PROOFQ_WITNESS_ON_DEVICE="true" if witness == "device" else "false")
    if mode == "tight":  # room for the keys and one partition: no window tables in it
        env["PROOFQ_VRAM_BUDGET_BYTES"] = str(workers * key["key_bytes"] + key["partition_bytes"])
        env["PROOFQ_MSM_TABLE_BYTES"] = "0"
    else:
        env.pop("PROOFQ_VRAM_BUDGET_BYTES", None)
    procs = [subprocess.Popen([sys.executable, "-m", "workers.standalone", "--redis-url", url,
                               "--gpu", "0", "--type", "porep-demo", "--input", str(c1_path),
                               "--queue", queue,
                               "--name", f"w{i}", "--warmup", str(i % partitions),
                               "--barrier", str(workers)], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for i in range(workers)]
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"worker failed (exit {proc.returncode}):\n{err.decode()[-3000:]}")
    results = [json.loads(r) for r in client.lrange(results_key(queue), 0, -1)]
    failures = [r for r in results if "error" in r]
    events = read_events(client)
    return {"witness": witness, **summarise(events, tag, workers, mode, failures)}


def summarise(events: list[PhaseEvent], tag: str, workers: int, mode: str,
              failures: list[dict]) -> dict:
    measured = [e for e in events if e.job == tag]
    start, end = min(e.start for e in measured), max(e.end for e in measured)
    window = end - start
    computes = sorted((e for e in events if e.phase == "compute" and not e.error
                       and e.end > start and e.start < end), key=lambda e: e.start)
    busy_s = sum(_clip(e.start, e.end, start, end) for e in computes)
    ready = _union([(w.start, c.end) for w, c in _pairs(events, "compute_wait", "compute")],
                   start, end)
    gaps = [b.start - a.end for a, b in zip(computes, computes[1:])
            if _waiting_before(events, b, a.end)]
    overlaps = sum(1 for a, b in zip(computes, computes[1:]) if b.start < a.end)
    done = {(e.job, e.partition) for e in measured if e.phase == "verify" and not e.error}
    mems = [e for e in measured if e.phase == "mem" and not e.error]
    phases = {}
    for name in PHASES[1:]:  # all but queued, which standalone workers do not report
        durations = [e.seconds for e in measured if e.phase == name and not e.error]
        phases[name] = statistics.mean(durations) if durations else 0.0
    return {
        "workers": workers, "mode": mode, "partitions": len(done), "window_s": window,
        "parts_per_min": 60 * len(done) / window, "busy": busy_s / window,
        "busy_ready": busy_s / ready if ready else 0.0,
        "handoff_ms": 1000 * statistics.median(gaps) if gaps else None,
        "prestaged": sum(e.path == "prestage" for e in mems) / len(mems) if mems else 0.0,
        "compute_overlaps": overlaps, "failures": [f["error"] for f in failures],
        "phase_mean_s": phases,
    }


def _clip(s: float, e: float, lo: float, hi: float) -> float:
    return max(0.0, min(e, hi) - max(s, lo))


def _union(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Length of the union of the intervals, clipped to [lo, hi]."""
    total, reach = 0.0, lo
    for s, e in sorted(intervals):
        s, e = max(s, reach), min(e, hi)
        if e > s:
            total += e - s
            reach = e
    return total


def _pairs(events: list[PhaseEvent], first: str, second: str):
    """(first, second) events of the same partition attempt, matched by worker and order."""
    by_worker: dict[str, list[PhaseEvent]] = {}
    for e in sorted(events, key=lambda e: e.start):
        if e.phase in (first, second) and not e.error:
            by_worker.setdefault(e.worker, []).append(e)
    for seq in by_worker.values():
        for a, b in zip(seq, seq[1:]):
            same_partition = (a.job, a.partition) == (b.job, b.partition)
            if a.phase == first and b.phase == second and same_partition:
                yield a, b


def _waiting_before(events: list[PhaseEvent], compute: PhaseEvent, t: float) -> bool:
    """Was ``compute``'s partition already queued for the compute lock at time ``t``?"""
    return any(e.phase == "compute_wait" and e.worker == compute.worker
               and (e.job, e.partition) == (compute.job, compute.partition)
               and e.start <= t <= e.end for e in events)


# -- driver -------------------------------------------------------------------------------
def table(rows: list[dict]) -> str:
    head = (f"{'size':>5} {'constr':>9} {'W':>2} {'mode':>8} {'witness':>7} {'parts':>5} "
            f"{'parts/min':>9} "
            f"{'busy':>6} {'busy_rdy':>8} {'handoff':>8} {'staged':>6} {'synth_s':>8} "
            f"{'compute_s':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        handoff = f"{r['handoff_ms']:.1f}ms" if r["handoff_ms"] is not None else "-"
        lines.append(
            f"2^{r['log2']:<3} {r['constraints']:>9} {r['workers']:>2} {r['mode']:>8} "
            f"{r.get('witness', 'cpu'):>7} "
            f"{r['partitions']:>5} {r['parts_per_min']:>9.2f} {r['busy']:>6.1%} "
            f"{r['busy_ready']:>8.1%} {handoff:>8} {r['prestaged']:>6.0%} "
            f"{r['phase_mean_s']['synthesize']:>8.2f} {r['phase_mean_s']['compute']:>9.3f}")
    return "\n".join(lines)


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--sizes", default="20,22", help="log2 constraint counts, e.g. 20,22")
    parser.add_argument("--workers", default="1,2,3", help="worker process counts")
    parser.add_argument("--modes", default=",".join(MODES), help="prestage,stream,tight")
    parser.add_argument("--witness", default=None,
                        help="device,cpu: where workers build the witness (default: device "
                             "on the GPU backend, cpu on the CPU backend)")
    parser.add_argument("--partitions-per-worker", type=int, default=3)
    parser.add_argument("--lease-s", type=float, default=30.0)
    parser.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if unknown := set(modes) - set(MODES):
        parser.error(f"--modes: unknown {sorted(unknown)} (choose from {', '.join(MODES)})")
    witnesses = [w for w in (args.witness or {"gpu": "device", "cpu": "cpu"}[args.backend])
                 .split(",") if w]
    if unknown := set(witnesses) - {"device", "cpu"}:
        parser.error(f"--witness: unknown {sorted(unknown)} (choose from device, cpu)")
    if args.backend == "cpu" and "device" in witnesses:
        parser.error("--witness device: the CPU backend has no device witness")
    worker_counts = _ints(args.workers)
    partitions = max(worker_counts) * (args.partitions_per_worker + 1)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"overlap-{dt.datetime.now(dt.timezone.utc):%Y-%m-%d-%H%M}.json"
    rows: list[dict] = []
    keys: dict[int, dict] = {}

    def save() -> None:
        """Rewritten after every run, so a run cut short by a time limit still reports."""
        path.write_text(json.dumps({
            "bench": "worker_overlap", "backend": args.backend, "host": platform.node(),
            "cpus": os.cpu_count(), "commit": commit(), "argv": sys.argv[1:],
            "sector_size": SECTOR, "keys": keys, "runs": rows, "table": table(rows)},
            indent=1))

    with tempfile.TemporaryDirectory(prefix="proofq-overlap-") as tmp, EmbeddedRedis() as server:
        for log2 in _ints(args.sizes):
            k = challenges_for(SECTOR, 1 << log2)
            c1_path = Path(tmp) / f"c1-{log2}.json"
            started = time.time()
            c1_path.write_text(seal(SECTOR, partitions, k).to_json())
            print(f"2^{log2}: K={k}, {constraints_estimate(SECTOR, k)} constraints, "
                  f"{partitions} partitions sealed in {time.time() - started:.1f}s", flush=True)
            keys[log2] = key = make_key(c1_path, Path(tmp) / "params", args.backend)
            print(f"2^{log2}: key ready in {key['setup_s']:.1f}s "
                  f"({key['key_bytes'] / 2**20:.1f} MiB resident, "
                  f"{key['partition_bytes'] / 2**20:.1f} MiB per partition)", flush=True)
            for witness, workers, mode in itertools.product(witnesses, worker_counts, modes):
                tag = f"{log2}-{workers}-{mode}-{witness}"
                row = run_once(server.url, c1_path, Path(tmp) / "params", args.backend,
                               workers, mode, witness, args.partitions_per_worker,
                               partitions, key, args.lease_s, tag)
                row.update(log2=log2, constraints=key["num_constraints"])
                rows.append(row)
                save()
                print(table([row]).splitlines()[-1], flush=True)

    print("\n" + table(rows))
    print(f"wrote {path}")
    return 1 if any(r["compute_overlaps"] or r["failures"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
