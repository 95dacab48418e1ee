"""A Celery-free worker process that proves partitions taken from a Redis list.

It runs the same ``WorkerRuntime`` as a Celery worker, without the task layer, so the
overlap bench and the multi-process tests can start, count and ``kill -9`` real worker
processes sharing one GPU::

    python -m workers.standalone --redis-url URL --gpu 0 --type porep-demo --input c1.json \
        --queue bench:q

Queue entries are JSON ``{"job": "<id>", "partition": p}`` (all of the one input given). Each
outcome is pushed to ``<queue>:results`` as JSON ``{"job", "partition", "worker", "proof"}``
(hex) or ``{…, "error", "transient"}``, one per attempt. Failures follow the pipeline's own
taxonomy and policy (``workers.failures``: retried in place with backoff, Redis outages
waited out). The process exits when the queue is empty (``--linger S``: once it has stayed
empty for S seconds) or when it takes an entry ``{"stop": true}``. Settings come from the
environment (``PROOFQ_*``) like a Celery worker's.

``--warmup P`` proves partition P once (job ``warmup``) before serving: the key loads and its
bases become resident. ``--barrier N`` then waits until N workers of the queue have warmed
up, so a measurement never shares the GPU with another worker's key upload.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any

from config.settings import load_settings
from snark.job_input import InputLimits
from snark.proof_types import ProofType
from snark.registry import names, proof_type
from workers.failures import Failure, PartitionFailed, RetryPolicy, run_until_settled
from workers.runtime import WorkerRuntime

log = logging.getLogger(__name__)


#: How long a warmed-up worker waits for the others (a worker that failed never arrives).
BARRIER_TIMEOUT_S = 900


def results_key(queue: str) -> str:
    return f"{queue}:results"


def ready_key(queue: str) -> str:
    return f"{queue}:ready"


def warm_up(runtime: WorkerRuntime, queue: str, kind: ProofType, job_input: Any,
            partition: int, barrier: int) -> None:
    """Prove one partition outside the queue, announce it, wait for ``barrier`` workers."""
    runtime.prove_partition(job_id="warmup", partition=partition, proof_type=kind,
                            job_input=job_input)
    runtime.client.rpush(ready_key(queue), runtime.worker_name)
    deadline = time.monotonic() + BARRIER_TIMEOUT_S
    while (ready := runtime.client.llen(ready_key(queue))) < barrier:
        if time.monotonic() > deadline:
            raise SystemExit(f"barrier: {ready} of {barrier} workers warmed up within "
                             f"{BARRIER_TIMEOUT_S} s")
        time.sleep(0.01)


def serve(runtime: WorkerRuntime, queue: str, kind: ProofType, job_input: Any,
          linger_s: float = 0.0) -> int:
    """Prove entries until the queue has been empty for ``linger_s`` or an entry says stop;
    return how many proofs were produced."""
    policy = RetryPolicy.from_settings(runtime.settings)
    proved = 0
    while (raw := _next_entry(runtime, queue, linger_s)) is not None:
        entry = json.loads(raw)
        if entry.get("stop"):
            break
        attempts = _Attempts(runtime, queue, policy, kind, job_input, entry)
        proved += run_until_settled(attempts.once, runtime.client, log=log,
                                    name=f"{entry['job']}/{entry['partition']}")
    return proved


def _next_entry(runtime: WorkerRuntime, queue: str, linger_s: float) -> bytes | None:
    """The next entry, waiting up to ``linger_s`` for one (a second at a time: the client
    gives up on a reply after its socket timeout)."""
    entry = runtime.client.lpop(queue)
    deadline = time.monotonic() + linger_s
    while entry is None and (left := deadline - time.monotonic()) > 0:
        popped = runtime.client.blpop([queue], timeout=min(left, 1.0))
        entry = popped[1] if popped else None
    return entry


class _Attempts:
    """The attempts at one queue entry, each pushing its outcome; ``once`` returns the
    number of proofs made (0 after the last attempt failed)."""

    def __init__(self, runtime: WorkerRuntime, queue: str, policy: RetryPolicy,
                 kind: ProofType, job_input: Any, entry: dict) -> None:
        self.runtime, self.queue, self.policy = runtime, queue, policy
        self.kind, self.job_input, self.entry = kind, job_input, entry
        self.failed = 0  # attempts that failed

    def once(self, resumed: bool) -> int:
        outcome = {"job": self.entry["job"], "partition": self.entry["partition"],
                   "worker": self.runtime.worker_name}
        try:
            proof = self.runtime.prove_partition(
                job_id=self.entry["job"], partition=self.entry["partition"],
                proof_type=self.kind, job_input=self.job_input)
        except PartitionFailed as exc:
            if exc.kind is not Failure.OUTAGE:  # an outage is waited out, no attempt
                self.failed += 1
                self._push(dict(outcome, error=str(exc), transient=exc.transient))
            self.policy.run_again(exc, self.failed)
            return 0
        outcome["proof"] = proof.hex()
        self._push(outcome)
        return 1

    def _push(self, outcome: dict) -> None:
        self.runtime.client.rpush(results_key(self.queue), json.dumps(outcome))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m workers.standalone", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--gpu", type=int, default=None, help="GPU number (default: CPU)")
    parser.add_argument("--type", dest="proof_type", required=True, choices=names(),
                        help="proof type of the input")
    parser.add_argument("--input", type=Path, required=True,
                        help="the job's input file (what proofq submit takes for this type)")
    parser.add_argument("--queue", required=True, help="Redis list of partition entries")
    parser.add_argument("--name", default=None, help="worker name in events and lock tokens")
    parser.add_argument("--warmup", type=int, default=None, metavar="P",
                        help="prove partition P once before serving")
    parser.add_argument("--barrier", type=int, default=1, metavar="N",
                        help="after the warm-up, wait for N warmed-up workers of the queue")
    parser.add_argument("--linger", type=float, default=0.0, metavar="S",
                        help="wait up to S seconds for entries once the queue is empty")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    kind = proof_type(args.proof_type)
    settings = load_settings()
    job_input = kind.parse(args.input.read_bytes(), InputLimits.of(settings))
    runtime = WorkerRuntime.start(redis_url=args.redis_url, gpu=args.gpu, settings=settings,
                                  worker_name=args.name)
    try:
        if args.warmup is not None:
            warm_up(runtime, args.queue, kind, job_input, args.warmup, args.barrier)
        serve(runtime, args.queue, kind, job_input, args.linger)
    finally:
        runtime.close()


if __name__ == "__main__":
    main()
