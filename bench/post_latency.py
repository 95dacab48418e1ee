"""PoSt on time under PoRep load: WinningPoSt and WindowPoSt request → verified proof while
real workers keep a GPU busy with PoRep partitions (issue #41 item 5).

    python bench/post_latency.py --gpu 0 -c 3 --critical-slots 1 --post-size 32GiB \\
        --post-key official --porep-type filecoin --c1 c1.json --params DIR
    python bench/post_latency.py --backend cpu -c 2 --critical-slots 1 --winning 3 \\
        --idle-winning 1 --window 1 --partitions 2 --out /tmp     # the CPU stand-in

1. Keys: the PoRep key as ``bench/scale.py`` makes it (porep-demo's, or Filecoin's
   development key), the PoSt keys of ``--post-size`` (development keys made here, or
   Filecoin's official ones converted by the worker at first use: ``--post-key official``).
   PoSt requests are Curio's fields (``snark.filecoin.post.job.curio_request``, what the gRPC
   door turns them into) over sparse test sectors of the size, made before anything is timed.
2. One ``celery -A tasks worker [--gpu N] -c C --critical-slots S`` on one Redis.
3. Idle: ``--idle-winning`` WinningPoSt requests one after the other, nothing else running.
4. Load: PoRep jobs kept ``--porep-in-flight`` unfinished (every general process busy, a
   backlog queued) while ``--winning`` WinningPoSt requests go one after the other (a pause
   of ``--interval`` s between) and ``--window`` WindowPoSt requests beside them, as Curio
   sends them: critical and high priority through ``Client.submit``.

Each PoSt figure is request → verified proof: the producer's submit plus the job's time
from stored to finished (Redis's clock: the worker verified the proof before it finished
the job); each proof is verified here again afterwards. Per request, from the worker's
phase events: waiting for a process (``queued``), for the locks, the compute phase (GPU
time) and the rest. PoRep: jobs done and failed, partitions a minute with and without the
PoSt load beside (``--baseline-jobs``), and the PoSt compute that made room.

Prints p50/p99 and writes ``post-latency-<date>.json`` (date, device, commit, command,
figures) to ``--out`` (default ``$OUT`` or ``bench/results``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import math
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import redis  # noqa: E402

from bench.provenance import commit  # noqa: E402
from bench.scale import (FILECOIN_C1, _make_key, device_name, filecoin_c1, job_input,  # noqa: E402
                         seal_porep)
from client.api import Client, JobError  # noqa: E402
from client.embedded import EmbeddedRedis  # noqa: E402
from client.local_cluster import WorkerProcess, settings_env, worker_command  # noqa: E402
from config.settings import load_model, load_settings  # noqa: E402
from snark.porep.c1 import parse_size  # noqa: E402
from workers.telemetry import read_events  # noqa: E402

WORKER_START_S = 900.0
RESULT_WAIT_S = 900.0
MINER = 1000
#: Go's registered-proof numbers: WinningPoSt V1 and WindowPoSt V1_1, by sector size.
POST_IDS = {"winning": {"2KiB": 0, "8MiB": 1, "512MiB": 2, "32GiB": 3, "64GiB": 4},
            "window": {"2KiB": 10, "8MiB": 11, "512MiB": 12, "32GiB": 13, "64GiB": 14}}
PROOF_KIND = {"window": 3, "winning": 4}
PRIORITY = {"winning": "critical", "window": "high"}  # the gRPC door's defaults


# -- requests and keys --------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """One PoSt request: Curio's fields, and the job the gRPC door makes of them."""

    kind: str
    fields: tuple  # curio_request's positional arguments
    sector_size: int
    proof_type: str
    text: str

    def grpc(self, request_id: str):
        from client.cuzk import proving_pb2 as pb

        proof_kind, registered, vanilla, randomness, miner, partition = self.fields[:6]
        return pb.SubmitProofRequest(request_id=request_id, proof_kind=proof_kind,
                                     sector_size=self.sector_size, registered_proof=registered,
                                     vanilla_proofs=vanilla, miner_id=miner,
                                     randomness=randomness, partition_index=partition)


def post_requests(kind: str, size: str, count: int, key: str, rng: np.random.Generator,
                  window_sectors: int) -> list[Request]:
    """``count`` requests of ``kind`` over fresh sparse sectors."""
    from snark.filecoin.post.generate import sparse_proofs
    from snark.filecoin.post.job import curio_request
    from snark.filecoin.post.registered_proofs import post_proof
    from snark.filecoin.post.vanilla import encode

    proof = post_proof(POST_IDS[kind][size])
    sectors = 1 if kind == "winning" else min(window_sectors, proof.sector_count)
    out = []
    for _ in range(count):
        randomness = bytearray(rng.bytes(32))
        randomness[31] &= 0x3F  # as Curio masks it
        ids = [int(i) for i in rng.integers(1, 1 << 40, sectors)]
        vanilla = encode(sparse_proofs(proof, rng, ids, bytes(randomness)))
        fields = (PROOF_KIND[kind], proof.go_id, vanilla, bytes(randomness), MINER, 0, key)
        out.append(Request(kind, fields, proof.sector_size, *curio_request(*fields)))
    return out


def _make_post_keys(texts: list[str], params: str, backend: str, out) -> None:
    """Child: the development keys of the requests' circuits (CUDA stays out of the
    driver)."""
    from snark.filecoin.post.job import parse_post_job
    from snark.filecoin.post.worker import PostWorker
    from snark.filecoin.settings import FilecoinSettings
    from snark.proof_types import Storage
    from workers.backend_choice import fixed_base_for, make_backend

    started = time.time()
    fixed_base = fixed_base_for(make_backend(backend))
    worker = PostWorker(Storage(Path(params)), FilecoinSettings(key="development"))
    for text in texts:
        worker.make_key(parse_post_job(text, None, max_bytes=1 << 30), fixed_base=fixed_base)
    out.put({"post_setup_s": time.time() - started})


def _child(target, *args) -> dict:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, out))
    proc.start()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"{target.__name__} failed (exit {proc.exitcode})")
    return out.get()


# -- figures ------------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float | None:
    """Nearest rank: the smallest value with at least ``q`` of them at or below it (p99
    of fewer than 100 values is their maximum)."""
    if not values:
        return None
    ranked = sorted(values)
    return ranked[max(0, math.ceil(q * len(ranked)) - 1)]


def summary(rows: list[dict]) -> dict:
    latencies = [r["latency_s"] for r in rows if r["ok"]]
    computes = [r["phases"].get("compute", 0.0) for r in rows if r["ok"]]
    return {"requests": len(rows), "failed": sum(not r["ok"] for r in rows),
            "p50_s": percentile(latencies, 0.50), "p99_s": percentile(latencies, 0.99),
            "max_s": max(latencies, default=None),
            "compute_median_s": statistics.median(computes) if computes else None}


def _phases(client: redis.Redis, job: str) -> dict[str, float]:
    """Seconds per phase of the job's (one) partition, from the workers' events."""
    seconds: dict[str, float] = {}
    for event in read_events(client, job=job):
        seconds[event.phase] = seconds.get(event.phase, 0.0) + event.seconds
    return seconds


class Door:
    """How requests reach the service: ``Client.submit`` at the priority the gRPC door
    would give (``service``), or the door itself (``grpc``: ``SubmitProof`` then
    ``AwaitProof``, the priority left to the door, as Curio leaves it)."""

    def __init__(self, client: Client, stub=None) -> None:
        self.client = client
        self.stub = stub

    def prove(self, request: Request) -> tuple[str, float, bytes | None, str]:
        """(job, the submit's seconds, the proof or None, the error)."""
        started = time.perf_counter()
        if self.stub is None:
            job = self.client.submit(request.text, proof_type=request.proof_type,
                                     priority=PRIORITY[request.kind])
            accept_s = time.perf_counter() - started
            try:
                return job, accept_s, self.client.result(job, RESULT_WAIT_S), ""
            except (JobError, TimeoutError) as exc:
                return job, accept_s, None, str(exc)[:300]
        from client.cuzk import proving_pb2 as pb

        job = self.stub.SubmitProof(request.grpc(f"bench-{os.urandom(8).hex()}"),
                                    timeout=RESULT_WAIT_S).job_id
        accept_s = time.perf_counter() - started
        reply = self.stub.AwaitProof(pb.AwaitProofRequest(job_id=job), timeout=RESULT_WAIT_S)
        if reply.status != pb.AwaitProofResponse.COMPLETED:
            return job, accept_s, None, f"{reply.status}: {reply.error_message}"[:300]
        return job, accept_s, reply.proof, ""


def timed(door: Door, request: Request, texts: dict[str, str]) -> dict:
    """One request, submit to verified proof (its text kept in ``texts`` by job)."""
    started = time.perf_counter()
    job, accept_s, proof, error = door.prove(request)
    texts[job] = request.text
    client = door.client
    row = {"kind": request.kind, "job": job, "ok": proof is not None, "accept_s": accept_s,
           "error": error}
    if proof is not None:
        row["proof"] = proof.hex()
    row["wall_s"] = time.perf_counter() - started
    state = client.status(job)
    if state.finished is not None:
        row["latency_s"] = accept_s + state.finished - state.created
    row["phases"] = _phases(client.store.redis, job)
    return row


def verify(rows: list[dict], requests: dict[str, str], params: Path) -> None:
    """Every proof verified here again (nothing timed): the statement of its request."""
    from snark.filecoin.params import verifying_key_for
    from snark.filecoin.post.job import parse_post_job
    from snark.filecoin.post.prove import Partition, verify_partition
    from snark.filecoin.settings import FilecoinSettings

    official_dir = load_model(FilecoinSettings).params_dir

    for row in rows:
        if not row["ok"]:
            continue
        job = parse_post_job(requests[row["job"]], None, max_bytes=1 << 30)
        vk = verifying_key_for(job.proof, job.key or "official", params, official_dir)
        partition = Partition(job.sectors, job.randomness, job.partition_index)
        row["verified"] = verify_partition(partition, vk, bytes.fromhex(row.pop("proof")))
        if not row["verified"]:
            row.update(ok=False, error="the proof does not verify")


# -- PoRep load ---------------------------------------------------------------------------
class PorepLoad:
    """PoRep jobs kept ``in_flight`` unfinished on a thread until stopped."""

    def __init__(self, url: str, c1_path: Path, in_flight: int) -> None:
        self.raw, self.proof_type = job_input(c1_path)
        self.client = Client(url, load_settings(redis_url=url))
        self.in_flight = in_flight
        self.done: list[tuple[float, float]] = []  # (created, finished), Redis clock
        self.failed: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "PorepLoad":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.client.close()

    def run_for(self, jobs: int) -> None:
        """Until ``jobs`` jobs have ended (the baseline)."""
        while len(self.done) + len(self.failed) < jobs:
            time.sleep(0.2)

    def _run(self) -> None:
        pending: list[str] = []
        while True:
            for job in list(pending):
                state = self.client.status(job)
                if state.terminal:
                    pending.remove(job)
                    if state.status == "done":
                        self.done.append((state.created, state.finished))
                    else:
                        self.failed.append(f"{job}: {state.status} {state.error}")
            if self._stop.is_set():
                if not pending:
                    return
            else:
                while len(pending) < self.in_flight:
                    pending.append(self.client.submit(self.raw, proof_type=self.proof_type))
            time.sleep(0.2)

    def per_min(self, since: float, until: float) -> float | None:
        """Jobs a minute that ended within the window."""
        ended = [f for _, f in self.done if since <= f <= until]
        return 60 * len(ended) / (until - since) if until > since and ended else None


def redis_now(client: redis.Redis) -> float:
    seconds, micros = client.time()
    return seconds + micros / 1e6


# -- the driver ---------------------------------------------------------------------------
def sequence(door: Door, requests: list[Request], interval: float, rows: list[dict],
             texts: dict[str, str]) -> None:
    for request in requests:
        rows.append(timed(door, request, texts))
        time.sleep(interval)


@contextlib.contextmanager
def doors(url: str, via: str, env: dict[str, str]):
    """Two doors (the WinningPoSt sequence's and the WindowPoSt one's beside it), each with
    its own client; through one ``proofq grpc`` process for ``grpc``."""
    settings = load_settings(redis_url=url)
    with Client(url, settings) as one, Client(url, settings) as two:
        if via == "service":
            yield Door(one), Door(two)
            return
        from bench.grpc_gateway import grpc_door

        with grpc_door(env) as stub:
            yield Door(one, stub), Door(two, stub)


def run(args, tmp: Path) -> dict:
    params = args.params or tmp / "params"
    backend = "cpu" if args.gpu is None else args.backend
    rng = np.random.default_rng(args.seed)
    # the first of each kind warms its key (made resident, converted at first use)
    winning = post_requests("winning", args.post_size, 1 + args.idle_winning + args.winning,
                            args.post_key, rng, args.window_sectors)
    window = post_requests("window", args.post_size, args.window, args.post_key, rng,
                           args.window_sectors)
    result: dict = {"via": args.via, "post_size": args.post_size, "post_key": args.post_key,
                    "porep_type": args.porep_type, "concurrency": args.concurrency,
                    "critical_slots": args.critical_slots, "seed": args.seed}
    if args.porep_type == "filecoin":
        c1_path = tmp / FILECOIN_C1
        result["porep_shape"] = filecoin_c1(args.c1, c1_path, args.sector_size)
    else:
        c1_path = tmp / "c1.json"
        shape = {"sector_size": parse_size(args.sector_size), "partitions": args.partitions,
                 "challenges": args.challenges}
        shape["circuit"] = seal_porep(shape["sector_size"], args.partitions, args.challenges,
                                      c1_path)
        result["porep_shape"] = shape
    result["porep_key"] = _child(_make_key, result["porep_shape"], str(params), backend)
    if args.post_key == "development":
        result.update(_child(_make_post_keys, [winning[0].text, *(r.text for r in window[:1])],
                             str(params), backend))
    # the CPU stand-in's processes share one lock pair and ledger, as a GPU's do
    settings = load_settings(params_dir=params, backend=backend,
                             cpu_devices=1 if args.gpu is None else None)
    with EmbeddedRedis() as server:
        env = {**settings_env(settings), "PROOFQ_REDIS_URL": server.url,
               "PROOFQ_FILECOIN_KEY": args.post_key}
        command = worker_command(gpu=args.gpu, concurrency=args.concurrency, node="post@%h")
        command += ["--critical-slots", str(args.critical_slots)]
        worker = WorkerProcess(server.url, command, log_dir=tmp, env=env).start()
        texts: dict[str, str] = {}
        try:
            with doors(server.url, args.via, env) as (door, beside_door):
                client = door.client
                worker.wait_ready(client.app, WORKER_START_S, node="post@%h")
                # warm: every key loaded and resident (a WinningPoSt, a WindowPoSt, a PoRep
                # job), so that no figure below includes a key's first load
                warm = [timed(door, request, texts) for request in [winning[0], *window[:1]]]
                with PorepLoad(server.url, c1_path, 1) as load:
                    load.run_for(1)
                idle: list[dict] = []
                winning = winning[1:]
                sequence(door, winning[:args.idle_winning], args.interval, idle, texts)
                with PorepLoad(server.url, c1_path, args.porep_in_flight) as load:
                    base_from = redis_now(client.store.redis)
                    load.run_for(args.baseline_jobs)
                    base_until = redis_now(client.store.redis)
                    rows: list[dict] = []
                    window_rows: list[dict] = []
                    beside = threading.Thread(target=sequence, args=(
                        beside_door, window, args.interval * 3, window_rows, texts))
                    beside.start()
                    sequence(door, winning[args.idle_winning:], args.interval, rows, texts)
                    beside.join()
                    load_until = redis_now(client.store.redis)
                verify(warm + idle + rows + window_rows, texts, params)
                events = read_events(client.store.redis)
        finally:
            if not worker.alive():
                result["worker_log_tail"] = worker.log_tail(40)
            worker.stop(graceful=False)
    post_jobs = {r["job"] for r in rows + window_rows}
    post_compute = sum(e.seconds for e in events if e.job in post_jobs and e.phase == "compute")
    porep_computes = [e.seconds for e in events if e.phase == "compute"
                      and e.job not in post_jobs and e.job not in texts]
    result.update({
        "winning_idle": summary(idle), "winning_under_load": summary(rows),
        "window_under_load": summary(window_rows), "warm": summary(warm),
        "porep": {"jobs_done": len(load.done), "jobs_failed": load.failed,
                  "per_min_alone": load.per_min(base_from, base_until),
                  "per_min_beside_post": load.per_min(base_until, load_until),
                  "compute_median_s": statistics.median(porep_computes)
                  if porep_computes else None,
                  "post_compute_s": post_compute, "post_window_s": load_until - base_until},
        "requests": [{k: v for k, v in r.items() if k != "proof"}
                     for r in warm + idle + rows + window_rows]})
    return result


def _line(name: str, figures: dict) -> str:
    def s(value) -> str:
        return "-" if value is None else f"{value:.3f}"
    return (f"{name:24} {figures['requests']:>4} {figures['failed']:>6} {s(figures['p50_s']):>8} "
            f"{s(figures['p99_s']):>8} {s(figures['max_s']):>8} "
            f"{s(figures['compute_median_s']):>9}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpu", type=int, default=None, help="GPU N (none: the CPU stand-in)")
    parser.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    parser.add_argument("--via", choices=("service", "grpc"), default="service",
                        help="Client.submit, or Curio's way: the gRPC door (proofq grpc)")
    parser.add_argument("--concurrency", "-c", type=int, default=3)
    parser.add_argument("--critical-slots", type=int, default=1)
    parser.add_argument("--post-size", choices=sorted(POST_IDS["winning"]), default="2KiB")
    parser.add_argument("--post-key", choices=("development", "official"),
                        default="development")
    parser.add_argument("--winning", type=int, default=20, help="WinningPoSt under load")
    parser.add_argument("--idle-winning", type=int, default=5, help="WinningPoSt, idle GPU")
    parser.add_argument("--window", type=int, default=3, help="WindowPoSt under load")
    parser.add_argument("--window-sectors", type=int, default=1,
                        help="sectors in a WindowPoSt request (the circuit is the same)")
    parser.add_argument("--interval", type=float, default=1.0,
                        help="seconds between one WinningPoSt's proof and the next request")
    parser.add_argument("--porep-type", choices=("porep-demo", "filecoin"), default="porep-demo")
    parser.add_argument("--c1", type=Path, default=None, help="filecoin: a Curio c1.json")
    parser.add_argument("--sector-size", default="2KiB",
                        help="the PoRep sectors' size (filecoin: of the test C1 made when "
                             "--c1 is not given)")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--challenges", type=int, default=1)
    parser.add_argument("--porep-in-flight", type=int, default=None,
                        help="PoRep jobs unfinished at once (default: -c + 1)")
    parser.add_argument("--baseline-jobs", type=int, default=2,
                        help="PoRep jobs timed alone before the PoSt requests")
    parser.add_argument("--params", type=Path, default=None,
                        help="the keys' params directory, a missing key made there first "
                             "(default: a temporary one)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    args = parser.parse_args(argv)
    args.seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    args.porep_in_flight = args.porep_in_flight or args.concurrency + 1
    print(f"seed {args.seed}", flush=True)
    now = dt.datetime.now(dt.timezone.utc)
    with tempfile.TemporaryDirectory(prefix="proofq-post-") as tmp:
        result = run(args, Path(tmp))
    record = {"bench": "post_latency", "date": now.isoformat(timespec="seconds"),
              "device": device_name() if args.gpu is not None else
              f"CPU stand-in ({os.cpu_count()} CPUs)",
              "commit": commit(), "command": " ".join(["python", *sys.argv]),
              "load_average": os.getloadavg(), **result}
    print(f"\n{'request → verified proof':24} {'n':>4} {'failed':>6} {'p50 s':>8} {'p99 s':>8} "
          f"{'max s':>8} {'compute s':>9}")
    for name, key in (("WinningPoSt, idle", "winning_idle"),
                      ("WinningPoSt, PoRep load", "winning_under_load"),
                      ("WindowPoSt, PoRep load", "window_under_load")):
        print(_line(name, result[key]))
    porep = result["porep"]
    print(f"PoRep: {porep['jobs_done']} jobs done, {len(porep['jobs_failed'])} failed; "
          f"{porep['per_min_alone'] or 0:.2f} jobs/min alone, "
          f"{porep['per_min_beside_post'] or 0:.2f} beside PoSt (PoSt compute "
          f"{porep['post_compute_s']:.2f} s of {porep['post_window_s']:.1f} s)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"post-latency-{now:%Y-%m-%d-%H%M}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {path}")
    failed = any(result[k]["failed"] for k in ("winning_idle", "winning_under_load",
                                               "window_under_load")) or porep["jobs_failed"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
