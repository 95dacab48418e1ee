"""A Filecoin sector through real worker processes that share one GPU and one key (issue 24).

    python bench/filecoin_sector.py --size 32GiB --workers 3,2 [--params DIR] [--out DIR]
    python bench/filecoin_sector.py --size 2KiB --workers 2 --backend cpu    # a dry run

Set up once, in this process: the partition circuit's R1CS; a *timing key* (bases of the
right counts drawn from 2^20 random points, ``filecoin_gpu.timing_key``: its proofs do not
verify) saved where a worker finds the development key (``--params``, tmpfs by default);
a sparse test sector's C1. The key is made resident by the GPU's keeper
(``gpu.shared_keys``) and held by this process between rounds.

Each round, for a worker count N: N ``python -m workers.standalone`` processes (the runtime a
Celery worker runs: the lock pair, the VRAM ledger, the shared key, the device witness)
against an embedded Redis; one warm-up partition each (the key's files hashed, the key
opened from the keeper, the witness plan and its tapes), then the sector's partitions
queued at once and timed to the last outcome. Every proof is checked by its worker; under a
timing key every check fails, and the record says so (``verified``).

Per round: ``sector_wall_s`` (queueing the partitions → the last outcome), the compute
phases (``partition_gpu_s``: their median; ``gpu_busy``: their sum over the window from the
first compute's start to the last one's end), and memory with the workers idle: the
device's used bytes over the key's (``gpu_key_copies``: its floor), the host's key files
(tmpfs) and every process's private bytes (``host_key_copies``: the floor of their sum over
the key's bytes). Prints a table and writes ``filecoin-sector-<size>-<date>.json`` and the issue's
``filecoin-32gib-<date>-sector.json`` to ``--out``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from filecoin_gpu import sector, timing_key  # noqa: E402
from provenance import commit  # noqa: E402

import redis  # noqa: E402

from client.embedded import EmbeddedRedis  # noqa: E402
from snark.filecoin import registered_proof  # noqa: E402
from snark.filecoin.c1_write import phase1_json  # noqa: E402
from snark.filecoin.circuit import StackedShape, circuit_r1cs  # noqa: E402
from snark.filecoin.job import filecoin_envelope  # noqa: E402
from snark.filecoin.registered_proofs import key_stem  # noqa: E402
from snark.keys import ProvingKey  # noqa: E402
from workers.ledger import key_bytes  # noqa: E402
from workers.phase_events import read_events  # noqa: E402
from workers.standalone import results_key  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ROUND_TIMEOUT_S = 300


def step(name: str, fn):
    start = time.perf_counter()
    out = fn()
    seconds = time.perf_counter() - start
    print(f"{name}: {seconds:.1f} s", flush=True)
    return out, round(seconds, 1)


def set_up(size: str, params: Path, seed: int, fixed_base) -> tuple[Path, Path, dict]:
    """The timing key under ``params`` (as the development key) and the C1 job file."""
    rng = np.random.default_rng(seed)
    proof = registered_proof(f"StackedDrg{size}V1_1")
    r1cs, r1cs_s = step("R1CS", partial(circuit_r1cs, StackedShape.of(proof)))
    key, key_s = step("timing key", partial(timing_key, r1cs, rng, fixed_base,
                                            circuit_id=key_stem(proof, "development")))
    directory, save_s = step("key saved", partial(key.save, params))
    del key, r1cs  # ~20 GB of host memory the workers need
    gc.collect()
    c1, c1_s = step("sparse sector", lambda: sector(size, rng))
    job = params.parent / f"job-{size}.json"
    job.write_bytes(filecoin_envelope(phase1_json(c1), "development"))
    return directory, job, {"r1cs_s": r1cs_s, "key_s": key_s, "key_save_s": save_s,
                            "c1_s": c1_s, "partitions": proof.partitions}


def spawn(url: str, params: Path, job: Path, queue: str, name: str,
          backend: str) -> subprocess.Popen:
    env = dict(os.environ, PROOFQ_BACKEND=backend, PROOFQ_PARAMS_DIR=str(params),
               PROOFQ_FILECOIN_KEY="development")
    return subprocess.Popen(
        [sys.executable, "-m", "workers.standalone", "--redis-url", url, "--gpu", "0",
         "--type", "filecoin", "--input", str(job), "--queue", queue, "--name", name,
         "--linger", str(ROUND_TIMEOUT_S)], cwd=ROOT, env=env)


class RoundFailed(RuntimeError):
    """A round that did not finish: recorded, and the next round still runs."""


def wait_for(client: redis.Redis, queue: str, count: int, procs: list) -> list[dict]:
    deadline = time.monotonic() + ROUND_TIMEOUT_S
    while (done := client.llen(results_key(queue))) < count:
        dead = [p.pid for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            raise RoundFailed(f"{queue}: {done} of {count} outcomes; workers exited: {dead}")
        time.sleep(0.02)
    return [json.loads(r) for r in client.lrange(results_key(queue), 0, -1)]


def device_memory() -> tuple[int, dict[int, int]]:
    """The device's used bytes and each process's (nvidia-smi: read with the workers idle,
    in the bench, never on a worker's path)."""
    def query(what: str) -> list[list[str]]:
        out = subprocess.run(["nvidia-smi", f"--query-{what}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, check=True).stdout
        return [[f.strip() for f in line.split(",")] for line in out.splitlines() if line]

    used = int(query("gpu=memory.used")[0][0]) << 20
    return used, {int(pid): int(mib) << 20 for pid, mib in query("compute-apps=pid,used_memory")}


def host_private_bytes(pid: int) -> int:
    """A process's private anonymous memory (RssAnon): what it holds that no other does."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) << 10
    return 0


def one_round(client: redis.Redis, url: str, params: Path, job: Path, workers: int,
              partitions: int, key: ProvingKey, key_file_bytes: int, holder) -> dict:
    """A round of ``workers`` processes; ``holder``: this process's GPU backend holding
    ``key`` (None: a CPU dry run, no device figures)."""
    queue = f"sector:{workers}"
    client.delete(queue, results_key(queue))
    procs = [spawn(url, params, job, queue, f"w{workers}.{i}", "gpu" if holder else "cpu")
             for i in range(workers)]
    try:
        for i in range(workers):
            client.rpush(queue, json.dumps({"job": f"warm-{workers}", "partition": i % partitions}))
        _, warm_s = step(f"{workers} workers warmed up", lambda: wait_for(
            client, queue, workers, procs))
        started = time.time()
        for p in range(partitions):
            client.rpush(queue, json.dumps({"job": f"sector-{workers}", "partition": p}))
        outcomes = wait_for(client, queue, workers + partitions, procs)[workers:]
        wall = time.time() - started
        memory = idle_memory(procs, key, holder, key_file_bytes)
        for _ in procs:
            client.rpush(queue, json.dumps({"stop": True}))
        for proc in procs:
            proc.wait(timeout=120)
    finally:
        for proc in procs:
            proc.kill()
    events = [e for e in read_events(client, job=f"sector-{workers}") if e.phase == "compute"]
    computes = sorted((e.start, e.end) for e in events if not e.error)
    window = computes[-1][1] - computes[0][0] if computes else 0.0
    errors = sorted({o.get("error", "").split(":")[0] for o in outcomes if "error" in o})
    return {
        "workers": workers, "warmup_s": warm_s, "sector_wall_s": round(wall, 2),
        "partitions": partitions, "proofs": sum("proof" in o for o in outcomes),
        "verified": False, "outcome_errors": errors,
        "partition_gpu_s": round(statistics.median(e - s for s, e in computes), 3)
        if computes else None,
        "compute_s": [round(e - s, 3) for s, e in computes],
        "gpu_busy": round(sum(e - s for s, e in computes) / window, 3) if window else None,
        **memory,
    }


def idle_memory(procs: list, key: ProvingKey, holder, key_file_bytes: int) -> dict:
    """Memory with the workers idle: the device's over the key's device bytes, and the
    key's files plus every process's private bytes over the files' bytes (each floored:
    1 means one copy)."""
    pids = [p.pid for p in procs]
    figures = {}
    if holder is not None:
        key_device_bytes = key_bytes(key) + holder.extra_resident_bytes(key)
        used, by_pid = device_memory()
        pids.append(holder.shared_keys.status()["pid"])  # the keeper
        figures = {"key_device_bytes": key_device_bytes, "device_used_bytes_idle": used,
                   "device_used_by_pid": by_pid, "gpu_key_copies": used // key_device_bytes}
    private = {pid: host_private_bytes(pid) for pid in pids}
    return dict(figures, host_private_bytes_by_pid=private,
                host_key_copies=(key_file_bytes + sum(private.values())) // key_file_bytes)


def write(out: Path, stamp: str, size: str, common: dict, setup: dict, rows: list) -> None:
    """The record so far, and for 32 GiB the issue's goal records."""
    record = {"date": stamp, **common, "setup": setup, "rounds": rows}
    (out / f"filecoin-sector-{size}-{stamp}.json").write_text(json.dumps(record, indent=1))
    if size == "32GiB":
        goals = [dict(common, **row) for row in rows]
        (out / f"filecoin-32gib-{stamp}-sector.json").write_text(json.dumps(goals, indent=1))


def device_name(holder) -> str:
    if holder is None:
        return "cpu"
    from gpu import device

    return device.name(holder.device_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="32GiB")
    parser.add_argument("--workers", default="3,2", help="worker counts, one round each")
    parser.add_argument("--params", type=Path, default=Path("/dev/shm/proofq-sector/params"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backend", choices=("gpu", "cpu"), default="gpu",
                        help="cpu: a dry run of the whole bench without a GPU")
    parser.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench/results"))
    args = parser.parse_args()
    if args.backend == "gpu":
        import gpu
        from gpu.fixed_base import GpuFixedBase

        fixed_base, holder = GpuFixedBase(), gpu.get_backend(0, None, share_keys=True)
    else:
        from snark.groth16 import CpuFixedBase

        fixed_base, holder = CpuFixedBase(), None
    directory, job, setup = set_up(args.size, args.params, args.seed, fixed_base)
    key = ProvingKey.load(directory, verify_hashes=False)
    if holder is not None:  # held here between rounds, with the workers' settings
        _, setup["key_resident_s"] = step("key resident (keeper)", lambda: holder.prepare(key))
    key_file_bytes = sum(f.stat().st_size for f in directory.iterdir())
    stamp = time.strftime("%Y-%m-%d-%H%M", time.gmtime())
    common = {"device": device_name(holder), "commit": commit(), "command": " ".join(sys.argv),
              "registered_proof": f"StackedDrg{args.size}V1_1",
              "key": "timing key (random bases): proofs computed, none can verify",
              "key_file_bytes": key_file_bytes}
    embedded = EmbeddedRedis().start()
    rows = []
    try:
        client = redis.Redis.from_url(embedded.url)
        for workers in (int(w) for w in args.workers.split(",") if w):
            try:
                row = one_round(client, embedded.url, args.params, job, workers,
                                setup["partitions"], key, key_file_bytes, holder)
            except RoundFailed as exc:
                row = {"workers": workers, "failed": str(exc), "sector_wall_s": None}
            rows.append(dict(row, mode="resident", budget_bytes=None))
            print(json.dumps({k: v for k, v in row.items() if "by_pid" not in k}), flush=True)
            write(Path(args.out), stamp, args.size, common, setup, rows)  # each round kept
    finally:
        embedded.stop()
        if holder is not None:
            holder.evict(key)
    print(f"{'workers':>7} {'sector s':>9} {'partition s':>12} {'busy':>6} {'gpu copies':>11} "
          f"{'host copies':>12}")
    for r in rows:
        print(f"{r['workers']:>7} {r['sector_wall_s']!s:>9} {r.get('partition_gpu_s')!s:>12} "
              f"{r.get('gpu_busy')!s:>6} {r.get('gpu_key_copies', '-')!s:>11} "
              f"{r.get('host_key_copies')!s:>12}")


if __name__ == "__main__":
    main()
