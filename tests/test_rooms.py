"""The rooms of docs/ARCHITECTURE.md §1, enforced: import-linter's layers contract and mypy
over the product code (both configured in pyproject.toml), and a producer's command that
does not load the prover."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Modules mypy still skips (pyproject.toml, ``ignore_errors``), each with its reason there.
#: The baseline may only shrink: lower this when a module leaves it, never raise it.
MYPY_BASELINE_MAX = 13


def _run(*command: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                        os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_each_room_imports_only_the_rooms_to_its_right():
    run = _run(sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
               "lint_imports_command()")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


@pytest.mark.slow
def test_mypy_finds_no_error_in_the_product_code():
    run = _run(sys.executable, "-m", "mypy")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def _baseline() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return [module for override in config["tool"]["mypy"].get("overrides", [])
            if override.get("ignore_errors") for module in override["module"]]


def test_the_mypy_baseline_only_shrinks_and_names_real_modules():
    modules = _baseline()
    assert len(modules) <= MYPY_BASELINE_MAX, (
        f"{len(modules)} modules skipped by mypy, at most {MYPY_BASELINE_MAX}: fix the new "
        "errors instead of adding a module")
    for module in modules:
        path = ROOT / module.replace(".", "/")
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), module


#: What only proving needs: the Groth16 prover, the backends, the native library, the
#: curve library, the proof types' worker halves, the worker machinery.
PROVER = ("snark.groth16", "snark.cpu_backend", "snark.native", "snark.porep.prove",
          "snark.porep.worker", "snark.snarkjs.worker", "snark.filecoin.worker",
          "snark.gadgets", "py_arkworks_bls12381", "gpu", "tasks.pipeline", "workers.runtime",
          "workers.backend_choice", "cupy")


def test_proofq_submit_does_not_import_the_prover(redis_url, tmp_path):
    """``proofq submit`` run as a user runs it (a job file, a cluster's Redis): the modules
    its process holds at exit name no part of the prover."""
    from snark.porep.seal import seal

    job = tmp_path / "c1.json"
    job.write_text(seal(2048, 1, 1).to_json())
    seen = tmp_path / "modules.json"
    code = ("import atexit, json, sys\n"
            f"atexit.register(lambda: open({str(seen)!r}, 'w').write("
            "json.dumps(sorted(sys.modules))))\n"
            "sys.argv = ['proofq', 'submit', sys.argv[1]]\n"
            "from client.cli import main\n"
            "main()\n")
    run = subprocess.run([sys.executable, "-c", code, str(job)], cwd=tmp_path,
                         env={**os.environ, "PROOFQ_REDIS_URL": redis_url,
                              "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                             os.environ.get("PYTHONPATH", "")])},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(run.stdout.strip()) == 32  # the job's id
    loaded = json.loads(seen.read_text())
    pulled = sorted(m for m in loaded if m in PROVER or m.startswith(tuple(f"{p}." for p in
                                                                            PROVER)))
    assert not pulled, f"proofq submit imports the prover: {pulled}"
    assert "client.commands.jobs" in loaded
