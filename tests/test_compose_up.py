"""The compose deployment brought up for real: the image built from the local Debian base,
the CPU profile started, a job proved through Redis's published port and one through the
intake stream, Prometheus scraping the workers, the healthchecks green, the volumes
writable and a key listed in the workers' params volume.

Skipped where no Docker daemon answers (CI has none); where one does, it takes minutes:
the base image is made once by ``docker/base-image.sh`` (about a minute), the Python
packages are built here as wheels so containers need no package index, and the images are
kept for the next run (the project's containers and volumes are removed).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import redis

from client.api import Client
from config.settings import load_settings
from snark.porep.prove import load_verifying_key, verify_c1
from snark.porep.seal import seal
from tasks.jobs import RESULTS_STREAM

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BASE_IMAGE = "proofq-base:bookworm"
WAIT_S = 900


def _docker_answers() -> bool:
    return shutil.which("docker") is not None and subprocess.run(
        ["docker", "info"], capture_output=True, timeout=60).returncode == 0


def _compose_command() -> list[str] | None:
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Deployment:
    """One compose project of this checkout, its published ports on free ones."""

    def __init__(self, compose: list[str]) -> None:
        self.project = f"proofqtest{uuid.uuid4().hex[:8]}"
        self.ports = {name: _free_port() for name in ("REDIS", "FLOWER", "PROMETHEUS")}
        self.env = {**os.environ, "PROOFQ_PIP_OFFLINE": "1",
                    # Flower binds its container's every interface: it needs a login
                    "FLOWER_BASIC_AUTH": f"ops:{uuid.uuid4().hex}",
                    **{f"PROOFQ_{name}_PORT": str(port) for name, port in self.ports.items()}}
        self.compose = [*compose, "-p", self.project, "--profile", "cpu"]

    def run(self, *args: str, timeout: float = WAIT_S, check: bool = True
            ) -> subprocess.CompletedProcess:
        done = subprocess.run([*self.compose, *args], cwd=ROOT, env=self.env, text=True,
                              capture_output=True, timeout=timeout)
        assert not check or done.returncode == 0, done.stdout + done.stderr
        return done

    def health(self) -> dict[str, str]:
        """Each container's service and health ('healthy', 'starting', … or the state)."""
        ids = self.run("ps", "-q").stdout.split()
        found = {}
        for info in json.loads(subprocess.run(["docker", "inspect", *ids], capture_output=True,
                                              text=True, check=True).stdout):
            service = info["Config"]["Labels"]["com.docker.compose.service"]
            state = info["State"]
            found[service] = state.get("Health", {}).get("Status", state["Status"])
        return found

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.ports['REDIS']}/0"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    if not _docker_answers():
        pytest.skip("no Docker daemon answers here")
    compose = _compose_command()
    if compose is None:
        pytest.skip("neither docker compose nor docker-compose is installed")
    if subprocess.run(["docker", "image", "inspect", BASE_IMAGE],
                      capture_output=True).returncode != 0:
        if shutil.which("debootstrap") is None:
            pytest.skip(f"no {BASE_IMAGE} and no debootstrap to make it")
        subprocess.run(["sh", str(ROOT / "docker" / "base-image.sh"), BASE_IMAGE], check=True,
                       capture_output=True, timeout=WAIT_S)
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the wheels for the Debian 12 image need this Python to be 3.11")
    subprocess.run(["sh", str(ROOT / "docker" / "wheels.sh")], check=True, capture_output=True,
                   env={**os.environ, "PYTHON": sys.executable}, timeout=WAIT_S)
    deployment = _Deployment(compose)
    started = time.monotonic()
    try:
        deployment.run("up", "-d", "--build")
        print(f"compose up --build: {time.monotonic() - started:.0f} s")
        yield deployment
    finally:
        logs = deployment.run("logs", "--tail", "40", check=False).stdout
        print(logs[-8000:])
        deployment.run("down", "-v", "--remove-orphans", check=False)


def _poll(condition, timeout_s: float = WAIT_S):
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            value = condition()
            if value:
                return value
        except (OSError, redis.RedisError, ValueError):
            pass
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(1.0)


def test_the_cpu_profile_comes_up_healthy_and_proves_jobs(deployment, tmp_path):
    services = {"redis", "flower", "intake", "prometheus", "worker-cpu"}
    started = time.monotonic()
    _poll(lambda: (health := deployment.health()).keys() == services
          and set(health.values()) == {"healthy"})
    print(f"all healthy after {time.monotonic() - started:.0f} s more")
    settings = load_settings(redis_url=deployment.redis_url)
    with Client(deployment.redis_url, settings) as client:
        c1 = seal(2048, 2, 1)
        started = time.monotonic()
        job = client.submit(c1)
        proof = client.result(job, timeout=WAIT_S)  # its key made by the container first
        print(f"first job (key setup included): {time.monotonic() - started:.1f} s")
        # From the intake stream, as a producer in another language would send it.
        other = seal(2048, 1, 1)
        client.store.redis.xadd("proofq:intake", {"job": "from-intake", "c1": other.to_json()})
        published = _poll(lambda: [f for _, f in client.store.redis.xrange(RESULTS_STREAM)
                                   if f[b"job"] == b"from-intake"])
        assert published[0][b"status"] == b"done", published

    # The keys the workers made lie in their params volume: listed there, and their
    # verifying keys check both proofs here.
    listed = json.loads(deployment.run("run", "--rm", "--no-deps", "worker-cpu", "proofq",
                                       "keys", "list", "--json").stdout)
    [key] = listed["keys"]  # one circuit: 2 KiB sectors of one challenge per partition
    assert key["kind"] == "proofq setup" and key["constraints"] > 0
    copied = tmp_path / "params"
    copied.mkdir(mode=0o777)
    copied.chmod(0o777)
    deployment.run("run", "--rm", "--no-deps", "-v", f"{copied}:/out", "worker-cpu", "sh", "-c",
                   "cp -r /var/lib/proofq/params/. /out/")
    assert verify_c1(c1, load_verifying_key(c1, copied), proof)
    assert verify_c1(other, load_verifying_key(other, copied),
                     bytes.fromhex(published[0][b"proof"].decode()))

    # Prometheus has scraped the workers' phase histograms and Flower answers.
    query = (f"http://127.0.0.1:{deployment.ports['PROMETHEUS']}/api/v1/query?"
             "query=sum(proofq_phase_seconds_count)")
    _poll(lambda: float(json.loads(_get(query))["data"]["result"][0]["value"][1]) >= 8 * 3)
    assert _get(f"http://127.0.0.1:{deployment.ports['FLOWER']}/healthcheck") == "OK"
    # Every target it lists is up: worker-cpu's two processes and Flower, scraped with its
    # login; the workers of the GPU profiles are not listed (before: 17 of 19 were down).
    expected = [("flower", "", "5555", "up"), ("proofq-workers", "worker-cpu", "9100", "up"),
                ("proofq-workers", "worker-cpu", "9101", "up")]
    seen: list = []
    try:
        _poll(lambda: seen.append(_scraped(deployment)) or seen[-1] == expected, timeout_s=120)
    except AssertionError:
        raise AssertionError(f"Prometheus's targets: {seen[-1:]}") from None

    # Every volume a worker writes is writable by the image's user.
    deployment.run("exec", "-T", "worker-cpu", "sh", "-c",
                   "touch /var/lib/proofq/witnesses/probe /var/lib/proofq/params/probe "
                   "/var/lib/proofq/native/probe")


def _scraped(deployment) -> list[tuple[str, str, str, str]]:
    """Prometheus's active targets: (job, compose service, port, health), sorted."""
    url = f"http://127.0.0.1:{deployment.ports['PROMETHEUS']}/api/v1/targets?state=active"
    targets = json.loads(_get(url))["data"]["activeTargets"]
    return sorted((t["labels"]["job"], t["labels"].get("service", ""),
                   t["scrapeUrl"].rsplit(":", 1)[1].split("/")[0], t["health"])
                  for t in targets)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()
