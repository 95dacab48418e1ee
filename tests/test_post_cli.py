"""``proofq post check|make``, ``proofq prove|verify --post`` and ``proofq filecoin
circuit-info --post``: Curio's vanilla proofs checked from files (exit 0, or 2 naming the
field), a 2 KiB WindowPoSt partition made, proved and verified under a development key."""

from __future__ import annotations

import json

import pytest

from tests.test_cli_local import run


def _make(tmp_path, *extra: str) -> dict:
    out = json.loads(run("post", "make", "--kind", "window", "--registered-proof", "5",
                         "--sectors", "2", "--partition-index", "1", "-o", str(tmp_path),
                         "--json", *extra))
    return out


def _check(made: dict, *files: str, randomness: str | None = None, partition: str = "1",
           proof: str = "5", code: int = 0) -> str:
    return run("post", "check", "--kind", "window", "--registered-proof", proof,
               "--randomness", randomness or made["randomness"], "--miner-id", "1000",
               "--partition-index", partition, *(files or made["vanilla_proofs"]), code=code)


def test_post_check_passes_made_proofs_and_names_what_fails(tmp_path):
    made = _make(tmp_path)
    assert "pass every check" in _check(made)
    # V1: the partition index is in the challenges; V1_2 (Go's V1_1) derives others
    assert "opens leaf" in _check(made, partition="0", code=2)
    assert "opens leaf" in _check(made, proof="10", code=2)
    other = ("00" if made["randomness"][:2] != "00" else "01") + made["randomness"][2:]
    assert "vanilla_proofs[0]" in _check(made, randomness=other, code=2)
    first = tmp_path / "vanilla-0.bin"
    first.write_bytes(first.read_bytes()[:-1])
    assert "vanilla_proofs[0]: is 5679 bytes" in _check(made, code=2)
    assert "--randomness: expected 32 bytes" in _check(made, randomness="00ff", code=2)


def test_circuit_info_of_post_circuits():
    out = json.loads(run("filecoin", "circuit-info", "--post", "winning", "--sector-size",
                         "2KiB", "--json"))
    assert out["constraints"] - out["input_constraints"] == 90_750 and out["inputs"] == 133
    out = json.loads(run("filecoin", "circuit-info", "--post", "window", "--sector-size",
                         "8MiB", "--json"))
    assert out["constraints"] - out["input_constraints"] == 64_266
    run("filecoin", "circuit-info", "--post", "window", code=2)


@pytest.mark.slow
def test_prove_and_verify_a_post_partition(tmp_path, monkeypatch):
    monkeypatch.setenv("PROOFQ_PARAMS_DIR", str(tmp_path / "params"))
    from config.settings import get_settings

    get_settings.cache_clear()
    made = _make(tmp_path / "made")
    job, proof = made["job"], str(tmp_path / "proof.bin")
    run("prove", "--post", job, "-o", proof, "--key", "development", "--backend", "cpu")
    assert "valid" in run("verify", "--post", job, "--proof", proof, "--key", "development")
    document = json.loads(open(job).read())
    document["randomness"] = "00" * 32
    other = tmp_path / "other.json"
    other.write_text(json.dumps(document))
    assert "INVALID" in run("verify", "--post", str(other), "--proof", proof, "--key",
                            "development", code=1)
    get_settings.cache_clear()
