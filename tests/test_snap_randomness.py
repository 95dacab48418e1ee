"""SnapDeals' shapes and randomness against the known answers of shared/filecoin (a copy:
tests/data/filecoin/known-answers-snap-post.json): H_gen (the 2^40-tag Poseidon), the
challenges rust-fil-proofs asserts (first five of 24 shape/partition pairs, all 86 of
32 GiB partitions 0 and 15), phi and rho, c_high, k_and_h_select, the official names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snark.filecoin.errors import FilecoinError
from snark.filecoin.params import OFFICIAL_DIGESTS, check_digest, load_proving_key, official_paths
from snark.filecoin.snap import randomness
from snark.filecoin.snap.shape import SnapShape, update_proof_shape

ANSWERS = json.loads((Path(__file__).parent / "data" / "filecoin"
                      / "known-answers-snap-post.json").read_text())
SNAP = ANSWERS["snap"]
COMM_R_NEW = int(SNAP["comm_r_new"], 16)
SIZES = {"2KiB": 1 << 11, "8MiB": 1 << 23, "512MiB": 1 << 29, "32GiB": 1 << 35, "64GiB": 1 << 36}


def test_gen_randomness_poseidon():
    vectors = SNAP["gen_randomness_poseidon"]
    assert randomness.h_gen(0, 1) == int(vectors["H(0,1)"], 16)
    assert randomness.h_gen(1, 2) == int(vectors["H(1,2)"], 16)


@pytest.mark.parametrize("case", SNAP["challenges_first5_rust_published"],
                         ids=lambda c: f"{c['sector_nodes']}n-k{c['k']}")
def test_challenges_rust_published(case):
    got = randomness.challenges(SnapShape(case["sector_nodes"]), COMM_R_NEW, case["k"])
    assert len(got) == SnapShape(case["sector_nodes"]).challenges
    assert got[:5].tolist() == case["first5"]


@pytest.mark.parametrize("k", [0, 15])
def test_32gib_partitions_all_86(k):
    got = randomness.challenges(SnapShape(1 << 30), COMM_R_NEW, k)
    assert got.tolist() == SNAP[f"challenges_32GiB_k{k}_all86"]


def test_phi_rho_and_high_bits():
    case = SNAP["phi_rho"]
    phi = randomness.phi(int(case["comm_d_new"], 16), int(case["comm_r_old"], 16))
    assert phi == int(case["phi"], 16)
    for high, rho in case["rho"].items():
        assert randomness.rho(phi, int(high)) == int(rho, 16)
    shape = SnapShape(1 << 30)
    nodes = randomness.challenges(shape, COMM_R_NEW, 0)[:5]
    assert randomness.high_bits(shape, nodes).tolist() == SNAP["c_high_32GiB_k0_first5_h10"]


@pytest.mark.parametrize("name, expected", SNAP["k_and_h_select"].items())
def test_k_and_h_select(name, expected):
    size, k = name.split(" k=")
    assert SnapShape.of_size(SIZES[size]).k_and_h_select(int(k)) == expected


@pytest.mark.parametrize("size, partitions, challenges, h", [
    ("2KiB", 1, 10, 1), ("8MiB", 4, 10, 10), ("512MiB", 16, 86, 10), ("32GiB", 16, 86, 10),
    ("64GiB", 16, 86, 10)])
def test_production_shapes(size, partitions, challenges, h):
    shape = SnapShape.of_size(SIZES[size])
    assert (shape.partitions, shape.challenges, shape.h) == (partitions, challenges, h)


@pytest.mark.parametrize("entry", [f for f in ANSWERS["parameter_files"]["files"]
                                   if f["kind"] == "snap"], ids=lambda f: str(f["sector_size"]))
def test_official_parameter_names(entry):
    shape = SnapShape.of_size(entry["sector_size"])
    assert shape.parameter_identifier == entry["identifier"]
    assert shape.params_file_stem == entry["name"]


def test_go_numbering():
    assert update_proof_shape(3, 1 << 35).nodes == 1 << 30
    with pytest.raises(FilecoinError, match="^registered_proof: 5 "):
        update_proof_shape(5)
    with pytest.raises(FilecoinError, match="^sector_size: 2048 is not the 32GiB"):
        update_proof_shape(3, 2048)


@pytest.mark.parametrize("entry", [f for f in ANSWERS["parameter_files"]["files"]
                                   if f["kind"] == "snap"], ids=lambda f: str(f["sector_size"]))
def test_official_digests_and_a_file_by_an_official_name_that_differs(entry, rng, tmp_path):
    """parameters.json's digests are in the params table; a file by the official name with
    other contents is refused, naming the expected digest."""
    shape = SnapShape.of_size(entry["sector_size"])
    assert OFFICIAL_DIGESTS[entry["name"]] == (entry["params_digest"], entry["vk_digest"])
    params_path, vk_path = official_paths(shape, tmp_path)
    assert params_path.name == f"{entry['name']}.params"
    vk_path.write_bytes(rng.randbytes(100))
    with pytest.raises(FilecoinError, match=f"not parameters.json's {entry['vk_digest']}"):
        check_digest(vk_path)
    params_path.write_bytes(rng.randbytes(1000))
    with pytest.raises(FilecoinError, match=f"not parameters.json's {entry['params_digest']}"):
        load_proving_key(shape, params_path)
