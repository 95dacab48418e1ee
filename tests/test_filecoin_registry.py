"""Registered proofs (by name and by Go's number), porep_id, parameter file names, replica_id,
the interactive challenges and synthetic PoRep's (against rust-fil-proofs' vectors)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from snark.filecoin.challenges import (interactive_challenges, prover_id_for_miner, replica_id,
                                       synthetic_challenge_set, synthetic_challenges)
from snark.filecoin.domain import from_int
from snark.filecoin.errors import FilecoinError
from snark.filecoin.registered_proofs import (REGISTERED_PROOFS, ApiVersion, by_number, for_sector,
                                     registered_proof)
from tests.filecoin_vectors import PARAMS_FILE_STEMS


def test_the_fifteen_registered_proofs_and_their_go_numbers():
    assert len(REGISTERED_PROOFS) == 15
    for i, proof in enumerate(REGISTERED_PROOFS.values()):
        assert proof.registered_id == i and by_number(i) is proof
        assert proof.api_version == (ApiVersion.V1_0, ApiVersion.V1_1, ApiVersion.V1_2)[i // 5]
        assert proof.synthetic == (i >= 10)
        assert proof.porep_id == i.to_bytes(8, "little") + bytes(24)
        assert proof.name == f"StackedDrg{proof.size_name}V1" + (
            "", "_1", "_1_Feat_SyntheticPoRep")[i // 5]
        assert proof.vanilla_tag == f"StackedDrg{proof.size_name}V1"
        assert proof.nodes * 32 == proof.sector_size
    assert by_number(12).name == "StackedDrg512MiBV1_1_Feat_SyntheticPoRep"
    for number in range(15, 20):
        with pytest.raises(FilecoinError, match=f"^registered_proof: {number} "
                                                r"\(StackedDrg\w+V1_2_Feat_NonInteractivePoRep\) "
                                                "is non-interactive PoRep"):
            by_number(number)
    for number in (-1, 20, 1 << 40):
        with pytest.raises(FilecoinError, match="is not a registered seal proof number"):
            by_number(number)
    with pytest.raises(FilecoinError, match="^registered_proof: expected a number, got '5'"):
        by_number("5")
    small = registered_proof("StackedDrg8MiBV1_1")
    assert (small.nodes, small.layers, small.partitions, small.challenges_per_partition,
            small.shape.display, small.shape.name) == (1 << 18, 2, 1, 2, "8-0-0", "Single")
    big = registered_proof("StackedDrg32GiBV1")
    assert (big.layers, big.partitions, big.challenges_per_partition, big.challenges,
            big.shape.name) == (11, 10, 18, 180, "Sub")
    assert big.shape.level_arities(big.nodes) == (8,) * 9 + (8,)
    huge = registered_proof("StackedDrg64GiBV1_1")
    assert huge.shape.name == "Top" and huge.shape.level_arities(huge.nodes) == (8,) * 9 + (8, 2)
    assert registered_proof("StackedDrg2KiBV1").shape.level_arities(64) == (8, 8)


def test_params_file_names_are_the_official_ones():
    """All five names of rust-fil-proofs' parameters.json come out of the identifiers."""
    for proof in REGISTERED_PROOFS.values():
        assert proof.params_file_stem == PARAMS_FILE_STEMS[proof.size_name], proof.name


def test_non_interactive_and_unknown_names_are_refused():
    assert registered_proof("StackedDrg32GiBV1_1_Feat_SyntheticPoRep").synthetic
    with pytest.raises(FilecoinError, match="^registered_proof: StackedDrg2KiBV1_2_Feat_"
                                            "NonInteractivePoRep is non-interactive PoRep"):
        registered_proof("StackedDrg2KiBV1_2_Feat_NonInteractivePoRep")
    with pytest.raises(FilecoinError, match="unknown registered proof 'StackedDrg4KiBV1'"):
        registered_proof("StackedDrg4KiBV1")


def test_lookup_by_size_and_api_version():
    assert for_sector(1 << 35, ApiVersion.parse("1.1")).name == "StackedDrg32GiBV1_1"
    assert for_sector(2048, ApiVersion.parse("1.0.0")).name == "StackedDrg2KiBV1"
    with pytest.raises(FilecoinError, match="sector_size: 4096 is not a Filecoin sector size"):
        for_sector(4096, ApiVersion.V1_1)
    with pytest.raises(FilecoinError, match="api_version: expected 1.0 or 1.1, got '1.2'"):
        ApiVersion.parse("1.2")


def test_replica_id_hashes_its_inputs_in_order(np_rng):
    prover, ticket, comm_d, porep = (np_rng.bytes(32) for _ in range(4))
    sector = int(np_rng.integers(1 << 62))
    value = replica_id(prover, sector, ticket, comm_d, porep)
    digest = bytearray(hashlib.sha256(prover + sector.to_bytes(8, "big") + ticket + comm_d
                                      + porep).digest())
    digest[31] &= 0x3F
    assert value == bytes(digest)
    assert replica_id(prover, sector, comm_d, ticket, porep) != value
    with pytest.raises(FilecoinError, match="ticket: expected 32 bytes, got 31"):
        replica_id(prover, sector, ticket[:31], comm_d, porep)


def test_prover_id_is_the_leb128_actor_id():
    assert prover_id_for_miner(1000) == bytes([0xE8, 0x07]) + bytes(30)
    assert prover_id_for_miner(0) == bytes(32)
    assert prover_id_for_miner(127)[:2] == b"\x7f\x00"


def test_interactive_challenges_count_across_partitions(np_rng):
    replica, seed = np_rng.bytes(32), np_rng.bytes(32)
    nodes = 1 << 30
    got = interactive_challenges(replica, seed, nodes, 10, 18)
    assert got.shape == (10, 18)
    for k, i in ((0, 0), (3, 5), (9, 17)):
        j = 18 * k + i
        digest = hashlib.sha256(replica + seed + j.to_bytes(4, "little")).digest()
        assert got[k, i] == int.from_bytes(digest, "little") % (nodes - 1) + 1
    # every node but node 0: 5,000 draws miss one of the 63 with probability ~1e-33
    small = interactive_challenges(replica, seed, 64, 1, 5000)
    assert small.min() >= 1 and small.max() <= 63 and len(np.unique(small)) == 63


def test_synthetic_challenges_match_rust_fil_proofs_vectors():
    """``challenges.rs`` ``test_synth_challenges_against_hardcoded``: 2^10 nodes, replica_id
    55, comm_r 101, 21 synthetic challenges, 10 PoRep challenges of the seed [1; 32]."""
    replica, comm_r = from_int(55), from_int(101)
    assert synthetic_challenge_set(replica, comm_r, 1 << 10, np.arange(21)).tolist() == [
        178, 297, 869, 211, 875, 477, 94, 781, 124, 332, 856, 801, 176, 692, 429, 691, 290,
        204, 986, 210, 973]
    assert synthetic_challenges(replica, comm_r, bytes([1] * 32), 1 << 10, 1, 10,
                                synth_count=21).tolist() == [
        [176, 781, 801, 986, 290, 211, 692, 856, 986, 332]]


def test_synthetic_partitions_are_one_selection_split(np_rng):
    """As ``test_synth_challenges_32gib``: partition k's challenges are entries k·K … of the
    whole selection; all lie in 1 … nodes − 1; the seed changes them."""
    replica, comm_r, seed = np_rng.bytes(32), np_rng.bytes(32), np_rng.bytes(32)
    nodes = 1 << 30
    split = synthetic_challenges(replica, comm_r, seed, nodes, 10, 18)
    whole = synthetic_challenges(replica, comm_r, seed, nodes, 1, 180)
    assert split.reshape(-1).tolist() == whole.reshape(-1).tolist()
    assert split.min() >= 1 and split.max() < nodes
    assert synthetic_challenges(replica, comm_r, np_rng.bytes(32), nodes, 10, 18).tolist() \
        != split.tolist()
