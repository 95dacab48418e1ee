"""docker-compose.yml and the Dockerfile checked against the real CLI and settings.

There is no Docker engine here, so the file is parsed and every command it runs is given to
the real ``celery`` command line (with ``--help`` appended: an unknown option still fails,
nothing starts), and every ``PROOFQ_*`` variable must be a setting with a valid value.
"""

from __future__ import annotations

import os
import re
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
WORKERS = {name: s for name, s in SERVICES.items() if s["command"][3:4] == ["worker"]}


#: The programs the image provides, as installed here (celery through this interpreter).
PROGRAMS = {"celery": [sys.executable, "-m", "celery"],
            "proofq": [str(Path(sys.executable).parent / "proofq")]}


def _cli_accepts(command: list[str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    return subprocess.run([*PROGRAMS[command[0]], *command[1:], "--help"],
                          capture_output=True, text=True, env=env, cwd="/", timeout=120)


@pytest.mark.parametrize("name", sorted(n for n in SERVICES if n != "redis"))
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


def test_one_gpu_worker_per_gpu_with_a_device_reservation():
    gpus = []
    for name, service in WORKERS.items():
        command = service["command"]
        gpu = int(command[command.index("--gpu") + 1])
        gpus.append(gpu)
        assert name == f"worker-gpu{gpu}"
        [device] = service["deploy"]["resources"]["reservations"]["devices"]
        assert device["driver"] == "nvidia" and "gpu" in device["capabilities"]
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"
    assert sorted(gpus) == list(range(len(gpus))) and gpus


def test_redis_keeps_an_append_only_file_and_flower_is_served():
    redis_command = SERVICES["redis"]["command"]
    assert redis_command[redis_command.index("--appendonly") + 1] == "yes"
    assert any("/data" in v for v in SERVICES["redis"]["volumes"])
    assert SERVICES["flower"]["command"][3] == "flower"
    # bound beyond loopback inside its container, so it is given a login (tasks/flower_guard)
    assert "--address=0.0.0.0" in SERVICES["flower"]["command"]
    assert "FLOWER_BASIC_AUTH" in SERVICES["flower"]["environment"]
    assert any(p.endswith(":5555") for p in SERVICES["flower"]["ports"])


def test_dockerfile_builds_on_cuda_runtime_and_installs_every_room():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM nvidia/cuda:[\w.\-]+-runtime-", text, re.M)
    for room in ("config", "snark", "gpu", "workers", "tasks", "client"):
        assert re.search(rf"^COPY {room} {room}$", text, re.M), room
    assert '.[gpu]' in text
    assert SERVICES["flower"]["build"] == "." and (ROOT / "Dockerfile").exists()
