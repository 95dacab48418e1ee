"""docker-compose.yml and the Dockerfile checked against the real CLI and settings.

Without a Docker engine (``tests/test_compose_up.py`` brings the CPU profile up where one
runs), the file is parsed and every command it runs is given to the real ``celery`` or
``proofq`` command line (with ``--help`` appended: an unknown option still fails, nothing
starts), every ``PROOFQ_*`` variable must be a setting with a valid value, and the
installed compose (v1 or v2), if any, must accept the file in every profile.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

from config.settings import Settings, load_model, load_settings
from snark.plugins import load_attribute
from snark.registry import plugins

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


def _settings_variables() -> dict[str, type]:
    """Every ``PROOFQ_…`` variable a setting reads, with its model: proofq's own and each
    installed proof type's (``PROOFQ_<TYPE>_…``)."""
    models = {Settings} | {load_attribute(p.settings) for p in plugins() if p.settings}
    return {f"{model.model_config.get('env_prefix', '')}{field}".upper(): model
            for model in models for field in model.model_fields}


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_environment_names_real_settings_with_valid_values(name, monkeypatch):
    everything = SERVICES[name].get("environment", {})
    env = {k: v for k, v in everything.items() if not k.startswith("FLOWER_")}  # Flower's own
    known = _settings_variables()
    for key in env:
        assert key.startswith("PROOFQ_") and key in known, key
    for key in [k for k in os.environ if k.startswith("PROOFQ_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, str(value))
    for model in {known[key] for key in env} - {Settings}:
        load_model(model)  # a type's settings with the service's values: valid
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


ENTRYPOINT = ROOT / "docker" / "prometheus-entrypoint.sh"
#: The entrypoint's paths in the image, from its ``${VAR:-default}`` lines.
ENTRYPOINT_DEFAULTS = dict(re.findall(r"\$\{(PROMETHEUS_\w+):-([^}]+)\}", ENTRYPOINT.read_text()))
#: Stands in for Prometheus: prints its process id and its arguments, one a line.
FAKE_PROMETHEUS = '#!/bin/sh\necho "$$"\nprintf "%s\\n" "$@"\n'


def _scrape_jobs() -> dict[str, dict]:
    config = yaml.safe_load((ROOT / "docker" / "prometheus.yml").read_text())
    return {job["job_name"]: job for job in config["scrape_configs"]}


def test_every_worker_process_is_discovered_and_only_running_services_listed():
    """Before: static targets of every profile's workers, 16 down on the cpu profile.  Now
    the workers are found by name through Docker's DNS (no answer: no target), and a static
    target names only a service that every profile starts."""
    jobs = _scrape_jobs()
    discovered = set()
    for job in jobs.values():
        for sd in job.get("dns_sd_configs", []):
            assert sd["type"] == "A", sd  # Docker's embedded DNS answers A, not SRV
            discovered |= {(name, sd["port"]) for name in sd["names"]}
        for static in job.get("static_configs", []):
            for target in static["targets"]:
                host = target.rsplit(":", 1)[0]
                assert host in SERVICES and "profiles" not in SERVICES[host], target
    assert {name for name, _ in discovered} == set(WORKERS)
    for name, service in WORKERS.items():
        port = int(service["environment"]["PROOFQ_METRICS_PORT"])
        # reachable from Prometheus's container (the default is this host's loopback)
        assert service["environment"]["PROOFQ_METRICS_ADDRESS"] == "0.0.0.0", name
        command = service["command"]
        processes = int(command[command.index("-c") + 1])
        assert {(name, port + i) for i in range(processes)} <= discovered, name
    assert SERVICES["prometheus"]["build"]["dockerfile"] == "prometheus.Dockerfile"


def test_flower_is_scraped_with_its_login_which_the_image_never_holds():
    flower = _scrape_jobs()["flower"]
    [static] = flower["static_configs"]
    port = SERVICES["flower"]["command"][-1].removeprefix("--port=")
    assert static["targets"] == [f"flower:{port}"]
    assert flower["basic_auth"] == {"username": "@FLOWER_USER@",
                                    "password_file": "flower-password"}
    prometheus = SERVICES["prometheus"]
    # the same variable as Flower's, refused the same way when unset
    assert prometheus["environment"]["FLOWER_BASIC_AUTH"] == (
        SERVICES["flower"]["environment"]["FLOWER_BASIC_AUTH"])
    # Prometheus's user (not root) writes there whatever Docker's default mode
    assert prometheus["tmpfs"] == [f"{ENTRYPOINT_DEFAULTS['PROMETHEUS_RUN_DIR']}:mode=1777"]
    dockerfile = (ROOT / "docker" / "prometheus.Dockerfile").read_text()
    assert re.search(r'^ENTRYPOINT \["/usr/local/bin/prometheus-entrypoint"\]$', dockerfile, re.M)
    assert re.search(r"^COPY prometheus-entrypoint.sh /usr/local/bin/prometheus-entrypoint$",
                     dockerfile, re.M)
    assert re.search(r"^COPY prometheus.yml (\S+)$", dockerfile, re.M).group(1) == (
        ENTRYPOINT_DEFAULTS["PROMETHEUS_CONFIG_TEMPLATE"])
    assert not re.search(r"^(ENV|ARG).*FLOWER", dockerfile, re.M | re.I)
    assert "--config.file" not in dockerfile  # the entrypoint's own copy, not the template


def _entrypoint(tmp_path: Path, login: str | None, *args: str):
    """Run the entrypoint; (process, its stdout lines, its stderr)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "prometheus"
    fake.write_text(FAKE_PROMETHEUS)
    fake.chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}",
           "PROMETHEUS_CONFIG_TEMPLATE": str(ROOT / "docker" / "prometheus.yml"),
           "PROMETHEUS_RUN_DIR": str(tmp_path / "run")}
    if login is not None:
        env["FLOWER_BASIC_AUTH"] = login
    process = subprocess.Popen([str(ENTRYPOINT), *args], env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate(timeout=60)
    return process, out.splitlines(), err


def _random_login() -> tuple[str, str]:
    """A user and password with YAML's, sed's and the shell's specials each time (no ','
    which separates Flower's logins, nor ':' in the user), spaces inside only."""
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    plain = string.ascii_letters + string.digits + " \"$`*#@!%/.-_"

    def shuffled(specials: str, count: int) -> str:
        chars = [rng.choice(plain) for _ in range(count)] + list(specials)
        rng.shuffle(chars)
        return "x" + "".join(chars) + "x"

    return shuffled("'\\&|", rng.randint(0, 12)), shuffled(":'\\&|", rng.randint(0, 20))


def test_the_entrypoint_writes_flowers_login_then_becomes_prometheus(tmp_path):
    user, password = _random_login()
    template = yaml.safe_load((ROOT / "docker" / "prometheus.yml").read_text())
    process, lines, err = _entrypoint(tmp_path, f"{user}:{password},other:login",
                                      "--storage.tsdb.path=/data")
    assert process.returncode == 0, err
    pid, *args = lines
    assert int(pid) == process.pid  # exec'd: Prometheus gets the container's signals
    config_path = tmp_path / "run" / "prometheus.yml"
    assert args == [f"--config.file={config_path}", "--storage.tsdb.path=/data"]
    config = yaml.safe_load(config_path.read_text())
    [flower] = [job for job in config["scrape_configs"] if job["job_name"] == "flower"]
    assert flower["basic_auth"]["username"] == user
    password_file = config_path.parent / flower["basic_auth"]["password_file"]
    assert password_file.read_text() == password
    for written in (config_path, password_file):
        assert written.stat().st_mode & 0o077 == 0, written  # this user's only
    flower["basic_auth"]["username"] = "@FLOWER_USER@"
    assert config == template  # nothing else changed
    assert password not in err


@pytest.mark.parametrize("login, problem", [
    (None, "is not set"), ("", "is not set"), ("ops", "no ':'"), (":secret", "empty user"),
    ("ops:", "empty password"), ("ops: secret", "begins or ends with a space"),
    ("ops:se\ncret", "line break")])
def test_the_entrypoint_refuses_a_login_it_cannot_use(tmp_path, login, problem):
    process, lines, err = _entrypoint(tmp_path, login)
    assert process.returncode != 0 and not lines  # Prometheus never started
    [line] = err.splitlines()
    assert line.startswith("prometheus: FLOWER_BASIC_AUTH ") and problem in line, line
    assert not (tmp_path / "run" / "prometheus.yml").exists()


@pytest.mark.skipif(shutil.which("promtool") is None,
                    reason="no promtool (Debian's package prometheus) installed")
def test_promtool_accepts_the_config_prometheus_is_given(tmp_path):
    user, password = _random_login()
    process, lines, err = _entrypoint(tmp_path, f"{user}:{password}")
    assert process.returncode == 0, err
    config = lines[1].removeprefix("--config.file=")
    check = subprocess.run(["promtool", "check", "config", config], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    # and promtool does check: the same file with an unknown discovery type is refused
    broken = tmp_path / "broken.yml"
    broken.write_text(Path(config).read_text().replace("type: A", "type: B"))
    check = subprocess.run(["promtool", "check", "config", str(broken)], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode != 0 and "B" in check.stdout + check.stderr


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
