"""What one producer pays to accept a job: ``Client.submit`` (parse, store, enqueue).

    python bench/accept.py                      # the issue's shape: 1MiB, 10 × 117
    python bench/accept.py --c1 c1.json --jobs 50

Seals a C1 of the shape (or reads ``--c1``), starts an embedded redis-server and submits
``--jobs`` copies under fresh job ids (no worker: the submit tasks stay queued), timing
each ``submit``, and its steps once more in isolation (admit: parse and canonical JSON;
digest; store; enqueue). For comparison it times once what ``accept`` used to run as well: the full
vanilla check (``verify_vanilla``, every Merkle path in Python Poseidon), which now runs
on the workers. Writes ``accept-<date>.json`` to ``--out`` (default ``$OUT`` or
``bench/results``) with the load average, since a shared machine slows every figure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.provenance import commit  # noqa: E402
from client.api import Client  # noqa: E402
from client.embedded import EmbeddedRedis  # noqa: E402
from config.settings import load_settings  # noqa: E402
from snark.porep.c1 import parse_c1, parse_size  # noqa: E402
from snark.job_input import InputLimits  # noqa: E402
from snark.porep.proof_type import PorepType  # noqa: E402
from tasks.jobs import content_digest  # noqa: E402
from tasks.submission import Accepted, enqueue  # noqa: E402


def _spread(seconds: list[float]) -> dict:
    ordered = sorted(seconds)
    return {"median_ms": 1000 * statistics.median(ordered),
            "p90_ms": 1000 * ordered[int(0.9 * (len(ordered) - 1))],
            "max_ms": 1000 * ordered[-1], "n": len(ordered)}


def _timed(action) -> tuple[float, object]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def _timed_cpu(action) -> tuple[float, float]:
    """Wall and this process's CPU seconds: the producer's cost on its one core (the
    embedded redis-server is another process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--c1", type=Path, default=None, help="C1 file (default: seal one)")
    parser.add_argument("--sector-size", default="1MiB")
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--challenges", type=int, default=117)
    parser.add_argument("--jobs", type=int, default=30)
    parser.add_argument("--skip-vanilla", action="store_true",
                        help="do not time the old in-producer vanilla check")
    parser.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    args = parser.parse_args(argv)

    if args.c1 is not None:
        raw = args.c1.read_bytes()
    else:
        from snark.porep.seal import seal

        seconds, c1 = _timed(lambda: seal(parse_size(args.sector_size), args.partitions,
                                          args.challenges))
        print(f"sealed {c1.circuit_name}, {c1.partitions} partitions in {seconds:.1f}s",
              flush=True)
        raw = c1.to_json().encode()
    c1 = parse_c1(raw)

    with EmbeddedRedis() as server:
        settings = load_settings(redis_url=server.url)
        with Client(server.url, settings) as client:
            client.submit(raw)  # connections and scripts loaded
            submit_s, submit_cpu_s = zip(*(
                _timed_cpu(lambda: client.submit(raw, job_id=f"a-{uuid.uuid4().hex}"))
                for _ in range(args.jobs)))
            steps: dict[str, list[float]] = {"admit": [], "digest": [], "store": [],
                                             "enqueue": []}
            for _ in range(min(args.jobs, 10)):
                job_id = f"s-{uuid.uuid4().hex}"
                marks = [time.perf_counter()]
                admitted = PorepType().admit(raw, InputLimits.of(settings))
                marks.append(time.perf_counter())
                text = admitted.canonical_json
                digest = content_digest("porep-demo", text)
                marks.append(time.perf_counter())
                client.store.create(job_id, digest=digest, proof_type="porep-demo",
                                    partitions=admitted.partitions, priority="normal",
                                    input_json=text)
                marks.append(time.perf_counter())
                enqueue(client.app, client.store, Accepted(job_id, admitted.partitions, True))
                marks.append(time.perf_counter())
                for name, start, end in zip(steps, marks, marks[1:]):
                    steps[name].append(end - start)

    vanilla_s = None
    if not args.skip_vanilla:
        from snark.porep.vanilla import verify_vanilla

        vanilla_s, _ = _timed(lambda: verify_vanilla(c1))

    result = {
        "bench": "accept", "commit": commit(), "host": platform.node(), "cpus": os.cpu_count(),
        "loadavg_1m": os.getloadavg()[0], "argv": sys.argv[1:],
        "shape": {"circuit": c1.circuit_name, "sector_size": c1.sector_size,
                  "partitions": c1.partitions, "challenges": c1.challenges,
                  "c1_bytes": len(raw)},
        "submit": _spread(submit_s),
        "submit_producer_cpu": _spread(submit_cpu_s),
        "steps": {name: _spread(values) for name, values in steps.items()},
        "old_verify_vanilla_s": vanilla_s,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"accept-{dt.datetime.now(dt.timezone.utc):%Y-%m-%d-%H%M}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    s = result["submit"]
    print(f"accept ({c1.circuit_name}, {c1.partitions} partitions, {len(raw)} bytes): "
          f"median {s['median_ms']:.1f} ms, p90 {s['p90_ms']:.1f} ms, max {s['max_ms']:.1f} ms "
          f"per job over {s['n']} jobs (load average {result['loadavg_1m']:.1f} on "
          f"{result['cpus']} cpus); the producer's CPU: median "
          f"{result['submit_producer_cpu']['median_ms']:.1f} ms")
    print("  steps (median ms): " + ", ".join(f"{name} {v['median_ms']:.1f}"
                                               for name, v in result["steps"].items()))
    if vanilla_s is not None:
        print(f"  the vanilla check that accept no longer runs: {vanilla_s:.1f} s per job")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
