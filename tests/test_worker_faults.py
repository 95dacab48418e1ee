"""Errors by owner, jobs never stranded: a worker that cannot serve a job gives its message
back for another worker, a worker that keeps failing for its own reasons is quarantined for
that kind of work, and a job that no worker can serve fails saying so.

One private cluster (an embedded redis-server, real ``celery -A tasks worker`` processes,
the test-only ``toy-product`` type) with one good worker on each queue beside four that
cannot serve toy-product partitions, each for a reason a fleet meets during a rolling
upgrade or a bad deploy:

    no-type   started without the type's module (and consuming submits too)
    small     a smaller PROOFQ_MAX_INPUT_BYTES than the worker that accepted the job
    bad-key   a params directory whose key file is corrupt (sha256 does not match)
    no-dir    a params directory it cannot read (a path under a plain file)

Before, each of these failed the jobs it touched ("10 of 10 jobs failed" beside one good
worker), or left them ``proving`` for ever (the input limit, the type).
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from pathlib import Path

import pytest

from client.api import Client
from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark import groth16
from snark.fields import FR_MODULUS
from snark.proof import split_proofs
from snark.proof_types import Storage
from tests.product_type import ProductSettings
from tests.product_worker import ProductWorker
from tests.toy_distribution import toy_distribution
from workers.quarantine import quarantined

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 300
GOOD_LIMIT = 4096  # bytes of input JSON the good partition worker reads (~25 pairs)
SMALL_LIMIT = 200  # below any job of two pairs
BAD = ("no-type", "small", "bad-key", "no-dir")


def _corrupt_key(params: Path, target: Path) -> None:
    """A copy of ``params`` with one byte of one key array flipped."""
    shutil.copytree(params, target)
    array = sorted(target.rglob("*.npy"))[0]
    data = bytearray(array.read_bytes())
    data[-1] ^= 0xFF
    array.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("faults")
    params = base / "params"
    # the key, made once, before any worker
    ProductWorker(Storage(params), ProductSettings()).load_key(None)
    _corrupt_key(params, base / "params-corrupt")
    (base / "a-file").write_text("")
    env = {"PROOFQ_BACKEND": "cpu", "PROOFQ_HEARTBEAT_S": "1", "PROOFQ_LOCK_LEASE_S": "5",
           "PROOFQ_REAP_AFTER_S": "10", "PROOFQ_RETRY_BACKOFF_S": "0.05",
           "PROOFQ_REFUSAL_PAUSE_S": "0.2", "PROOFQ_REFUSALS_TO_FAIL": "5"}
    # name → (queues, knows the type, settings of its own)
    plan = {
        "submit": ("jobs", True, {}),
        "good": ("gpu", True, {"PROOFQ_MAX_INPUT_BYTES": str(GOOD_LIMIT)}),
        "no-type": ("jobs,gpu", False, {}),
        "small": ("gpu", True, {"PROOFQ_MAX_INPUT_BYTES": str(SMALL_LIMIT)}),
        "bad-key": ("gpu", True, {"PROOFQ_PARAMS_DIR": str(base / "params-corrupt")}),
        "no-dir": ("gpu", True, {"PROOFQ_PARAMS_DIR": str(base / "a-file" / "params")}),
    }
    tag = uuid.uuid4().hex[:6]
    without = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    with toy_distribution(base / "site") as with_toy, EmbeddedRedis() as server:
        settings = load_settings(redis_url=server.url, params_dir=params, backend="cpu")
        workers: dict[str, tuple[str, WorkerProcess]] = {}
        try:
            for name, (queues, knows, own) in plan.items():
                node = f"{name}-{tag}@%h"
                command = worker_command(gpu=None, concurrency=1, node=node) + ["-Q", queues]
                worker = WorkerProcess(server.url, command, log_dir=base,
                                       env={**env, "PROOFQ_PARAMS_DIR": str(params),
                                            "PYTHONPATH": with_toy if knows else without, **own})
                workers[name] = (node, worker.start())
            with Client(server.url, settings) as client:
                nodes = {name: worker.wait_ready(client.app, 180, node=node)
                         for name, (node, worker) in workers.items()}
                yield client, settings, nodes, {n: w for n, (_, w) in workers.items()}
        finally:
            for _, worker in workers.values():
                worker.stop(graceful=False)


def _pairs(rng, count: int) -> list[list[int]]:
    return [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)] for _ in range(count)]


def _verifying_key(settings):
    return ProductWorker(Storage(settings.params_dir), ProductSettings()).load_key(None).vk


def test_every_job_is_done_by_a_worker_that_can_serve_it(cluster, rng):
    """Twelve jobs among one good partition worker and four that cannot serve them: every
    job done, every proof made by the good one, the others' refusals on the jobs."""
    client, settings, nodes, workers = cluster
    jobs = {client.submit({"pairs": pairs}, proof_type="toy-product"): pairs
            for pairs in (_pairs(rng, rng.randrange(2, 4)) for _ in range(12))}
    vk = _verifying_key(settings)
    refused_by: set[str] = set()
    for job, pairs in jobs.items():
        result = client.result(job, timeout=WAIT_S)
        for (x, y), proof in zip(pairs, split_proofs(result, len(pairs))):
            assert groth16.verify(vk, [x * y % FR_MODULUS], proof)
        refused_by |= set(client.store.refusals(job))
    provers = {f[b"worker"].decode().rsplit("/", 1)[0]
               for _, f in client.store.redis.xrange("proofq:events")
               if f[b"phase"] == b"verify" and f[b"job"].decode() in jobs}
    assert provers == {nodes["good"]}
    assert refused_by and refused_by <= {nodes[name] for name in BAD}, refused_by
    # the submit worker without the type gave submit messages back too (no partition)
    log = workers["no-type"].log_path.read_text(errors="replace")
    assert re.search(r"job \w+: given back to the queue, this worker cannot serve it", log)
    assert all(worker.alive() for worker in workers.values())


def test_workers_that_keep_failing_for_their_own_reasons_are_quarantined(cluster, rng):
    """Each bad worker, after two faults of its own in a row, stops taking toy-product
    work: the quarantine names the worker, the type and the reason, in Redis (which the
    job view reads) and in the worker's log."""
    client, _, nodes, workers = cluster
    expected = {"no-type": "does not have proof type 'toy-product'",
                "small": f"exceeds max_input_bytes ({SMALL_LIMIT}, PROOFQ_MAX_INPUT_BYTES)",
                "bad-key": "sha256 does not match the manifest (corrupt key)",
                "no-dir": "NotADirectoryError"}
    deadline = time.monotonic() + WAIT_S
    while True:
        held = {q.worker: q for q in quarantined(client.store.redis)}
        if all(nodes[name] in held for name in expected) or time.monotonic() > deadline:
            break
        client.submit({"pairs": _pairs(rng, 3)}, proof_type="toy-product")
        time.sleep(1.0)
    for name, reason in expected.items():
        record = held.get(nodes[name])
        assert record is not None, f"{name} not quarantined: {sorted(held)}"
        assert record.proof_type == "toy-product" and reason in record.reason, record
        log = workers[name].log_path.read_text(errors="replace")
        assert "quarantined for toy-product work" in log
        assert "given back to the queue, this worker cannot serve it" in log
    assert nodes["good"] not in held and nodes["submit"] not in held


def test_a_job_no_worker_can_serve_fails_saying_so(cluster, rng):
    """An input the submit worker accepts but every partition worker refuses (larger than
    the good one's limit): the job fails once all five have refused it, never strands."""
    client, _, nodes, workers = cluster
    pairs = _pairs(rng, 30)  # ~4.8 KB of JSON: above GOOD_LIMIT
    job = client.submit({"pairs": pairs}, proof_type="toy-product")
    state = client.wait(job, timeout=WAIT_S)
    assert state.status == "failed", state
    assert state.error.startswith("no worker can serve it (5 refused): "), state.error
    refusals = client.store.refusals(job)
    assert set(refusals) == {nodes[name] for name in ("good", *BAD)}
    too_large = f"exceeds max_input_bytes ({GOOD_LIMIT}, PROOFQ_MAX_INPUT_BYTES)"
    assert too_large in refusals[nodes["good"]] and too_large in state.error
    assert all(worker.alive() for worker in workers.values())
