"""``proofq grpc`` as Curio meets it: a grpc-go client (tests/cuzk_go_client, built here from
Debian's golang-go and golang-google-grpc-dev against client/cuzk/proving.proto, dialling as
Curio's lib/cuzk/client.go does) talking to a real ``proofq grpc`` process on a real Redis,
with a real ``celery -A tasks worker`` where a proof is wanted.

PoRep requests are ``PoRepSnarkCuzk``'s: Curio's C1 wrapper of a sealed 2 KiB sector (sealed
for the miner and sector the request names, so the worker's replica_id check holds), Go's
registered proof number, NORMAL priority, request id ``porep-<miner>-<sector>``. SnapDeals
and PoSt requests (``ProveUpdateCuzk``, ``WindowPoStCuzk``, ``WinningPoStCuzk``) carry fresh
2 KiB test sectors' vanilla proofs, one bytes field each.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import redis

from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from snark.filecoin import curio_json, prover_id_for_miner, registered_proof, seal
from snark.filecoin.params import verifying_key_for
from snark.filecoin.post.job import curio_request, parse_post_job
from snark.filecoin.post.prove import Partition, verify_partition
from snark.filecoin.snap.generate import generate_update
from snark.filecoin.snap.shape import SnapShape
from snark.filecoin.snap.update import COMMITMENTS, SnapUpdate
from tasks.jobs import JOBS_INDEX
from tests.test_e2e_post import _request as post_fields
from tests.timing import scaled

ROOT = Path(__file__).resolve().parent.parent
GO_SOURCE = Path(__file__).resolve().parent / "cuzk_go_client" / "main.go"
PROTO = ROOT / "client" / "cuzk" / "proving.proto"
GIB = 1 << 30
POREP, SNAP, WINDOW, WINNING = 1, 2, 3, 4
NORMAL, HIGH, CRITICAL = 2, 3, 4
V1_1_2KIB = 5  # Go's RegisteredSealProof_StackedDrg2KiBV1_1


def _go_tools() -> str | None:
    missing = [tool for tool in ("go", "protoc", "protoc-gen-go") if shutil.which(tool) is None]
    return None if not missing else f"{', '.join(missing)} missing (.ci/run installs them)"


@pytest.fixture(scope="session")
def go_client(tmp_path_factory) -> Path:
    """The Go client, built offline from Debian's packages (GOPATH /usr/share/gocode)."""
    why = _go_tools()
    if why is not None:
        pytest.skip(why)
    work = tmp_path_factory.mktemp("go")
    package = work / "src" / "cuzkclient"
    (package / "cuzk").mkdir(parents=True)
    shutil.copy(PROTO, work / "proving.proto")
    subprocess.run(["protoc", "-I.", "--go_out=plugins=grpc,Mproving.proto=cuzkclient/cuzk:"
                    "src/cuzkclient/cuzk", "proving.proto"], cwd=work, check=True)
    shutil.copy(GO_SOURCE, package / "main.go")
    env = {**os.environ, "GOPATH": f"{work}:/usr/share/gocode", "GO111MODULE": "off",
           "GOFLAGS": "", "GOCACHE": str(work / "cache")}
    subprocess.run(["go", "build", "-o", str(work / "cuzkclient"), "cuzkclient"], cwd=work,
                   env=env, check=True, timeout=600)
    return work / "cuzkclient"


class Gateway:
    """``proofq grpc`` as a process: TCP and a unix socket."""

    def __init__(self, redis_url: str, log_dir: Path, *, args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None,
                 client_env: dict[str, str] | None = None) -> None:
        self.redis_url = redis_url
        self.args = args
        self.env = env or {}
        self.client_env = client_env or {}
        self.port = _free_port()
        self.socket = log_dir / "cuzk.sock"
        self.log_path = log_dir / "gateway.log"
        self.proc: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, go: Path) -> "Gateway":
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "client", "grpc", "--listen", self.address,
                 "--listen", f"unix://{self.socket}", *self.args], stdout=log,
                stderr=subprocess.STDOUT, env={**os.environ, **self.env,
                                               "PROOFQ_REDIS_URL": self.redis_url,
                                               "PYTHONPATH": str(ROOT)}, cwd=ROOT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if call(go, self.address, "metrics", env=self.client_env).get("prometheus_text"):
                return self
            assert self.proc.poll() is None, self.log()
            time.sleep(0.3)
        raise AssertionError("the gateway did not answer:\n" + self.log())

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call(go: Path, address: str, *args: str, timeout: float = 900,
         env: dict[str, str] | None = None) -> dict:
    """One RPC through the Go client: its JSON answer (an error as {"code", "message"})."""
    done = subprocess.run([str(go), address, *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})
    assert done.returncode in (0, 3), done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def request_file(tmp: Path, name: str, *, c1: Path | None, miner: int, sector: int,
                 kind: int = POREP, proof: int = V1_1_2KIB, size: int = 2048,
                 **extra) -> Path:
    path = tmp / f"request-{name}.json"
    path.write_text(json.dumps({
        "request_id": f"porep-{miner}-{sector}", "proof_kind": kind, "sector_size": size,
        "registered_proof": proof, "priority": NORMAL,
        "vanilla_proof_file": str(c1) if c1 else "", "sector_number": sector,
        "miner_id": miner, **extra}))
    return path


def sealed_c1(tmp: Path, miner: int, sector: int, seed: int,
              name: str = "StackedDrg2KiBV1_1") -> Path:
    """Curio's wrapper around a fresh 2 KiB sector of ``name`` sealed for ``miner``/``sector``."""
    c1 = seal(registered_proof(name), np.random.default_rng(seed),
              prover_id=prover_id_for_miner(miner), sector_id=sector)
    path = tmp / f"c1-{miner}-{sector}.json"
    path.write_bytes(curio_json(c1, sector))
    return path


def vanilla_request(tmp: Path, name: str, kind: int, *, proof: int, vanilla: list[bytes],
                    size: int = 2048, priority: int = NORMAL, **fields) -> Path:
    """A SnapDeals or PoSt request: its vanilla proofs one file each, bytes fields as hex."""
    files = []
    for i, raw in enumerate(vanilla):
        files.append(tmp / f"vanilla-{name}-{i}.bin")
        files[-1].write_bytes(raw)
    path = tmp / f"request-{name}.json"
    path.write_text(json.dumps({
        "request_id": name, "proof_kind": kind, "sector_size": size, "registered_proof": proof,
        "priority": priority, "vanilla_proofs_files": [str(f) for f in files],
        **{k: v.hex() if isinstance(v, bytes) else v for k, v in fields.items()}}))
    return path


def snap_request(tmp: Path, name: str, update: SnapUpdate, **changes) -> Path:
    """``ProveUpdateCuzk``'s request for ``update``, ``changes`` made."""
    fields = {"proof": update.registered_proof, "vanilla": list(update.vanilla_proofs),
              **{c: getattr(update, c) for c in COMMITMENTS}}
    return vanilla_request(tmp, name, SNAP, **{**fields, **changes})


def post_request(tmp: Path, name: str, fields: tuple, **changes) -> Path:
    """A PoSt request from ``post_fields`` (``curio_request``'s arguments), ``changes`` made."""
    kind, go_id, elements, randomness, miner, partition, _ = fields
    return vanilla_request(tmp, name, changes.pop("kind", kind), **{
        "proof": go_id, "vanilla": elements, "randomness": randomness, "miner_id": miner,
        "partition_index": partition, **changes})


@pytest.fixture()
def gateway(go_client, redis_url, tmp_path):
    gate = Gateway(redis_url, tmp_path).start(go_client)
    yield gate
    gate.stop()


# -- no worker: answers that need none ----------------------------------------------------

def test_bad_requests_get_clear_answers_and_the_server_keeps_serving(go_client, gateway,
                                                                     redis_url, tmp_path, rng):
    miner, sector = rng.randrange(1000, 1 << 40), rng.randrange(1 << 30)
    c1 = sealed_c1(tmp_path, miner, sector, rng.getrandbits(64))
    text = c1.read_bytes()
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(text[:len(text) // 2])
    cut_inside = tmp_path / "cut-inside.json"  # base64 ends early, the wrapper closes
    start = text.index(b'"Phase1Out":"') + 13
    cut_inside.write_bytes(text[:start] + text[start:start + (len(text) - start) // 2 // 4 * 4]
                           + text[text.index(b'"', start):])
    go = lambda name, **kw: call(go_client, gateway.address, "prove",  # noqa: E731
                                 str(request_file(tmp_path, name, miner=miner, sector=sector,
                                                  **kw)))
    answers = {
        "truncated": go("truncated", c1=truncated),
        "cut inside": go("cut-inside", c1=cut_inside),
        "wrong registered proof": go("wrong-proof", c1=c1, proof=0),
        "wrong sector size": go("wrong-size", c1=c1, size=8 << 20),
        "NI-PoRep": go("niporep", c1=c1, proof=15),
        "synthetic of a V1_1 C1": go("synthetic", c1=c1, proof=10),
        "wrong sector number": go("wrong-sector", c1=c1, sector_number=sector + 1),
    }
    expected = {
        "truncated": "vanilla_proof: Phase1Out: the string does not end",
        "cut inside": "vanilla_proof: Phase1Out: not valid JSON",
        "wrong registered proof": "registered_proof: 0 is StackedDrg2KiBV1, but the C1 is a "
                                  "StackedDrg2KiBV1_1 one",
        "wrong sector size": "sector_size: 8388608 is not the sector size of StackedDrg2KiBV1_1",
        "NI-PoRep": "registered_proof: 15 (StackedDrg2KiBV1_2_Feat_NonInteractivePoRep) is "
                    "non-interactive PoRep",
        "synthetic of a V1_1 C1": "registered_proof: 10 is StackedDrg2KiBV1_1_Feat_SyntheticPoRep, "
                                  "but the C1 is a StackedDrg2KiBV1_1 one",
        "wrong sector number": f"sector_number: {sector + 1}, but the C1 wrapper's SectorNum "
                              f"is {sector}",
    }
    for name, answer in answers.items():
        result = answer.get("result", {})
        assert result.get("status") == 2, (name, answer)  # FAILED
        assert expected[name] in result["error_message"], (name, answer)
        assert "\n" not in result["error_message"]
    unknown = go("unknown", c1=c1, kind=9)
    assert unknown["code"] == "InvalidArgument" and "proof_kind: 9" in unknown["message"]
    empty = call(go_client, gateway.address, "prove",
                 str(request_file(tmp_path, "none", c1=None, miner=1, sector=1, no_submit=True)))
    assert empty["code"] == "InvalidArgument" and "submit" in empty["message"]
    huge = go("huge", c1=c1, vanilla_proof_pad=300 << 20)
    assert huge["code"] == "ResourceExhausted", huge
    # Still serving, on both listeners; no job was made of any of it.
    for address in (gateway.address, f"unix://{gateway.socket}"):
        status = call(go_client, address, "status")
        assert {q["proof_kind"] for q in status["queues"]} == {
            "porep-c2", "snap-update", "window-post", "winning-post"}
    assert redis.Redis.from_url(redis_url).zcard(JOBS_INDEX) == 0
    log = gateway.log()
    assert log.count("Prove job=") == len(answers) + 2, log  # 300 MiB: refused by gRPC


def test_malformed_snap_and_post_requests_fail_naming_the_field(go_client, gateway, redis_url,
                                                               tmp_path, rng):
    np_rng = np.random.default_rng(rng.getrandbits(64))
    update = generate_update(SnapShape(64), np_rng)
    window, winning = post_fields("window", np_rng), post_fields("winning", np_rng)
    noise = np_rng.bytes
    cases = {
        "snap bincode": (snap_request(tmp_path, "s1", update, vanilla=[noise(15064)]),
                         "vanilla_proofs[0]."),
        "snap registered proof": (snap_request(tmp_path, "s2", update, proof=7),
                                  "registered_proof: 7 is not a registered update proof"),
        "snap sector size": (snap_request(tmp_path, "s3", update, size=8 << 20),
                             "sector_size: 8388608 is not the 2KiB of registered_proof 0"),
        "snap commitment": (snap_request(tmp_path, "s4", update, comm_r_new=bytes(31)),
                            "comm_r_new: expected 32 raw bytes, got 31"),
        "window bincode": (post_request(tmp_path, "p1", window, vanilla=[noise(5680)]),
                           "vanilla_proofs[0]."),
        "window proof as winning": (post_request(tmp_path, "p2", window, kind=WINNING),
                                    "registered_proof: 10 is StackedDrgWindow2KiBV1_1, not a "
                                    "winning"),
        "winning registered proof": (post_request(tmp_path, "p3", winning, proof=99),
                                     "registered_proof: 99 is not a PoSt proof"),
        "winning sector size": (post_request(tmp_path, "p4", winning, size=8 << 20),
                                "sector_size: 8388608 is not the size of StackedDrgWinning2KiB"),
        "window randomness": (post_request(tmp_path, "p5", window, randomness=bytes(31)),
                              "randomness: expected 32 bytes"),
    }
    for name, (request, expected) in cases.items():  # a request taken would wait: 60 s
        answer = call(go_client, gateway.address, "prove", str(request), timeout=60)
        result = answer.get("result", {})
        assert result.get("status") == 2, (name, answer)  # FAILED
        assert result["error_message"].startswith(expected), (name, answer)
        assert "\n" not in result["error_message"]
    assert "queues" in call(go_client, gateway.address, "status")  # still serving
    assert redis.Redis.from_url(redis_url).zcard(JOBS_INDEX) == 0
    assert gateway.log().count("Prove job=") == len(cases)


def test_submit_await_cancel_and_a_new_attempt(go_client, gateway, redis_url, tmp_path, rng):
    miner, sector = rng.randrange(1000, 1 << 40), rng.randrange(1 << 30)
    c1 = sealed_c1(tmp_path, miner, sector, rng.getrandbits(64))
    request = str(request_file(tmp_path, "req", c1=c1, miner=miner, sector=sector))
    submitted = call(go_client, gateway.address, "submit", request)
    job = submitted["job_id"]
    assert job == f"porep-{miner}-{sector}"
    again = call(go_client, gateway.address, "submit", request)
    assert again["job_id"] == job  # attached, not a second job
    waited = call(go_client, gateway.address, "await", job, "300")
    assert waited["status"] == 4  # TIMEOUT: no worker
    status = call(go_client, gateway.address, "status")
    porep = next(q for q in status["queues"] if q["proof_kind"] == "porep-c2")
    assert porep.get("pending") == 1
    cancelled = call(go_client, gateway.address, "cancel", job)
    assert not cancelled.get("was_running")
    assert call(go_client, gateway.address, "await", job, "0")["status"] == 3  # CANCELLED
    retry = call(go_client, gateway.address, "submit", request)
    assert retry["job_id"] == f"{job}.2"  # a cancelled job is proved again under a new id
    shown = subprocess.run([sys.executable, "-m", "client", "status", f"{job}.2", "--json"],
                           capture_output=True, text=True, cwd=ROOT,
                           env={**os.environ, "PROOFQ_REDIS_URL": redis_url})
    assert json.loads(shown.stdout)["request_id"] == f"porep-{miner}-{sector}", shown
    missing = call(go_client, gateway.address, "await", "no-such-job", "0")
    assert missing["code"] == "NotFound"
    metrics = call(go_client, gateway.address, "metrics")["prometheus_text"]
    assert 'proofq_cuzk_queue{proof_kind="porep_c2",state="pending"} 1' in metrics
    assert 'proofq_cuzk_jobs{status="cancelled"} 1' in metrics


def test_redis_stopped_during_a_prove_is_unavailable(go_client, tmp_path, rng):
    miner, sector = rng.randrange(1000, 1 << 40), rng.randrange(1 << 30)
    c1 = sealed_c1(tmp_path, miner, sector, rng.getrandbits(64))
    request = str(request_file(tmp_path, "req", c1=c1, miner=miner, sector=sector))
    with EmbeddedRedis() as server:
        gate = Gateway(server.url, tmp_path).start(go_client)
        try:
            answer: dict = {}
            prove = threading.Thread(target=lambda: answer.update(
                call(go_client, gate.address, "prove", request)))
            prove.start()
            deadline = time.monotonic() + scaled(60)
            while not redis.Redis.from_url(server.url).exists(f"proofq:job:porep-{miner}-{sector}"):
                assert time.monotonic() < deadline, gate.log()
                time.sleep(0.1)
            server.shut_down()
            prove.join(scaled(300))
            assert not prove.is_alive(), f"Prove still waiting after Redis stopped: {gate.log()}"
            assert answer.get("code") == "Unavailable", answer
            assert "redis: unreachable" in answer["message"]
            status = call(go_client, gate.address, "status")
            assert status.get("code") == "Unavailable"
            server.restart()
            assert "queues" in call(go_client, gate.address, "status")
        finally:
            gate.stop()


def test_a_token_and_tls_for_remote_use(go_client, redis_url, tmp_path):
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    token = os.urandom(16).hex()
    good = {"PROOFQ_TLS_CA": str(cert), "PROOFQ_TOKEN": token}
    gate = Gateway(redis_url, tmp_path, args=("--tls-cert", str(cert), "--tls-key", str(key)),
                   env={"PROOFQ_GRPC_TOKEN": token}, client_env=good).start(go_client)
    try:
        assert "queues" in call(go_client, gate.address, "status", env=good)
        wrong = call(go_client, gate.address, "status", env={**good, "PROOFQ_TOKEN": "nope"})
        assert wrong["code"] == "Unauthenticated", wrong
        plain = call(go_client, gate.address, "status", env={"PROOFQ_TOKEN": token},
                     timeout=60)
        assert plain["code"] == "Unavailable", plain  # no TLS: no connection at all
    finally:
        gate.stop()


# -- through a worker ---------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.timeout(2400)  # a 2 KiB WinningPoSt on the CPU, and the session's keys
def test_prove_through_celery_across_a_gateway_kill_verified_and_idempotent(
        go_client, filecoin_2kib_dev_params, post_2kib_dev_params, tmp_path, rng):
    """kill -9 of the gateway while Curio's Prove waits (a WinningPoSt: seconds to prove):
    the retry gets the one proof, which verifies; the same request again gets the same bytes
    and no second job; a C1 sealed for another miner fails on the worker's replica_id check.
    (A PoRep proved through the gateway: the every-kind test below.)"""
    params = tmp_path / "params"
    for keys in (filecoin_2kib_dev_params, post_2kib_dev_params):
        shutil.copytree(keys, params, dirs_exist_ok=True)
    fields = post_fields("winning", np.random.default_rng(rng.getrandbits(64)))
    miner, sector = rng.randrange(1000, 1 << 40), rng.randrange(1, 1 << 30)
    c1 = sealed_c1(tmp_path, miner, sector, rng.getrandbits(64))
    env = {"PROOFQ_PARAMS_DIR": str(params), "PROOFQ_BACKEND": "cpu",
           "PROOFQ_FILECOIN_KEY": "development"}
    os.environ.update(env)  # the gateway's producer too (the key its jobs name)
    with EmbeddedRedis() as server:
        store = redis.Redis.from_url(server.url)
        worker = WorkerProcess(server.url, worker_command(gpu=0, concurrency=1, node="cz@%h"),
                               log_dir=tmp_path, env=env).start()
        gate = Gateway(server.url, tmp_path).start(go_client)
        try:
            winning = post_request(tmp_path, "winning", fields, priority=CRITICAL)
            waiting = subprocess.Popen([str(go_client), gate.address, "prove", str(winning)],
                                       stdout=subprocess.PIPE, text=True)
            deadline = time.monotonic() + 120
            while store.zcard(JOBS_INDEX) == 0:
                assert time.monotonic() < deadline, gate.log()
                time.sleep(0.05)
            gate.kill()
            cut = json.loads(waiting.communicate(timeout=60)[0].strip())
            assert cut["code"] == "Unavailable", cut
            gate.start(go_client)
            answer = call(go_client, gate.address, "prove", str(winning))["result"]
            assert answer.get("status") == 1, (answer, worker.log_tail(), gate.log())
            proof = base64.b64decode(answer["proof"])
            assert len(proof) == 192
            assert answer["total_ms"] >= answer.get("gpu_compute_ms", 0) > 0
            assert answer.get("synthesis_ms", 0) > 0
            job = parse_post_job(curio_request(*fields)[1], None, max_bytes=1 << 26)
            vk = verifying_key_for(job.proof, "development", params, params)
            assert verify_partition(Partition(job.sectors, job.randomness, job.partition_index),
                                    vk, proof)
            # The same request again: the same job, the same bytes, no second proof.
            again = call(go_client, gate.address, "prove", str(winning))["result"]
            assert again["proof"] == answer["proof"]
            assert store.zcard(JOBS_INDEX) == 1
            status = call(go_client, gate.address, "status")
            assert status["gpus"][0]["name"].startswith("CPU")
            assert status["total_proofs_completed"] == 1
            assert any(s["circuit_id"] == "winning-2k" for s in status.get("loaded_srs", [])), \
                status
            # A PoRep request for another miner's sector fails on the worker's replica_id check.
            other = request_file(tmp_path, "other", c1=c1, miner=miner + 1, sector=sector)
            wrong = call(go_client, gate.address, "prove", str(other))["result"]
            assert wrong["status"] == 2 and "replica_id" in wrong["error_message"], wrong
            assert store.zcard(JOBS_INDEX) == 2
            assert "Prove job=porep-" in gate.log()
        finally:
            gate.stop()
            worker.stop(graceful=False)


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.timeout(3600)  # four 2 KiB proofs on the CPU (and the session's keys)
def test_every_kind_through_celery_to_a_verified_proof(go_client, filecoin_2kib_dev_params,
                                                      snap_2kib_dev_params,
                                                      post_2kib_dev_params, tmp_path, rng):
    """One request of each kind Curio sends besides plain PoRep (a synthetic PoRep sector, a
    SnapDeals update, a WindowPoSt partition, a WinningPoSt), submitted at the priorities
    Curio gives them, proved by one worker and verified."""
    params = tmp_path / "params"  # the session's three keys in one directory
    for keys in (filecoin_2kib_dev_params, snap_2kib_dev_params, post_2kib_dev_params):
        shutil.copytree(keys, params, dirs_exist_ok=True)
    np_rng = np.random.default_rng(rng.getrandbits(64))
    miner, sector = rng.randrange(1000, 1 << 40), rng.randrange(1, 1 << 30)
    c1 = sealed_c1(tmp_path, miner, sector, rng.getrandbits(64),
                   "StackedDrg2KiBV1_1_Feat_SyntheticPoRep")
    update = generate_update(SnapShape(64), np_rng)
    posts = {"window": post_fields("window", np_rng), "winning": post_fields("winning", np_rng)}
    requests = {
        "synthetic": request_file(tmp_path, "synthetic", c1=c1, miner=miner, sector=sector,
                                  proof=10),
        "snap": snap_request(tmp_path, "snap", update),
        "window": post_request(tmp_path, "window", posts["window"], priority=HIGH),
        "winning": post_request(tmp_path, "winning", posts["winning"], priority=CRITICAL),
    }
    env = {"PROOFQ_PARAMS_DIR": str(params), "PROOFQ_BACKEND": "cpu",
           "PROOFQ_FILECOIN_KEY": "development"}
    with EmbeddedRedis() as server:
        store = redis.Redis.from_url(server.url)
        worker = WorkerProcess(server.url, worker_command(gpu=None, concurrency=1,
                                                          node="kinds@%h"),
                               log_dir=tmp_path, env=env).start()
        gate = Gateway(server.url, tmp_path, env=env).start(go_client)
        try:
            jobs = {name: call(go_client, gate.address, "submit", str(path))["job_id"]
                    for name, path in requests.items()}
            priorities = {name: store.hget(f"proofq:job:{job}", "priority").decode()
                          for name, job in jobs.items()}
            answers = {name: call(go_client, gate.address, "await", job, "0",
                                  timeout=scaled(1800)) for name, job in jobs.items()}
        finally:
            gate.stop()
            worker.stop(graceful=False)
    assert priorities == {"synthetic": "normal", "snap": "normal", "window": "high",
                          "winning": "critical"}
    proofs = {}
    for name, answer in answers.items():
        assert answer.get("status") == 1, (name, answer, worker.log_tail())  # COMPLETED
        proofs[name] = base64.b64decode(answer["proof"])
        assert len(proofs[name]) == 192, name  # 192 per partition: each has one at 2 KiB
    for name, proof in proofs.items():
        (tmp_path / f"{name}.proof").write_bytes(proof)
    (tmp_path / "update.json").write_text(update.to_json())
    checks = {"synthetic": ("--c1", str(c1), "--miner-id", str(miner)),
              "snap": ("--update", str(tmp_path / "update.json"))}
    for name, args in checks.items():
        verify = subprocess.run(
            [sys.executable, "-m", "client", "verify", *args, "--proof",
             str(tmp_path / f"{name}.proof"), "--key", "development"], capture_output=True,
            text=True, env={**os.environ, "PROOFQ_PARAMS_DIR": str(params)}, cwd=ROOT)
        assert verify.returncode == 0 and "valid" in verify.stdout, (name, verify.stdout,
                                                                      verify.stderr)
    another_miner = subprocess.run(  # V1_1's circuit and key, the synthetic challenges
        [sys.executable, "-m", "client", "verify", "--c1", str(c1), "--miner-id",
         str(miner + 1), "--proof", str(tmp_path / "synthetic.proof"), "--key", "development"],
        capture_output=True, text=True, env={**os.environ, "PROOFQ_PARAMS_DIR": str(params)},
        cwd=ROOT)
    assert another_miner.returncode == 1, another_miner.stdout + another_miner.stderr
    for name, fields in posts.items():
        job = parse_post_job(curio_request(*fields)[1], None, max_bytes=1 << 26)
        vk = verifying_key_for(job.proof, "development", params, params)
        partition = Partition(job.sectors, job.randomness, job.partition_index)
        assert verify_partition(partition, vk, proofs[name]), name
        assert not verify_partition(Partition(job.sectors, bytes(32), job.partition_index), vk,
                                    proofs[name]), name


# -- keys on request (PreloadSRS, EvictSRS) and totals ------------------------------------

def _tiny_key_as(params: Path, circuit_id: str, rng) -> int:
    """A small random circuit's key saved where the workers look for ``circuit_id``'s
    development key (``PROOFQ_FILECOIN_KEY=development``): what a preload loads is a key
    directory, whatever circuit it holds. Its resident bytes."""
    from client.cuzk.circuits import circuit
    from snark import groth16
    from tests.circuits import random_circuit
    from workers.ledger import key_bytes

    stem = circuit(circuit_id).key_name("development")
    key = groth16.setup(random_circuit(num_inputs=2, num_constraints=60, rng=rng).compile(),
                        circuit_id=stem)
    key.save(params)
    return key_bytes(key)


def _cards(redis_url: str) -> list:
    from workers.card import read_cards

    return read_cards(redis.Redis.from_url(redis_url), "proofq:card:")


@pytest.mark.timeout(600)
def test_preload_and_evict_go_through_every_live_worker(go_client, redis_url, tmp_path, rng):
    params = tmp_path / "params"
    nbytes = _tiny_key_as(params, "porep-2k", rng)
    env = {"PROOFQ_PARAMS_DIR": str(params), "PROOFQ_BACKEND": "cpu",
           "PROOFQ_FILECOIN_KEY": "development"}
    worker = WorkerProcess(redis_url, worker_command(gpu=None, concurrency=2, node="srs@%h"),
                           log_dir=tmp_path, env=env).start()
    gate = Gateway(redis_url, tmp_path, env=env).start(go_client)
    try:
        deadline = time.monotonic() + scaled(240)
        while len(_cards(redis_url)) < 2:  # each pool process's runtime has its card
            assert time.monotonic() < deadline and worker.alive(), worker.log_tail()
            time.sleep(0.3)
        rpc = lambda *args: call(go_client, gate.address, *args, timeout=300)  # noqa: E731
        assert not rpc("status").get("loaded_srs")
        first = rpc("preload", "porep-2k")
        assert not first.get("already_loaded") and first.get("load_time_ms", 0) > 0, (
            first, gate.log(), worker.log_tail())
        loaded = rpc("status")["loaded_srs"]
        assert [(s["circuit_id"], s["size_bytes"], s["ref_count"]) for s in loaded] == [
            ("porep-2k", nbytes, 2)], loaded  # one copy per CPU process
        assert rpc("preload", "porep-2k") == {"already_loaded": True}
        evicted = rpc("evict", "porep-2k")
        assert evicted == {"was_loaded": True, "freed_bytes": 2 * nbytes}, evicted
        assert not rpc("status").get("loaded_srs")
        assert not any(card.keys for card in _cards(redis_url))
        assert rpc("evict", "porep-2k") == {}  # was_loaded false, nothing freed
        unknown = rpc("preload", "porep-3g")
        assert unknown["code"] == "InvalidArgument", unknown
        assert "porep-3g" in unknown["message"] and "winning-32g" in unknown["message"]
        assert rpc("evict", "")["code"] == "InvalidArgument"
        missing = rpc("preload", "snap-2k")  # no key of it on the workers' disk
        assert missing["code"] == "FailedPrecondition", missing
        from client.cuzk.circuits import circuit
        assert (f"$PROOFQ_PARAMS_DIR/{circuit('snap-2k').key_name('development')}/"
                f"manifest.json: missing") in missing["message"], missing
        assert "\n" not in missing["message"]
        log = gate.log()
        assert "PreloadSRS job=porep-2k" in log and "on 2 of 2 workers" in log, log
    finally:
        gate.stop()
        worker.stop(graceful=False)


def test_preload_with_no_live_worker_and_totals_that_outlive_their_jobs(
        go_client, gateway, redis_url, rng):
    from tasks.jobs import JobStore

    answer = call(go_client, gateway.address, "preload", "wpost-32g")
    assert answer["code"] == "FailedPrecondition" and "no worker is live" in answer["message"]
    assert call(go_client, gateway.address, "evict", "wpost-32g") == {}
    store = JobStore(redis.Redis.from_url(redis_url), ttl_s=1, results_maxlen=100)
    done, failed = rng.randrange(1, 4), rng.randrange(1, 4)
    for n in range(done + failed + 1):
        job = f"totals-{n}-{rng.getrandbits(32):x}"
        store.create(job, digest=f"d{n}", proof_type="filecoin", partitions=1,
                     priority="normal", input_json="{}")
        if n < done:
            store.begin_partition(job, 0, max_attempts=3)
            store.store_part(job, 0, b"\x01" * 192)
            assert store.finish(job, b"\x01" * 192) == "done"
            assert store.finish(job, b"\x01" * 192) == "done"  # a second end counts nothing
        elif n < done + failed:
            assert store.fail(job, "prove: no") == "failed"
            assert store.fail(job, "prove: again") == "failed"
        else:
            store.cancel(job)
    time.sleep(2.5)  # every job's state expires (ttl 1 s)
    assert not redis.Redis.from_url(redis_url).keys("proofq:job:totals-*")
    status = call(go_client, gateway.address, "status")
    assert (status.get("total_proofs_completed"), status.get("total_proofs_failed")) == (
        done, failed), status
    metrics = call(go_client, gateway.address, "metrics")["prometheus_text"]
    assert f'proofq_cuzk_jobs_ended_total{{status="done"}} {done}' in metrics
    assert 'proofq_cuzk_jobs_ended_total{status="cancelled"} 1' in metrics


def test_a_worker_that_does_not_answer_bounds_the_wait_by_the_callers_deadline(
        gateway, redis_url, rng):
    """A card still live whose process answers nothing (hung, or dead within its lease): the
    caller's deadline bounds PreloadSRS and EvictSRS, named in a DEADLINE_EXCEEDED (grpcio,
    which sets a deadline; the Go client sets none)."""
    import grpc

    from client.cuzk import proving_pb2 as pb
    from client.cuzk import proving_pb2_grpc as pb_grpc
    from workers.card import Card, WorkerCard

    silent = f"silent-{rng.getrandbits(32):08x}"
    WorkerCard(redis.Redis.from_url(redis_url), Card(silent, "host", "GPU-s", 0, "H200", 1),
               lease_s=120, prefix="proofq:card:").renew()
    stub = pb_grpc.ProvingEngineStub(grpc.insecure_channel(gateway.address))
    for rpc, request in ((stub.PreloadSRS, pb.PreloadSrsRequest(circuit_id="porep-32g")),
                         (stub.EvictSRS, pb.EvictSrsRequest(circuit_id="snap-64g"))):
        began = time.monotonic()
        with pytest.raises(grpc.RpcError) as error:
            rpc(request, timeout=4)
        assert error.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert silent in error.value.details() and "did not answer" in error.value.details()
        assert time.monotonic() - began < 4 + scaled(2)
