"""A worker that proves nothing: the pipeline's messages and Redis traffic, without the GPU.

    celery -A bench.null_worker worker -c 4        (``bench/scale.py --null`` starts them)

It serves the real task names on the real queues with the real job store, so producers
submit through ``client.api`` exactly as for a proving cluster: ``proofq.submit`` claims
the fan-out and sends one ``proofq.prove_partition`` per partition; each of those starts
the partition, reads the job's input once per process (as a proving process does),
stores a zero 192-byte proof, and the call that completes the set publishes the job.
What it measures is the ceiling one Redis and Celery put on jobs per second, which tells
how many GPUs one Redis can feed.
"""

from __future__ import annotations

import functools
import time

import redis

from config.settings import get_settings
from tasks.application import GPU_QUEUE, PRIORITIES, create_app, redis_url
from tasks.jobs import JobStore

app = create_app()
PROOF_BYTES = 192


@functools.cache
def _store() -> JobStore:
    settings = get_settings()
    return JobStore(redis.Redis.from_url(redis_url(settings)), ttl_s=settings.job_ttl_s,
                    results_maxlen=settings.results_maxlen)


@functools.lru_cache(maxsize=4)
def _input_bytes(job_id: str) -> int:
    """Read the input once per process and job, like a proving process parsing it."""
    return len(_store().input_json(job_id) or b"")


@app.task(name="proofq.submit", bind=True)
def submit(self, job_id: str) -> str:
    store = _store()
    state = store.state(job_id)
    if (state is None or state.status != "queued" or store.fanned_out(job_id)
            or not store.claim_fan_out(job_id, self.request.id or "")):
        return "skipped"
    for partition in range(state.partitions):
        prove_partition.apply_async((job_id, partition), {"queued_at": time.time()},
                                    queue=GPU_QUEUE, priority=PRIORITIES[state.priority])
    store.mark_fanned_out(job_id)
    return "fanned_out"


@app.task(name="proofq.prove_partition")
def prove_partition(job_id: str, partition: int, queued_at: float | None = None) -> str:
    store = _store()
    outcome, _ = store.begin_partition(job_id, partition, max_attempts=1)
    if outcome != "run":
        return outcome
    _input_bytes(job_id)
    outcome = store.store_part(job_id, partition, bytes(PROOF_BYTES))
    if outcome == "complete":
        state = store.state(job_id)
        return store.finish(job_id, b"".join(store.parts(job_id, state.partitions)))
    return outcome
