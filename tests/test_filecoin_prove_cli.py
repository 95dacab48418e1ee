"""``proofq prove --c1`` makes the checks the service makes before proving a Filecoin C1; only
``--no-check``, by name, skips them, and its output says so."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from snark.filecoin import curio_json, prover_id_for_miner, registered_proof, seal
from tests.filecoin_c1s import above_r

MINER, SECTOR = 1000, 5


@pytest.fixture(scope="module")
def sealed(module_rng):
    rng = np.random.default_rng(module_rng.getrandbits(64))
    return seal(registered_proof("StackedDrg2KiBV1_1"), rng, prover_id=prover_id_for_miner(MINER),
                sector_id=SECTOR, ticket=above_r(rng), seed=above_r(rng))


def _prove(c1, tmp_path: Path, params: Path, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "c1.json").write_bytes(curio_json(c1, SECTOR))
    return subprocess.run(
        [sys.executable, "-m", "client", "prove", "--c1", str(tmp_path / "c1.json"), "-o",
         str(tmp_path / "proof.bin"), "--key", "development", *extra],
        env={**os.environ, "PROOFQ_PARAMS_DIR": str(params)}, capture_output=True, text=True,
        timeout=900)


def _refused(run: subprocess.CompletedProcess, tmp_path: Path, expected: str) -> None:
    assert run.returncode == 2, run.stdout + run.stderr
    [line] = run.stderr.strip().splitlines()
    assert line.startswith(f"Error: {tmp_path / 'c1.json'}: ") and expected in line, line
    assert not (tmp_path / "proof.bin").exists()


def _with(c1, **changes):
    out = copy.deepcopy(c1)
    for name, value in changes.items():
        object.__setattr__(out, name, value)
    return out


@pytest.mark.parametrize("changes, expected", [
    ({"seed": bytes(32)}, 'seed: is 32 zero bytes (rust-fil-proofs refuses it: "Invalid porep '
                          'challenge seed")'),
    ({"comm_r": bytes(32)}, "comm_r: is 32 zero bytes"),
    ({"comm_d": bytes(32)}, "comm_d: is 32 zero bytes"),
], ids=["zero seed", "zero comm_r", "zero comm_d"])
def test_prove_refuses_what_seal_commit_phase2_refuses(changes, expected, sealed, tmp_path):
    _refused(_prove(_with(sealed, **changes), tmp_path, tmp_path / "params"), tmp_path,
             expected)


def test_prove_checks_replica_id_against_the_miner(sealed, tmp_path):
    _refused(_prove(sealed, tmp_path, tmp_path / "params", "--miner-id", str(MINER + 1)),
             tmp_path, "replica_id: is not the hash of prover_id, sector_id, ticket")


@pytest.mark.slow  # one 2 KiB proof on the CPU (and the session's development key)
@pytest.mark.long
def test_prove_checks_first_and_no_check_says_it_skipped_them(sealed, filecoin_2kib_dev_params,
                                                              tmp_path):
    """A C1 whose second proof names another comm_c satisfies the circuit (the circuit takes
    comm_c from the first proof), so only the checks stop it, as C2's "inconsistent comm_cs"
    does."""
    tampered = copy.deepcopy(sealed)
    tampered.vanilla.columns.path.root[0, 1, 0, 5] ^= 1
    _refused(_prove(tampered, tmp_path, filecoin_2kib_dev_params), tmp_path,
             "replica_column_proofs.c_x.inclusion_proof.data.Single.root: differs from comm_c "
             "of the first proof's c_x (inconsistent comm_cs)")
    skipped = _prove(tampered, tmp_path, filecoin_2kib_dev_params, "--no-check")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "C1 NOT CHECKED (--no-check" in skipped.stdout
    assert (tmp_path / "proof.bin").stat().st_size == 192
    (tmp_path / "proof.bin").unlink()
    checked = _prove(sealed, tmp_path, filecoin_2kib_dev_params, "--miner-id", str(MINER))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "C1 checked first" in checked.stdout
