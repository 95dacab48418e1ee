"""``proofq snap update`` (a whole 2 KiB sector, a sparse 32 GiB one), ``proofq snap check``,
``proofq filecoin circuit-info --update`` and the ``snap`` job input (the proof type's
producer half, and the gRPC door's function from Curio's request fields). Proving and
verifying through ``proofq prove/verify --update`` and the service: ``test_e2e_snap.py``."""

from __future__ import annotations

import base64
import json

import pytest

from snark.filecoin.errors import FilecoinError
from snark.filecoin.snap.job import job_from_request, parse_job
from snark.job_input import InputLimits
from snark.registry import proof_type
from tests.test_cli_local import run

LIMITS = InputLimits(64 << 20, 1 << 20)


@pytest.fixture(scope="module")
def update_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("snap") / "update.json"
    run("snap", "update", "--sector-size", "2KiB", "-o", str(path))
    return path


def test_update_then_check(update_file):
    doc = json.loads(update_file.read_text())
    assert (doc["registered_proof"], doc["sector_size"], len(doc["vanilla_proofs"])) == (
        0, 2048, 1)
    report = json.loads(run("snap", "check", str(update_file), "--json"))
    assert report == {"valid": True, "sector_size": 2048, "partitions": 1, "challenges": 10}


def test_check_names_the_tampered_field(update_file, tmp_path):
    doc = json.loads(update_file.read_text())
    raw = bytearray(base64.b64decode(doc["vanilla_proofs"][0]))
    raw[40] ^= 1  # the first apex leaf
    doc["vanilla_proofs"][0] = base64.b64encode(bytes(raw)).decode()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out = run("snap", "check", str(bad), code=2)
    assert f"{bad}: vanilla_proofs[0]." in out


def test_a_32gib_update_is_sparse_and_passes_the_check(tmp_path):
    path = tmp_path / "update.json"
    made = json.loads(run("snap", "update", "--sector-size", "32GiB", "-o", str(path),
                          "--json"))
    assert (made["sparse"], made["registered_proof"], made["partitions"]) == (True, 3, 16)
    report = json.loads(run("snap", "check", str(path), "--json"))
    assert report == {"valid": True, "sector_size": 32 << 30, "partitions": 16,
                      "challenges": 86}


def test_update_refusals(tmp_path):
    assert "1MiB is not a SnapDeals sector size" in run(
        "snap", "update", "--sector-size", "1MiB", "-o", str(tmp_path / "u.json"), code=2)
    assert not (tmp_path / "u.json").exists()
    refused = run("prove", "-o", str(tmp_path / "p.bin"), code=2)
    assert "give one of: " in refused and "--c1" in refused and "--update" in refused


def test_circuit_info_of_an_update():
    got = json.loads(run("filecoin", "circuit-info", "--update", "32GiB", "--json"))
    assert got["circuit"] == "snap-32GiB"
    assert (got["constraints"] - got["input_constraints"], got["inputs"]) == (81_049_499, 5)
    assert "give --registered-proof, --update" in run(
        "filecoin", "circuit-info", "--update", "2KiB", "--registered-proof",
        "StackedDrg2KiBV1", code=2)


def test_snap_jobs_in_every_form(update_file):
    kind = proof_type("snap")
    text = update_file.read_text()
    admitted = kind.admit(text, LIMITS)
    assert admitted.partitions == 1
    stored = parse_job(admitted.canonical_json, max_bytes=LIMITS.max_input_bytes)
    assert stored.key is None and stored.update.to_json() == json.dumps(
        json.loads(text), separators=(",", ":"))
    keyed = kind.parse({"key": "development", "update": json.loads(text)}, LIMITS)
    assert keyed.key == "development"
    assert kind.key_name(keyed).startswith("proofq-dev-empty-sector-update-")
    with pytest.raises(FilecoinError, match="^key: expected one of"):
        kind.parse({"key": "mine", "update": json.loads(text)}, LIMITS)


def test_job_from_curios_request_fields(update_file):
    doc = json.loads(update_file.read_text())
    fields = {name: base64.b64decode(doc[name]) for name in
              ("comm_r_old", "comm_r_new", "comm_d_new")}
    job = job_from_request(vanilla_proofs=[base64.b64decode(v) for v in doc["vanilla_proofs"]],
                           registered_proof=0, sector_size=2048, key="development", **fields)
    assert job.update.to_json() == json.dumps(doc, separators=(",", ":"))
    with pytest.raises(FilecoinError, match=r"^vanilla_proofs\[0\]\.comm_c: ends at byte 10"):
        job_from_request(vanilla_proofs=[b"\0" * 10], registered_proof=0, sector_size=2048,
                         **fields)


def test_the_worker_half_checks_before_the_fan_out(update_file, tmp_path):
    """The worker half's ``check`` (run once per job before its partitions are fanned out)
    refuses a partition in another update's place, naming it; its key is named by shape."""
    from snark.filecoin.settings import FilecoinSettings
    from snark.filecoin.snap.worker import SnapWorker
    from snark.proof_types import Storage

    doc = json.loads(update_file.read_text())
    worker = SnapWorker(Storage(tmp_path), FilecoinSettings())
    job = proof_type("snap").parse({"key": "development", "update": doc}, LIMITS)
    worker.check(job)
    assert not worker.has_key(job)
    doc["comm_r_new"], doc["comm_r_old"] = doc["comm_r_old"], doc["comm_r_new"]
    swapped = proof_type("snap").parse({"key": "development", "update": doc}, LIMITS)
    with pytest.raises(FilecoinError, match=r"^vanilla_proofs\[0\]\.challenge_proofs\[0\]\."
                                            r"proof_r_old\.root: Poseidon\(comm_c, root\)"):
        worker.check(swapped)
