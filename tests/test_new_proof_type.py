"""A new proof type is one new folder and one entry-point line, and touches nothing of
proofq: the test-only ``toy-product`` type (``tests.product_type``) is installed as a
distribution of its own (a temporary one: ``tests.toy_distribution``), and a job of it runs
through the real pipeline: an embedded redis-server, a real ``celery -A tasks worker`` that
finds the type by its entry point alone, the submit task, the partition tasks under the lock
pair, assembly and verification."""

from __future__ import annotations

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
from snark.registry import names, proof_type, worker_half
from tests import product_type
from tests.product_type import ProductSettings
from tests.product_worker import ProductWorker
from tests.timing import scaled
from tests.toy_distribution import toy_distribution

pytestmark = pytest.mark.slow

WAIT_S = scaled(300)  # waits for proofs: tests/timing.py
MAX_PAIRS = 3  # the worker's PROOFQ_TOY_PRODUCT_MAX_PAIRS: the type's own setting


@pytest.fixture(scope="module")
def toy_path(tmp_path_factory):
    with toy_distribution(tmp_path_factory.mktemp("site")) as pythonpath:
        yield pythonpath


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, toy_path):
    """A private cluster whose one CPU worker has toy-product's distribution on its path,
    and a setting of the type's own."""
    base = tmp_path_factory.mktemp("toy")
    with EmbeddedRedis() as server:
        settings = load_settings(redis_url=server.url, params_dir=base / "params",
                                 backend="cpu")
        env = {"PROOFQ_PARAMS_DIR": str(settings.params_dir), "PROOFQ_BACKEND": "cpu",
               "PYTHONPATH": toy_path, "PROOFQ_TOY_PRODUCT_MAX_PAIRS": str(MAX_PAIRS)}
        worker = WorkerProcess(server.url, worker_command(gpu=None, concurrency=1),
                               log_dir=base, env=env).start()
        try:
            with Client(server.url, settings) as client:
                worker.wait_ready(client.app, 120)
                yield settings, client, worker
        finally:
            worker.stop(graceful=False)


def test_the_type_is_known_by_its_entry_point_alone(tmp_path):
    assert "toy-product" not in names()  # the module is imported, its distribution is not
    with toy_distribution(tmp_path) as _:
        assert "toy-product" in names()
        kind = proof_type("toy-product")
        assert kind is product_type.PLUGIN.kind
        assert isinstance(worker_half(kind, Storage(Path("."))), ProductWorker)
    assert "toy-product" not in names()


def test_a_job_of_a_type_from_the_tests_runs_through_the_pipeline(cluster, rng):
    settings, client, worker = cluster
    pairs = [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)]
             for _ in range(rng.randrange(2, 4))]
    job = client.submit({"pairs": pairs}, proof_type="toy-product")
    result = client.result(job, timeout=WAIT_S)
    state = client.status(job)
    assert (state.status, state.proof_type, state.parts_done) == (
        "done", "toy-product", len(pairs))
    vk = ProductWorker(Storage(settings.params_dir), ProductSettings()).load_key(None).vk
    proofs = split_proofs(result, len(pairs))
    for (x, y), proof in zip(pairs, proofs):
        assert groth16.verify(vk, [x * y % FR_MODULUS], proof)
    x, y = pairs[0]
    assert not groth16.verify(vk, [(x * y + 1) % FR_MODULUS], proofs[0])
    assert worker.alive(), worker.log_tail()


def test_the_types_own_checks_fail_its_job(cluster, rng):
    _, client, worker = cluster
    refused = client.submit({"pairs": [[rng.randrange(1, FR_MODULUS), 0]]},
                            proof_type="toy-product")
    state = client.wait(refused, timeout=WAIT_S)
    assert state.status == "failed"
    assert state.error == "check: pairs[0]: a factor of 0 makes c = 0 for any partner"
    with pytest.raises(ValueError, match=r"pairs\[1\]: expected \[x, y\]"):
        client.submit({"pairs": [[1, 2], [3]]}, proof_type="toy-product")
    assert worker.alive(), worker.log_tail()


def test_the_worker_passes_the_types_own_settings_in(cluster, rng):
    """PROOFQ_TOY_PRODUCT_MAX_PAIRS, set on the worker only, bounds the job there: the
    worker half was given the type's settings made from the worker's environment."""
    _, client, worker = cluster
    pairs = [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)]
             for _ in range(MAX_PAIRS + 1)]
    state = client.wait(client.submit({"pairs": pairs}, proof_type="toy-product"),
                        timeout=WAIT_S)
    assert (state.status, state.error) == (
        "failed", f"check: pairs: {MAX_PAIRS + 1} pairs, above this cluster's "
                  f"PROOFQ_TOY_PRODUCT_MAX_PAIRS ({MAX_PAIRS})")
    assert worker.alive(), worker.log_tail()
