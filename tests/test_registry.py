"""The proof-type registry: the plug-ins installed distributions register by entry point,
names and former names, one worker half per type and host."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from snark.plugins import ENTRY_POINT_GROUP, ProofTypePlugin
from snark.porep.proof_type import PorepType
from snark.proof_types import Storage
from snark.registry import (UnknownProofType, aliases, names, plugins, proof_type,
                            proof_type_for_new_job, table, worker_half)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from dist_info import write  # noqa: E402  (bench/dist_info.py)

BUILT_IN = {"porep-demo", "circom", "filecoin", "snap", "window-post", "winning-post"}


def test_built_in_types_and_the_former_name():
    assert BUILT_IN | {"groth16"} == set(names())
    assert {p.kind.name for p in plugins()} == BUILT_IN
    assert proof_type("groth16") is proof_type("circom")
    assert aliases(proof_type("circom")) == ("groth16",)
    with pytest.raises(UnknownProofType, match=r"proof_type: unknown proof type 'winning' "
                                               r"\(known: .*circom.*groth16.*porep"):
        proof_type("winning")


def test_the_built_in_types_are_pyprojects_entry_points():
    """proofq registers its own types as any distribution would: one line each."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert set(project["entry-points"][ENTRY_POINT_GROUP]) == BUILT_IN


def test_the_demos_retired_name_runs_stored_jobs_only():
    """Jobs stored as 'porep' before the rename still find their type; a new job under that
    name is refused with a pointer, so nobody takes the demo circuit for Filecoin's."""
    demo = proof_type("porep-demo")
    assert proof_type("porep") is demo and "porep" in aliases(demo)
    assert "porep" not in names() and proof_type_for_new_job("porep-demo") is demo
    with pytest.raises(UnknownProofType, match=r"'porep' is retired: .*'porep-demo'.*'filecoin'"):
        proof_type_for_new_job("porep")


IMPOSTOR = ProofTypePlugin(PorepType(), worker="somewhere.else:Worker")
NOT_A_PLUGIN = PorepType()


def _point(name: str, attribute: str) -> EntryPoint:
    return EntryPoint(name, f"{__name__}:{attribute}", ENTRY_POINT_GROUP)


def test_a_name_belongs_to_one_type():
    demo = _point("porep-demo", "IMPOSTOR")
    assert table([demo])["porep-demo"] is IMPOSTOR
    with pytest.raises(ValueError, match="'porep-demo' is registered already"):
        table([demo, _point("porep-demo", "IMPOSTOR_TOO")])
    with pytest.raises(ValueError, match="porep-demo = .*:NOT_A_PLUGIN: not a snark.plugins"):
        table([_point("porep-demo", "NOT_A_PLUGIN")])
    with pytest.raises(ValueError, match="the type is named 'porep-demo'"):
        table([_point("demo", "IMPOSTOR")])
    with pytest.raises(ValueError, match="worker: 'no_colon' is not 'module:attribute'"):
        ProofTypePlugin(PorepType(), worker="no_colon")


IMPOSTOR_TOO = ProofTypePlugin(PorepType(), worker="elsewhere:Worker")


def test_without_proofqs_metadata_the_registry_says_so():
    """A source tree run without installing proofq knows no type, and says what to do; a
    worker so installed refuses the work (another may serve it)."""
    code = ("from importlib import metadata\n"
            "def missing(name): raise metadata.PackageNotFoundError(name)\n"
            "metadata.entry_points = lambda **_: []; metadata.distribution = missing\n"
            "from workers.failures import classify; from snark import registry\n"
            "try: registry.names()\n"
            "except registry.NoProofTypes as exc: print(classify(exc)); raise")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert (run.returncode, run.stdout) == (1, "refused\n"), run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        "snark.registry.NoProofTypes: no proof types are installed (no 'proofq.proof_types' "
        "entry points): install proofq (pip install -e . in its source tree)")


def test_stale_metadata_first_on_the_path_is_named(tmp_path):
    """proofq's metadata from an install older than the entry points, first on the path (a
    stale proofq.egg-info in the tree a test runs from), hides the install's: said so."""
    write(tmp_path, "proofq", "0.1.0", {"console_scripts": {"proofq": "client.cli:main"}})
    empty = tmp_path / "cwd"
    empty.mkdir()
    run = subprocess.run([sys.executable, "-c", "from snark.registry import names; names()"],
                         capture_output=True, text=True, cwd=empty,  # not the tree: its
                         # own proofq.egg-info (an editable install's) would come first
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(
                             [str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")])})
    assert run.returncode == 1
    assert run.stderr.strip().splitlines()[-1] == (
        "snark.registry.NoProofTypes: no proof types are installed: proofq's metadata first "
        f"on the path (in {tmp_path}) has no 'proofq.proof_types' entry points, made by an "
        "older install: reinstall proofq (pip install -e .) or remove that metadata")


def test_one_worker_half_per_type_and_storage(tmp_path):
    porep = proof_type("porep-demo")
    here, there = Storage(tmp_path / "a"), Storage(tmp_path / "b", tmp_path / "shared")
    assert worker_half(porep, here) is worker_half(porep, Storage(tmp_path / "a"))
    assert worker_half(porep, there) is not worker_half(porep, here)
    assert worker_half(porep, there).params_dir == tmp_path / "b"
