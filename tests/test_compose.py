"""docker-compose.yml and the Dockerfile checked against the real CLI and settings.

Without a Docker engine (``tests/test_compose_up.py`` brings the CPU profile up where one
runs), the file is parsed and every command it runs is given to the real ``celery`` or
``proofq`` command line (with ``--help`` appended: an unknown option still fails, nothing
starts), every ``PROOFQ_*`` variable must be a setting with a valid value, and the
installed compose (v1 or v2), if any, must accept the file in every profile.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from config.settings import Settings, load_settings

pytestmark = pytest.mark.slow  # every compose command run as a subprocess

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
WORKERS = {name: s for name, s in SERVICES.items() if s.get("command", [])[3:4] == ["worker"]}
GPU_WORKERS = {name: s for name, s in WORKERS.items() if "--gpu" in s["command"]}
#: Services of images other than proofq's (Debian's Redis and Prometheus).
OTHERS = ("redis", "prometheus")


#: The programs the image provides, as installed here (celery through this interpreter).
PROGRAMS = {"celery": [sys.executable, "-m", "celery"],
            "proofq": [str(Path(sys.executable).parent / "proofq")]}


def _cli_accepts(command: list[str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    return subprocess.run([*PROGRAMS[command[0]], *command[1:], "--help"],
                          capture_output=True, text=True, env=env, cwd="/", timeout=120)


@pytest.mark.parametrize("name", sorted(n for n in SERVICES if n not in OTHERS))
def test_every_command_is_accepted_by_the_real_cli(name):
    command = SERVICES[name]["command"]
    if command[0] == "celery":
        assert command[1:3] == ["-A", "tasks"], command
    run = _cli_accepts(command)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("command", [["celery", "-A", "tasks", "worker", "--gpus", "0"],
                                     ["proofq", "intake", "--reclaim", "5"]])
def test_the_cli_check_can_fail(command):
    run = _cli_accepts(command)
    assert run.returncode != 0 and command[-2] in run.stderr


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_environment_names_real_settings_with_valid_values(name, monkeypatch):
    everything = SERVICES[name].get("environment", {})
    env = {k: v for k, v in everything.items() if not k.startswith("FLOWER_")}  # Flower's own
    for key in env:
        assert key.startswith("PROOFQ_") and key[7:].lower() in Settings.model_fields, key
    for key in [k for k in os.environ if k.startswith("PROOFQ_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, str(value))
    settings = load_settings()
    if env:
        assert settings.redis_url == "redis://redis:6379/0"
        assert settings.visibility_timeout_s >= 3600


def test_one_gpu_worker_per_gpu_with_a_device_reservation_in_its_profiles():
    gpus = []
    for name, service in GPU_WORKERS.items():
        command = service["command"]
        gpu = int(command[command.index("--gpu") + 1])
        gpus.append(gpu)
        assert name == f"worker-gpu{gpu}" and command[command.index("-n") + 1] == f"gpu{gpu}@%h"
        [device] = service["deploy"]["resources"]["reservations"]["devices"]
        assert device["driver"] == "nvidia" and "gpu" in device["capabilities"]
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
        assert service["environment"]["PROOFQ_BACKEND"] == "gpu"
        assert service["image"] == "proofq-gpu:latest"
        assert service["build"]["args"]["EXTRAS"] == "gpu"
        assert "nvidia/cuda" in service["build"]["args"]["BASE_IMAGE"]
        assert f"gpu{gpu}@$$HOSTNAME" in service["healthcheck"]["test"][1]
    assert sorted(gpus) == list(range(len(gpus))) and gpus
    for count in (1, 2, 4, 8):
        profile = "gpu" if count == 1 else f"gpu{count}"
        assert sorted(n for n, s in GPU_WORKERS.items() if profile in s["profiles"]) == sorted(
            f"worker-gpu{g}" for g in range(count)), profile


def test_a_cpu_profile_worker_without_devices():
    service = SERVICES["worker-cpu"]
    assert service["profiles"] == ["cpu"] and "deploy" not in service
    assert service["environment"]["PROOFQ_BACKEND"] == "cpu"
    assert "--gpu" not in service["command"] and "-n" in service["command"]
    assert "cpu@$$HOSTNAME" in service["healthcheck"]["test"][1]


def test_every_service_has_a_healthcheck_and_only_workers_a_profile():
    for name, service in SERVICES.items():
        assert service["healthcheck"]["test"], name
        assert ("profiles" in service) == (name in WORKERS), name


def test_workers_serve_metrics_that_prometheus_scrapes():
    scraped = yaml.safe_load((ROOT / "docker" / "prometheus.yml").read_text())
    targets = {t for job in scraped["scrape_configs"] for c in job["static_configs"]
               for t in c["targets"]}
    for name, service in WORKERS.items():
        port = int(service["environment"]["PROOFQ_METRICS_PORT"])
        # reachable from Prometheus's container (the default is this host's loopback)
        assert service["environment"]["PROOFQ_METRICS_ADDRESS"] == "0.0.0.0", name
        command = service["command"]
        processes = int(command[command.index("-c") + 1])
        assert {f"{name}:{port + i}" for i in range(processes)} <= targets, name
    assert "flower:5555" in targets
    assert SERVICES["prometheus"]["build"]["dockerfile"] == "prometheus.Dockerfile"


def test_redis_keeps_an_append_only_file_and_ports_are_this_hosts_only():
    redis_command = SERVICES["redis"]["command"]
    assert redis_command[redis_command.index("--appendonly") + 1] == "yes"
    assert any("/data" in v for v in SERVICES["redis"]["volumes"])
    assert SERVICES["flower"]["command"][3] == "flower"
    for name, service in SERVICES.items():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), (name, port)
    # bound beyond loopback inside its container, so it is given a login (tasks/flower_guard)
    assert "--address=0.0.0.0" in SERVICES["flower"]["command"]
    assert "FLOWER_BASIC_AUTH" in SERVICES["flower"]["environment"]
    # and compose refuses to start without one (before: `up -d` exited 0 while Flower
    # restarted in a loop)
    assert SERVICES["flower"]["environment"]["FLOWER_BASIC_AUTH"].startswith(
        "${FLOWER_BASIC_AUTH:?")


def test_the_image_makes_every_volume_it_mounts_writable():
    """Before: the witnesses volume was created by Docker for root, unwritable by proofq."""
    text = (ROOT / "Dockerfile").read_text()
    made = set(re.findall(r"/var/lib/proofq/[\w-]+", text.split("mkdir -p", 1)[1]))
    for name, service in SERVICES.items():
        if name in OTHERS:
            continue
        for volume in service["volumes"]:
            target = re.search(r":(/[^:]+)", volume.split("}")[-1]).group(1)
            assert target in made, (name, target)
    assert "chown -R proofq /var/lib/proofq" in text


def test_dockerfile_builds_on_a_local_debian_base_and_installs_every_room():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE_IMAGE=proofq-base:bookworm$", text, re.M)
    assert re.search(r"^FROM \$\{BASE_IMAGE\}$", text, re.M)
    for room in ("config", "snark", "gpu", "workers", "tasks", "client"):
        assert re.search(rf"^COPY {room} {room}$", text, re.M), room
    assert SERVICES["flower"]["build"]["context"] == "." and (ROOT / "Dockerfile").exists()
    assert (ROOT / "docker" / "base-image.sh").exists()


def _compose() -> list[str] | None:
    """The installed compose: v2 (``docker compose``) or v1 (``docker-compose``)."""
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"],
                                                 capture_output=True).returncode == 0:
        return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


@pytest.mark.parametrize("profile", ["cpu", "gpu", "gpu2", "gpu4", "gpu8"])
def test_the_installed_compose_accepts_every_profile(profile):
    compose = _compose()
    if compose is None:
        pytest.skip("no docker compose or docker-compose installed")
    run = subprocess.run([*compose, "--profile", profile, "config", "-q"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
