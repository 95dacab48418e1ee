"""``circom`` jobs end to end: a real redis-server, a real ``celery -A tasks worker``, circom
circuits and ``snarkjs groth16 verify`` as the judge of every returned proof.

One CPU worker serves the module; its witness directory stands in for shared storage. Jobs
come in through the Python API, the CLI (``proofq submit``/``result``/``bench batch``) and
the intake stream, with witnesses inline and by path. The type's 0.1 name, ``groth16``, is
used on each way in once: the job is stored and shown as ``circom``.
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from client.api import Client
from client.embedded import EmbeddedRedis
from client.intake import INTAKE_STREAM, Intake
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark.snarkjs.keystore import import_zkey
from tasks.jobs import RESULTS_STREAM
from tests.snarkjs_tools import snarkjs_fixtures
from tests.timing import scaled

pytestmark = pytest.mark.slow

SEED = random.randrange(2**32)
print(f"test_e2e_circom seed {SEED}")
WAIT_S = scaled(300)  # waits for proofs: tests/timing.py
PROOFQ = str(Path(sys.executable).parent / "proofq")


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    return snarkjs_fixtures(tmp_path_factory)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, fixtures):
    """(settings, env, circuit, key id): the chain-20 key imported, one worker running."""
    base = tmp_path_factory.mktemp("g16-cluster")
    params, shared = base / "params", base / "shared"
    shared.mkdir()
    circuit = fixtures[1]["chain-20"]
    key = import_zkey(circuit.zkey, params)
    with EmbeddedRedis() as server:
        env = {"PROOFQ_REDIS_URL": server.url, "PROOFQ_PARAMS_DIR": str(params),
               "PROOFQ_WITNESS_DIR": str(shared), "PROOFQ_BACKEND": "cpu",
               "PROOFQ_RETRY_BACKOFF_S": "0.05"}
        settings = load_settings(redis_url=server.url, params_dir=params, witness_dir=shared,
                                 backend="cpu")
        worker = WorkerProcess(server.url, worker_command(gpu=None, concurrency=1),
                               log_dir=base, env=env).start()
        try:
            with Client(server.url, settings) as probe:
                worker.wait_ready(probe.app, 120)
            yield settings, env, circuit, key.circuit_id
        finally:
            worker.stop(graceful=False)


@pytest.fixture()
def client(cluster):
    with Client(cluster[0].redis_url, cluster[0]) as c:
        yield c


def _witnesses(circuit, directory: Path, count: int, rng: random.Random) -> list[Path]:
    return [circuit.witness(rng.randrange(1, 1 << 60), rng.randrange(1, 1 << 60),
                            directory / f"w{rng.randrange(1 << 32):08x}.wtns")
            for _ in range(count)]


def _assert_snarkjs_accepts(tools, circuit, proofs: list[dict], directory: Path) -> None:
    for i, entry in enumerate(proofs):
        proof, public = directory / f"check-proof-{i}.json", directory / f"check-public-{i}.json"
        proof.write_text(json.dumps(entry["proof"]))
        public.write_text(json.dumps(entry["public"]))
        assert tools.groth16_verify(circuit.vk, public, proof), f"proof {i}"


def test_a_batch_inline_and_by_path_through_the_api(cluster, fixtures, client, tmp_path):
    settings, _, circuit, key = cluster
    rng = random.Random(SEED)
    inline = _witnesses(circuit, tmp_path, 2, rng)
    shared = _witnesses(circuit, settings.witness_dir, 2, rng)
    job = client.submit({"key": key, "witnesses": [
        *({"wtns": base64.b64encode(w.read_bytes()).decode()} for w in inline),
        *({"path": w.name} for w in shared)]}, proof_type="groth16", priority="high")
    result = client.result(job, timeout=WAIT_S)
    state = client.status(job)
    assert (state.status, state.proof_type, state.parts_done) == ("done", "circom", 4)
    proofs = json.loads(result)["proofs"]
    assert len(proofs) == 4
    _assert_snarkjs_accepts(fixtures[0], circuit, proofs, tmp_path)
    [entry] = [f for _, f in client.store.redis.xrange(RESULTS_STREAM)
               if f[b"job"].decode() == job]
    assert bytes.fromhex(entry[b"proof"].decode()) == result
    phases = {(f[b"partition"], f[b"phase"]) for _, f in client.store.redis.xrange("proofq:events")
              if f[b"job"].decode() == job}
    assert {p for p, phase in phases if phase == b"verify"} == {b"0", b"1", b"2", b"3"}


def test_failures_name_the_witness_or_the_missing_key(cluster, fixtures, client, tmp_path):
    settings, _, circuit, key = cluster
    rng = random.Random(SEED + 1)
    [good] = _witnesses(circuit, tmp_path, 1, rng)
    other = fixtures[1]["chain-200"].witness(2, 3, tmp_path / "other.wtns")
    job = client.submit(client.circom_job(key, [good, other]), proof_type="circom")
    state = client.wait(job, timeout=WAIT_S)
    assert state.status == "failed"
    assert state.error.startswith("partition 1: synthesize: SnarkjsFormatError: witnesses[1]: ")
    missing = client.submit(client.circom_job("f" * 32, [good]), proof_type="circom")
    state = client.wait(missing, timeout=WAIT_S)
    assert state.status == "failed" and "proofq keys add" in state.error
    lost = client.submit({"key": key, "witnesses": [{"path": "never-written.wtns"}]},
                         proof_type="circom")
    state = client.wait(lost, timeout=WAIT_S)
    assert state.status == "failed" and "never-written.wtns" in state.error


def test_cancel_stops_a_queued_batch(cluster, client, tmp_path):
    _, _, circuit, key = cluster
    witnesses = _witnesses(circuit, tmp_path, 6, random.Random(SEED + 2))
    job = client.submit(client.groth16_job(key, witnesses), proof_type="circom",
                        priority="low")
    assert client.cancel(job) in ("cancelled", "done")
    assert client.wait(job, timeout=WAIT_S).status in ("cancelled", "done")


def test_intake_stream_takes_a_circom_job_under_its_former_name(cluster, fixtures, client,
                                                               tmp_path):
    _, _, circuit, key = cluster
    witnesses = _witnesses(circuit, tmp_path, 2, random.Random(SEED + 3))
    client.store.redis.xadd(INTAKE_STREAM, {"job": "g16-intake", "type": "groth16",
                                            "input": client.circom_job(key, witnesses).to_json()})
    assert Intake(client, name="g16", block_s=0.1).process_once() == 1
    assert client.status("g16-intake").proof_type == "circom"
    proofs = json.loads(client.result("g16-intake", timeout=WAIT_S))["proofs"]
    _assert_snarkjs_accepts(fixtures[0], circuit, proofs, tmp_path)


def _proofq(*args, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    return subprocess.run([PROOFQ, *map(str, args)], capture_output=True, text=True,
                          env={**base, **env}, timeout=WAIT_S)


def test_cli_submit_result_and_bench_batch(cluster, fixtures, tmp_path):
    _, env, circuit, key = cluster
    witnesses = _witnesses(circuit, tmp_path, 2, random.Random(SEED + 4))
    out = tmp_path / "out"
    run = _proofq("submit", "--type", "groth16", "--key", key, *witnesses, "--job-id",
                  "g16-cli", "--wait", WAIT_S, "-o", out, env=env)
    assert run.returncode == 0, run.stderr
    proofs = [{"proof": json.loads((out / f"proof-{i}.json").read_text()),
               "public": json.loads((out / f"public-{i}.json").read_text())} for i in (0, 1)]
    _assert_snarkjs_accepts(fixtures[0], circuit, proofs, tmp_path)
    run = _proofq("result", "g16-cli", "--json", env=env)
    assert json.loads(run.stdout)["proofs"] == proofs
    assert json.loads(run.stdout)["proof_type"] == "circom"
    run = _proofq("submit", "--key", key, *witnesses, env=env)
    assert run.returncode == 2 and "--key: only with --type circom" in run.stderr
    run = _proofq("bench", "batch", "--type", "circom", "--key", key, "--wtns", witnesses[0],
                  "-c", "3", "-j", "2", "--json", env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["summary"]["completed"] == 3
