"""A SnapDeals update proved and verified under a DEVELOPMENT key (proofq's own setup of
EmptySectorUpdateCircuit, not Filecoin's ceremony): through ``proofq prove/verify --update``
on the CPU, and through the whole service as Curio's request reaches it (the update's JSON on
the intake stream, a real ``celery -A tasks worker``, the proof from the results stream
accepted by ``proofq verify``). Tampered updates are refused at the check, before proving."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from snark.filecoin.params import bellperson_files, is_development
from snark.filecoin.snap.generate import generate_update
from snark.filecoin.snap.job import SnapJob
from snark.filecoin.snap.shape import SnapShape
from snark.filecoin.settings import FilecoinSettings
from snark.filecoin.snap.worker import SnapWorker
from snark.proof_types import Storage
from tests.test_e2e_filecoin import through_intake

pytestmark = pytest.mark.slow  # a 1.7 M-constraint key set up, proofs on the CPU: minutes

SHAPE = SnapShape(64)


def make_snap_dev_key(params: Path, rng) -> None:
    """The 2 KiB update circuit's development key, set up into ``params`` (minutes)."""
    update = generate_update(SHAPE, np.random.default_rng(rng.getrandbits(64)))
    SnapWorker(Storage(params), FilecoinSettings()).make_key(SnapJob("development", update))


def _proofq(params: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "client", *args],
                          env={**os.environ, "PROOFQ_PARAMS_DIR": str(params)},
                          capture_output=True, text=True)


def _write_update(path: Path, rng) -> Path:
    update = generate_update(SHAPE, np.random.default_rng(rng.getrandbits(64)))
    path.write_text(update.to_json())
    return path


def test_prove_and_verify_an_update_on_the_cpu(snap_2kib_dev_params, rng, tmp_path):
    update = _write_update(tmp_path / "update.json", rng)
    proof = tmp_path / "proof.bin"
    proved = _proofq(snap_2kib_dev_params, "prove", "--update", str(update), "-o", str(proof),
                     "--key", "development", "--backend", "cpu")
    assert proved.returncode == 0, proved.stdout + proved.stderr
    assert proof.stat().st_size == 192
    verified = _proofq(snap_2kib_dev_params, "verify", "--update", str(update), "--proof",
                       str(proof), "--key", "development")
    assert verified.returncode == 0 and "valid" in verified.stdout, verified.stderr
    other = _write_update(tmp_path / "other.json", rng)
    assert _proofq(snap_2kib_dev_params, "verify", "--update", str(other), "--proof", str(proof),
                   "--key", "development").returncode == 1
    params_path, _ = bellperson_files(SHAPE, "development", snap_2kib_dev_params,
                                      snap_2kib_dev_params)
    assert is_development(params_path)
    assert json.loads(params_path.with_suffix(".json").read_text())["development"] is True


def test_a_tampered_update_is_refused_before_proving(snap_2kib_dev_params, rng, tmp_path):
    update = _write_update(tmp_path / "update.json", rng)
    doc = json.loads(update.read_text())
    raw = bytearray(base64.b64decode(doc["vanilla_proofs"][0]))
    raw[-40] ^= 1  # a sibling in the last challenge's new-replica path
    doc["vanilla_proofs"][0] = base64.b64encode(bytes(raw)).decode()
    update.write_text(json.dumps(doc))
    proved = _proofq(snap_2kib_dev_params, "prove", "--update", str(update), "-o",
                     str(tmp_path / "proof.bin"), "--key", "development", "--backend", "cpu")
    assert proved.returncode == 2, proved.stdout + proved.stderr
    assert "vanilla_proofs[0].challenge_proofs[9].proof_r_new" in proved.stderr + proved.stdout
    assert not (tmp_path / "proof.bin").exists()


def test_an_update_through_the_intake_to_a_verified_proof(snap_2kib_dev_params, rng, tmp_path):
    update = _write_update(tmp_path / "update.json", rng)
    result = through_intake(snap_2kib_dev_params, "cpu", ("type", "snap", "input"),
                            update.read_bytes(), tmp_path)
    proof = tmp_path / "proof.bin"
    proof.write_bytes(bytes.fromhex(result["proof"]))
    assert proof.stat().st_size == 192
    verified = _proofq(snap_2kib_dev_params, "verify", "--update", str(update), "--proof",
                       str(proof), "--key", "development")
    assert verified.returncode == 0, verified.stdout + verified.stderr
