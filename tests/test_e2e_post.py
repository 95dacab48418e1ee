"""WindowPoSt and WinningPoSt through the service: Curio's request fields turned into jobs
(``curio_request``, the gRPC door's call), proved by a real ``celery -A tasks worker`` on the
CPU under development keys, the 192-byte proofs verified; a tampered vanilla proof fails its
job naming the field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from client.api import Client, JobError
from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark.filecoin.errors import FilecoinError
from snark.filecoin.params import verifying_key_for
from snark.filecoin.post import generate
from snark.filecoin.post.job import curio_request, parse_post_job
from snark.filecoin.post.prove import Partition, verify_partition
from snark.filecoin.post.registered_proofs import post_proof
from snark.filecoin.post.vanilla import encode
from snark.filecoin.settings import FilecoinSettings
from snark.filecoin.post.worker import PostWorker
from snark.filecoin.seal import random_fields
from snark.proof_types import Storage
from tests.timing import scaled

WAIT_S = scaled(900)  # waits for proofs: tests/timing.py
KINDS = {"window": (3, 10, 1), "winning": (4, 0, 0)}  # proof_kind, Go's number, partition


def _request(kind: str, rng: np.random.Generator) -> tuple:
    """A ``SubmitProofRequest``'s PoSt fields for one fresh 2 KiB test sector."""
    proof_kind, go_id, partition_index = KINDS[kind]
    proof = post_proof(go_id)
    randomness = random_fields(rng, 1)[0].tobytes()
    sector = generate.whole_sector(proof, rng, int(rng.integers(1 << 40)))
    elements = encode(generate.vanilla_proofs(proof, [sector], randomness, partition_index))
    return proof_kind, go_id, elements, randomness, 1000, partition_index, "development"


def make_post_dev_keys(params: Path, rng: np.random.Generator) -> None:
    """Development keys of the 2 KiB WindowPoSt and WinningPoSt circuits, set up into
    ``params``."""
    worker = PostWorker(Storage(params), FilecoinSettings())
    for kind in KINDS:
        _, text = curio_request(*_request(kind, rng))
        worker.make_key(parse_post_job(text, kind, max_bytes=1 << 26))


def test_curio_request_fields_are_checked():
    rng = np.random.default_rng(1)
    fields = list(_request("window", rng))
    name, text = curio_request(*fields)
    assert name == "window-post" and '"registered_proof":10' in text
    assert curio_request(*fields, sector_size=2048)[1] == text
    with pytest.raises(FilecoinError, match="sector_size: 8388608 is not the size of "
                                            "StackedDrgWindow2KiBV1_1"):
        curio_request(*fields, sector_size=8 << 20)
    with pytest.raises(FilecoinError, match="proof_kind: 2"):
        curio_request(2, *fields[1:])
    with pytest.raises(FilecoinError, match="registered_proof: 10 is StackedDrgWindow2KiBV1_1, "
                                            "not a winning"):
        curio_request(4, *fields[1:])
    with pytest.raises(FilecoinError, match="randomness: expected 32 bytes"):
        curio_request(*fields[:3], b"\0" * 31, *fields[4:])
    with pytest.raises(FilecoinError, match=r"vanilla_proofs\[0\]: is 5679 bytes"):
        curio_request(*fields[:2], [fields[2][0][:-1]], *fields[3:])
    with pytest.raises(FilecoinError, match="post job: fields \\['extra'\\] are unknown"):
        parse_post_job(text[:-1] + ',"extra":1}', "window", max_bytes=1 << 20)


def test_a_large_request_goes_by_shared_storage(tmp_path):
    rng = np.random.default_rng(2)
    fields = _request("window", rng)
    name, text = curio_request(*fields, max_inline=1000, witness_dir=tmp_path)
    assert '"vanilla_proofs_path":"post-vanilla/' in text and len(text) < 1000
    job = parse_post_job(text, "window", max_bytes=1000)
    assert job.sectors is None
    worker = PostWorker(Storage(tmp_path / "params", tmp_path), FilecoinSettings())
    worker.check(job)
    assert worker.partition(job).sectors.sector_ids == job.load_sectors(tmp_path).sector_ids
    with pytest.raises(FilecoinError, match="no witness_dir"):
        curio_request(*fields, max_inline=1000)
    (tmp_path / job.path).write_bytes(b"\2" + bytes(7) + fields[2][0])
    with pytest.raises(FilecoinError, match="vanilla_proofs_path: is 5688 bytes with a count "
                                            "of 2"):
        job.load_sectors(tmp_path)
    with pytest.raises(FilecoinError, match="must be a relative path"):
        parse_post_job(text.replace('"post-vanilla/', '"/post-vanilla/'), "window",
                       max_bytes=1000)


@pytest.mark.slow
def test_post_jobs_through_a_celery_worker(post_2kib_dev_params, rng, tmp_path):
    nprng = np.random.default_rng(rng.getrandbits(64))
    shared = tmp_path / "shared"
    env = {"PROOFQ_PARAMS_DIR": str(post_2kib_dev_params), "PROOFQ_BACKEND": "cpu",
           "PROOFQ_FILECOIN_KEY": "development", "PROOFQ_WITNESS_DIR": str(shared)}
    requests = {kind: _request(kind, nprng) for kind in KINDS}
    bad = list(_request("window", nprng))
    tampered = bytearray(bad[2][0])
    tampered[8] ^= 1  # comm_r
    bad[2] = [bytes(tampered)]
    with EmbeddedRedis() as server:
        settings = load_settings(redis_url=server.url, params_dir=post_2kib_dev_params,
                                 backend="cpu")
        worker = WorkerProcess(server.url, worker_command(gpu=None, concurrency=1, node="post@%h"),
                               log_dir=tmp_path, env=env).start()
        try:
            with Client(server.url, settings) as client:
                worker.wait_ready(client.app, 600, node="post@%h")
                ids = {kind: client.submit(curio_request(*fields)[1],
                                           proof_type=curio_request(*fields)[0])
                       for kind, fields in requests.items()}
                by_path = curio_request(*requests["window"], max_inline=1000,
                                        witness_dir=shared)[1]
                ids["window by path"] = client.submit(by_path, proof_type="window-post")
                bad_id = client.submit(curio_request(*bad)[1], proof_type="window-post")
                proofs = {kind: client.result(job, WAIT_S) for kind, job in ids.items()}
                with pytest.raises(JobError, match=r"vanilla_proofs\[0\]\.comm_r"):
                    client.result(bad_id, WAIT_S)
        finally:
            worker.stop(graceful=False)
    assert proofs["window by path"] != proofs["window"]  # fresh r, s; the same statement
    requests["window by path"] = requests["window"]
    for kind, fields in requests.items():
        job = parse_post_job(curio_request(*fields)[1], None, max_bytes=1 << 26)
        vk = verifying_key_for(job.proof, "development", post_2kib_dev_params, post_2kib_dev_params)
        partition = Partition(job.sectors, job.randomness, job.partition_index)
        assert len(proofs[kind]) == 192 and verify_partition(partition, vk, proofs[kind])
        other = Partition(job.sectors, bytes(32), job.partition_index)
        assert not verify_partition(other, vk, proofs[kind])
