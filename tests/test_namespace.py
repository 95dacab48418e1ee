"""Two clusters share one Redis database (``PROOFQ_NAMESPACE``, ``config.redis_keys``): the
default one and ``blue``, each a real ``celery -A tasks worker`` that knows the test-only
``toy-product`` type, one embedded redis-server. Each cluster's jobs are proved by its own
worker, its state is under its own names, and neither sees the other's."""

from __future__ import annotations

import uuid

import pytest
import redis

from client.api import Client
from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from config.redis_keys import RedisKeys
from config.settings import load_settings
from snark import groth16
from snark.fields import FR_MODULUS
from snark.proof import split_proofs
from snark.proof_types import Storage
from tests.product_type import ProductSettings
from tests.product_worker import ProductWorker
from tests.toy_distribution import toy_distribution
from workers.phase_events import read_events

pytestmark = pytest.mark.slow

WAIT_S = 300
NAMESPACES = ("proofq", "blue")


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    base = tmp_path_factory.mktemp("namespaces")
    params = base / "params"
    ProductWorker(Storage(params), ProductSettings()).load_key(None)
    tag = uuid.uuid4().hex[:6]
    with toy_distribution(base / "site") as pythonpath, EmbeddedRedis() as server:
        env = {"PROOFQ_BACKEND": "cpu", "PROOFQ_PARAMS_DIR": str(params),
               "PYTHONPATH": pythonpath}
        started: dict[str, tuple[str, WorkerProcess]] = {}
        clients: dict[str, Client] = {}
        try:
            for namespace in NAMESPACES:
                node = f"{namespace}-{tag}@%h"
                command = worker_command(gpu=None, concurrency=1, node=node)
                worker = WorkerProcess(server.url, command, log_dir=base,
                                       env={**env, "PROOFQ_NAMESPACE": namespace}).start()
                started[namespace] = (node, worker)
                settings = load_settings(redis_url=server.url, params_dir=params,
                                         backend="cpu", namespace=namespace)
                clients[namespace] = Client(server.url, settings)
            nodes = {ns: worker.wait_ready(clients[ns].app, 180, node=node)
                     for ns, (node, worker) in started.items()}
            yield server, clients, nodes, {ns: w for ns, (_, w) in started.items()}
        finally:
            for client in clients.values():
                client.close()
            for _, worker in started.values():
                worker.stop(graceful=False)


def test_each_cluster_proves_its_own_jobs_under_its_own_names(clusters, rng):
    server, clients, nodes, workers = clusters
    vk = ProductWorker(Storage(next(iter(clients.values())).settings.params_dir),
                       ProductSettings()).load_key(None).vk
    jobs = {ns: {} for ns in NAMESPACES}
    for _ in range(3):
        for ns in NAMESPACES:
            pairs = [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)]
                     for _ in range(rng.randrange(1, 4))]
            jobs[ns][clients[ns].submit({"pairs": pairs}, proof_type="toy-product")] = pairs
    admin = redis.Redis.from_url(server.url)
    for ns, client in clients.items():
        keys = RedisKeys(ns)
        for job, pairs in jobs[ns].items():
            proofs = split_proofs(client.result(job, timeout=WAIT_S), len(pairs))
            assert all(groth16.verify(vk, [x * y % FR_MODULUS], proof)
                       for (x, y), proof in zip(pairs, proofs))
            provers = {e.worker.rsplit("/", 1)[0]
                       for e in read_events(admin, job=job, stream=keys.events)}
            assert provers == {nodes[ns]}
        listed = {j.decode() for j in admin.zrange(keys.jobs_index, 0, -1)}
        assert listed == set(jobs[ns])
        other = next(o for o in NAMESPACES if o != ns)
        assert all(client.store.state(job) is None for job in jobs[other])
    blue = {k.decode() for k in admin.keys("blue:*")}
    assert {"blue:jobs", "blue:results", "blue:events"} <= blue, sorted(blue)
    assert any(k.startswith("blue:gpu:") for k in blue), sorted(blue)  # the device's locks
    assert any(k.startswith("blue:broker:") for k in blue), sorted(blue)  # Celery's own
    assert not any(admin.exists(RedisKeys().job(job)) for job in jobs["blue"])
    assert all(worker.alive() for worker in workers.values())
