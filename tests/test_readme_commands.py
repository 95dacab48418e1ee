"""The commands of the README and the docs, run as a newcomer would run them (the ones that
can run here).

Every line of a ```bash block in README.md or another of ``DOCUMENTS`` is a command. One
that cannot run on this machine (it needs a GPU, Docker, root, a service that runs until
stopped) says so at its end: ``# not run here: <why>``; every other one is run, in order, in
a fresh directory, against an embedded Redis where the document names a Redis. A new
command without the mark is therefore run by this test (or fails it), so the docs cannot
promise a command nobody ran.

The quickstart's installation (venv, pip) is not repeated here: it is the environment this
test runs in, and ``.ci/run`` runs the test command itself, which must stay the README's.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess
from config.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: The documents whose commands are run (another joins when its commands follow the rule).
DOCUMENTS = [README, *(ROOT / "docs" / name for name in ("operators.md", "filecoin.md",
                                                           "circom.md", "performance.md"))]
NOT_RUN = re.compile(r"\s+#\s*not run here:\s*(?P<why>.+)$")
COMMENT = re.compile(r"\s+#\s.*$")
INSTALL = ("python3 -m venv .venv", ". .venv/bin/activate", "pip install ")


def bash_commands(text: str) -> list[tuple[str, str | None]]:
    """Each command of the text's bash blocks: (command, why it is not run, or None)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if not line.strip():
                continue
            mark = NOT_RUN.search(line)
            if mark:
                commands.append((line[:mark.start()].strip(), mark["why"].strip()))
            else:
                commands.append((COMMENT.sub("", line).strip(), None))
    return commands


def after_install(command: str) -> str:
    """The part of a quickstart line after its installation steps."""
    steps = command.split(" && ")
    while steps and steps[0].startswith(INSTALL):
        steps.pop(0)
    return " && ".join(steps)


def test_the_readme_has_the_two_quickstart_commands():
    commands = bash_commands(README.read_text())
    install_lines = [c for c, _ in commands if c.startswith(INSTALL[0])]
    assert len(install_lines) == 2, install_lines  # the quickstart and the tests
    assert after_install(install_lines[0]).startswith("proofq bench batch --type porep-demo")


def test_ci_runs_the_readme_test_command():
    """.ci/run is the README's test command, character for character."""
    [tests] = [c for c, _ in bash_commands(README.read_text()) if "pytest" in c]
    assert tests in (ROOT / ".ci/run").read_text().splitlines()
    assert after_install(tests) == "python -m pytest -q -n 2 --dist loadfile"


@pytest.mark.slow
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_the_commands_that_can_run_here(document, tmp_path):
    """Runs them in order: a cluster's commands on an embedded Redis, in a fresh directory."""
    ran = run_commands(bash_commands(document.read_text()), tmp_path)
    print(f"{document.name}: ran", *ran, sep="\n  ")
    if document == README:
        assert any(c.startswith("proofq bench batch") for c in ran)
        assert any(c.startswith("proofq submit") for c in ran)
        proofs = tmp_path / "proof.bin"
        assert proofs.exists() and proofs.stat().st_size == 2 * 192  # two partitions' proofs


def run_commands(commands: list[tuple[str, str | None]], directory: Path) -> list[str]:
    """Run the commands not marked, in ``directory``; the ones it ran."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    env = {**base, "PYTHONPATH": str(ROOT), "PROOFQ_PARAMS_DIR": str(directory / "params"),
           "PROOFQ_BACKEND": "cpu"}
    ran, background = [], []
    with EmbeddedRedis() as server:
        try:
            for command, why in commands:
                if why is not None or "pytest" in command:
                    continue  # the test command is the suite itself: .ci/run runs it
                command = after_install(command)
                argv = shlex.split(command)
                if argv[0] == "export":
                    name, _, value = argv[1].partition("=")
                    assert name == "PROOFQ_REDIS_URL" and value.startswith("redis://"), command
                    env[name] = server.url
                elif argv[:4] == ["celery", "-A", "tasks", "worker"]:
                    background.append(start_worker(server.url, argv, env, directory))
                elif argv[:2] == ["proofq", "view"]:
                    background.append(start_view(env, directory))
                else:  # proofq from the tree under test; anything else through bash
                    run = subprocess.run(
                        [sys.executable, "-m", "client", *argv[1:]] if argv[0] == "proofq"
                        else ["bash", "-c", command],
                        cwd=directory, env=env, capture_output=True, text=True, timeout=600)
                    assert run.returncode == 0, f"{command}\n{run.stdout}\n{run.stderr}"
                ran.append(command)
        finally:
            for process in background:
                if isinstance(process, WorkerProcess):
                    process.stop(graceful=False)
                else:
                    process.kill()
    return ran


def start_worker(redis_url: str, argv: list[str], env: dict, log_dir: Path) -> WorkerProcess:
    from tasks.application import create_app

    command = [sys.executable, "-m", "celery", *argv[1:], "--without-mingle", "--without-gossip"]
    worker = WorkerProcess(redis_url, command, log_dir=log_dir, env=env).start()
    worker.wait_ready(create_app(load_settings(redis_url=redis_url)), 120)
    return worker


def start_view(env: dict, log_dir: Path) -> subprocess.Popen:
    """``proofq view`` on a free port: it must serve its page."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    view = subprocess.Popen([sys.executable, "-m", "client", "view", "--port", str(port)],
                            cwd=log_dir, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as page:
                assert page.status == 200
                return view
        except OSError:
            assert view.poll() is None and time.monotonic() < deadline, "proofq view did not serve"
            time.sleep(0.3)
