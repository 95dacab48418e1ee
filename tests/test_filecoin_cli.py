"""``proofq filecoin parent-cache``, ``proofq filecoin check`` and ``proofq seal
--registered-proof``."""

from __future__ import annotations

import hashlib
import json

import pytest

from snark.filecoin import parse_c1
from tests.filecoin_vectors import KNOWN_ANSWERS, PARENT_CACHES
from tests.test_cli_local import run


@pytest.mark.parametrize("case", KNOWN_ANSWERS["sdr_parent_cache"]["cases"],
                         ids=lambda c: c["api_version"])
def test_parent_cache_prints_and_writes_filecoins_cache(case, tmp_path):
    version = case["api_version"][:3]
    assert run("filecoin", "parent-cache", "--sector-size", "2KiB", "--api-version",
               version).split() == [case["name"], case["digest"]]
    got = json.loads(run("filecoin", "parent-cache", "--sector-size", "2048", "--api-version",
                         version, "--write", str(tmp_path), "--json"))
    written = (tmp_path / f"{case['name']}.cache").read_bytes()
    assert (got["name"], got["digest"], len(written)) == (case["name"], case["digest"], 64 * 56)
    assert hashlib.sha256(written).hexdigest() == case["digest"]


def test_parent_cache_names_of_big_sectors_and_bad_options(tmp_path):
    for size, version in (("32GiB", "1.0"), ("64GiB", "1.1.0")):
        name = json.loads(run("filecoin", "parent-cache", "--sector-size", size,
                              "--api-version", version, "--name-only", "--json"))["name"]
        assert name in PARENT_CACHES
    assert "not a Filecoin sector size" in run("filecoin", "parent-cache", "--sector-size",
                                               "4KiB", code=2)
    assert "expected 1.0 or 1.1" in run("filecoin", "parent-cache", "--sector-size", "2KiB",
                                        "--api-version", "2", code=2)
    assert "is not a directory" in run("filecoin", "parent-cache", "--sector-size", "2KiB",
                                       "--write", str(tmp_path / "missing"), code=2)


@pytest.mark.parametrize("name", ["StackedDrg2KiBV1_1", "StackedDrg2KiBV1_1_Feat_SyntheticPoRep"])
def test_seal_writes_curios_c1_and_check_passes(name, tmp_path):
    c1 = tmp_path / "c1.json"
    run("seal", "--registered-proof", name, "-o", str(c1), "--sector-num", "7",
        "--miner-id", "1234")
    wrapper = json.loads(c1.read_text())
    assert list(wrapper) == ["SectorNum", "Phase1Out", "SectorSize"]
    assert (wrapper["SectorNum"], wrapper["SectorSize"]) == (7, 2048)
    assert parse_c1(c1.read_bytes()).proof.name == name
    report = json.loads(run("filecoin", "check", str(c1), "--miner-id", "1234", "--json"))
    assert report["replica_id_checked"] and report["registered_proof"] == name
    assert "replica_id: is not the hash" in run("filecoin", "check", str(c1), "--miner-id",
                                                "1235", code=2)
    assert "passes every check" in run("filecoin", "check", str(c1))


def test_seal_refusals_write_nothing(tmp_path):
    out = tmp_path / "c1.json"
    assert "use --sparse" in run("seal", "--registered-proof", "StackedDrg32GiBV1", "-o",
                                 str(out), code=2)
    assert "is non-interactive PoRep" in run("seal", "--registered-proof",
                                             "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep",
                                             "-o", str(out), code=2)
    assert "cannot be sealed sparsely" in run("seal", "--registered-proof",
                                              "StackedDrg32GiBV1_1_Feat_SyntheticPoRep",
                                              "--sparse", "-o", str(out), code=2)
    data = tmp_path / "data"
    data.write_bytes(b"\xff" * 2048)
    assert "node 0 is not fr32" in run("seal", "--registered-proof", "StackedDrg2KiBV1", "-o",
                                       str(out), "--data", str(data), code=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_sparse_seal_of_a_512mib_shaped_sector(tmp_path):
    out = tmp_path / "c1.json"
    run("seal", "--registered-proof", "StackedDrg512MiBV1_1", "--sparse", "-o", str(out))
    assert "passes every check" in run("filecoin", "check", str(out))
    assert "names no sector" not in run("filecoin", "check", str(out))


def test_the_porep_seal_still_works(tmp_path):
    out = tmp_path / "c1.json"
    run("seal", "--sector-size", "2KiB", "-o", str(out))
    assert json.loads(out.read_text())["format"] == "proofq-porep-c1/1"
