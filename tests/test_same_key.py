"""Two workers with separate params directories make separate development keys; a job
proved with both could never assemble.  Before: it failed only at assembly, after every
partition was proved (9 of 10 in the fault run); now the second key is refused before
proving, naming both workers."""

from __future__ import annotations

import pytest
import redis

from config.settings import load_settings
from snark.job_input import InputLimits
from snark.porep.proof_type import PorepType
from snark.porep.seal import seal
from tasks.jobs import JobStore
from tasks.submission import accept
from workers.failures import PartitionFailed
from workers.runtime import WorkerRuntime


def test_a_partition_proved_with_another_key_than_the_jobs_is_refused_before_proving(
        redis_url, tmp_path):
    store = JobStore(redis.Redis.from_url(redis_url), ttl_s=60, results_maxlen=10)
    c1 = seal(2048, 2, 1)
    settings = load_settings(redis_url=redis_url, backend="cpu")
    job = accept(store, c1.to_json(), limits=InputLimits.of(settings)).job_id
    runtimes = [WorkerRuntime.start(redis_url=redis_url, gpu=None, worker_name=name,
                                    settings=load_settings(backend="cpu",
                                                           params_dir=tmp_path / name))
                for name in ("first@a", "second@b")]
    try:
        def prove(runtime: WorkerRuntime, partition: int, phases: list[str]) -> bytes:
            return runtime.prove_partition(
                job_id=job, partition=partition, proof_type=PorepType(), job_input=c1,
                progress=lambda phase, info: phases.append(phase),
                key_seen=lambda mine: store.first_key(job, mine))

        prove(runtimes[0], 0, [])
        again = []  # the first worker's key agrees with itself
        assert prove(runtimes[0], 1, again) and "compute" in again
        phases = []
        with pytest.raises(PartitionFailed) as refused:
            prove(runtimes[1], 1, phases)
        assert refused.value.phase == "synthesize" and "compute" not in phases
        reason = refused.value.reason
        assert "KeyMismatch: proving key " in reason
        assert "this worker's (second@b, vk " in reason and "the one first@a proves" in reason
    finally:
        for runtime in runtimes:
            runtime.close()
