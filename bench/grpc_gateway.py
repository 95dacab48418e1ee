"""What ``proofq grpc`` adds to a sector's proof: Curio's request through the gateway beside
the same sector submitted directly (``client.api.Client.submit``), and the answer's way back.

No worker runs: the proving itself is the same job either way (measured by
``bench/filecoin_gpu.py`` and ``bench/scale.py``). Two stages on a real Redis and a real
``proofq grpc`` process, for a C1 of ``--case`` (``bench/filecoin_c1.py``'s test C1s: 32GiB is
a sparse C1 of the real shape, ~51 MB):

* submit: ``SubmitProof`` (a gRPC client in this process: the message's transfer, the
  gateway's checks, the job accepted and stored) beside ``Client.submit`` of the same job
  input, best and median of ``--repeat``, each under a fresh request id / job id;
* answer: an ``AwaitProof`` waiting on a job that is then completed by hand (its parts
  stored and the job finished through the job store's scripts, as the last worker does),
  timed from the finish to the response with the proof, beside ``Client.wait`` doing the
  same.

Prints a table and writes ``bench/results/grpc-gateway-<date>.json`` (date, device, commit,
command, load average, the rows).

    python bench/grpc_gateway.py --case 32GiB --repeat 5
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from bench.filecoin_c1 import CASES, c1_file  # noqa: E402
from bench.provenance import commit  # noqa: E402
from client.api import Client  # noqa: E402
from client.cuzk import proving_pb2 as pb  # noqa: E402
from client.cuzk import proving_pb2_grpc as pb_grpc  # noqa: E402
from client.cuzk.filecoin_kinds import porep_job  # noqa: E402
from client.cuzk.server import MAX_MESSAGE_BYTES  # noqa: E402
from client.embedded import EmbeddedRedis  # noqa: E402
from config.settings import load_settings  # noqa: E402
from snark.filecoin.registered_proofs import REGISTERED_PROOFS  # noqa: E402
from tasks.jobs import JobStatus  # noqa: E402

MINER = 1000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _python_path() -> str:
    """This tree first, then whatever the caller's path holds (the device's wheels)."""
    return os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))


@contextlib.contextmanager
def grpc_door(env: dict[str, str]) -> Iterator[pb_grpc.ProvingEngineStub]:
    """A ``proofq grpc`` process on a free local port, with ``env`` over this process's
    environment (its Redis, its settings), and a stub to call it; stopped on the way out."""
    port = _free_port()
    gateway = subprocess.Popen([sys.executable, "-m", "client", "grpc", "--listen",
                                f"127.0.0.1:{port}"], cwd=ROOT,
                               env={**os.environ, **env, "PYTHONPATH": _python_path()},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)])
    try:
        grpc.channel_ready_future(channel).result(timeout=120)
        yield pb_grpc.ProvingEngineStub(channel)
    finally:
        channel.close()
        gateway.terminate()
        gateway.wait(timeout=30)


def _request(case: str, text: bytes, request_id: str) -> pb.SubmitProofRequest:
    name = CASES[case][0]
    size = {"2KiB": 2048, "512MiB": 512 << 20, "32GiB": 32 << 30}[case]
    return pb.SubmitProofRequest(request_id=request_id, proof_kind=pb.POREP_SEAL_COMMIT,
                                 sector_size=size,
                                 registered_proof=REGISTERED_PROOFS[name].registered_id,
                                 priority=pb.NORMAL, vanilla_proof=text, sector_number=1,
                                 miner_id=MINER)


def _finish_by_hand(client: Client, job_id: str) -> float:
    """Complete a job as its workers would (every part stored, then the finish); returns
    when the finish was written."""
    store = client.store
    partitions = store.state(job_id).partitions
    for p in range(partitions):
        store.begin_partition(job_id, p, max_attempts=3)
        store.store_part(job_id, p, bytes(192))
    finished = time.perf_counter()
    assert store.finish(job_id, bytes(192 * partitions)) == JobStatus.DONE
    return finished


def _completed(reply: pb.AwaitProofResponse) -> None:
    assert reply.status == pb.AwaitProofResponse.COMPLETED, reply


def _latency(wait: Callable[[], object], finish: Callable[[], float]) -> float:
    """From ``finish()`` (run once ``wait()`` has waited a second: in its slowest poll) to
    ``wait()`` returning."""
    answered: dict[str, float] = {}

    def run() -> None:
        wait()
        answered["at"] = time.perf_counter()

    waiter = threading.Thread(target=run)
    waiter.start()
    time.sleep(1.0)
    finished = finish()
    waiter.join(60)
    return answered["at"] - finished


def _stats(values: list[float]) -> dict:
    return {"best_s": min(values), "median_s": statistics.median(values)}


def measure(case: str, repeat: int, seed: int, cache: Path) -> dict:
    path, _ = c1_file(case, cache, seed)
    text = path.read_bytes()
    with EmbeddedRedis() as server:
        settings = load_settings(redis_url=server.url)
        with grpc_door({"PROOFQ_REDIS_URL": server.url}) as stub:
            with Client(server.url, settings) as client:
                job_input = porep_job(_request(case, text, "x"))
                rows = {"submit_gateway": [], "submit_direct": [], "answer_gateway": [],
                        "answer_direct": []}
                for i in range(repeat):
                    start = time.perf_counter()
                    job = stub.SubmitProof(_request(case, text, f"bench-{i}"),
                                           timeout=600).job_id
                    rows["submit_gateway"].append(time.perf_counter() - start)
                    start = time.perf_counter()
                    direct = client.submit(job_input, proof_type="filecoin",
                                           job_id=f"direct-{i}")
                    rows["submit_direct"].append(time.perf_counter() - start)

                    rows["answer_gateway"].append(_latency(
                        lambda job=job: _completed(stub.AwaitProof(
                            pb.AwaitProofRequest(job_id=job), timeout=600)),
                        lambda job=job: _finish_by_hand(client, job)))
                    rows["answer_direct"].append(_latency(
                        lambda job=direct: client.wait(job, 600),
                        lambda job=direct: _finish_by_hand(client, job)))
    return {"case": case, "c1_bytes": len(text), "repeat": repeat,
            **{name: _stats(values) for name, values in rows.items()}}


def _device() -> str:
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                               capture_output=True, text=True, timeout=30).stdout.split("\n")
        gpus = [n.strip() for n in names if n.strip()]
    except (OSError, subprocess.TimeoutExpired):
        gpus = []
    return f"{os.cpu_count()} cores" + (f", {len(gpus)}x {gpus[0]}" if gpus else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "proofq-bench-c1"))
    parser.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = parser.parse_args()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    rows = [measure(case, args.repeat, args.seed, cache) for case in args.case or ["2KiB"]]
    print(f"{'case':8} {'C1 MB':>7} {'submit gw':>10} {'direct':>8} {'answer gw':>10} "
          f"{'direct':>8}   (best s)")
    for row in rows:
        print(f"{row['case']:8} {row['c1_bytes'] / 1e6:7.1f} "
              f"{row['submit_gateway']['best_s']:10.3f} {row['submit_direct']['best_s']:8.3f} "
              f"{row['answer_gateway']['best_s']:10.3f} {row['answer_direct']['best_s']:8.3f}")
    now = dt.datetime.now(dt.timezone.utc)
    record = {"date": now.isoformat(timespec="seconds"), "device": _device(),
              "commit": commit(), "command": " ".join(["python", *sys.argv]),
              "load_average": os.getloadavg(), "rows": rows}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"grpc-gateway-{now:%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
