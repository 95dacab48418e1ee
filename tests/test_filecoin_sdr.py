"""The SDR graph and parent caches, labels, and the Merkle trees against Filecoin's answers."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from snark.filecoin.domain import from_int, to_int
from snark.filecoin.graph import (SdrGraph, chacha8_block, drg_parents, expander_parents,
                                  feistel_keys, feistel_permute, parent_cache, parent_cache_name)
from snark.filecoin.registered_proofs import REGISTERED_PROOFS, ApiVersion, registered_proof
from snark.filecoin.sdr import layer_labels, sdr_last_layer
from snark.filecoin.trees import (SparseTree, build_levels, open_paths, path_roots,
                                  poseidon_nodes, sha256_nodes)
from tests.filecoin_vectors import KNOWN_ANSWERS, PARENT_CACHES


def test_chacha8_reference_vector():
    """draft-strombergson-chacha-test-vectors TC1, 8 rounds: zero key, zero nonce, block 0."""
    block = chacha8_block(np.zeros((1, 8), np.uint32), 0).astype("<u4").tobytes()
    assert block.hex() == ("3e00ef2f895f40d67f5bb8e81f09a5a12c840ec3ce9a7f3b181be188ef711a1e"
                           "984ce172b9216f419f445367456d5619314a42a3da86b001387bfdb80e0cfe42")


@pytest.mark.parametrize("case", KNOWN_ANSWERS["sdr_parent_cache"]["cases"],
                         ids=lambda c: c["registered_proof"])
def test_2kib_parent_caches_are_filecoins(case, tmp_path):
    proof = registered_proof(case["registered_proof"])
    assert proof.registered_id == case["porep_id_registered_id"]
    assert parent_cache(proof.sector_size, case["api_version"]) == (case["name"], case["digest"])
    name, digest = parent_cache(proof.sector_size, proof.api_version, directory=tmp_path)
    written = (tmp_path / f"{name}.cache").read_bytes()
    assert hashlib.sha256(written).hexdigest() == digest
    assert np.array_equal(np.frombuffer(written, "<u4").reshape(-1, 14),
                          SdrGraph.of(proof).parents())


def test_every_parent_cache_name_is_in_parent_cache_json():
    """Those of V1 and V1_1 (a synthetic proof's porep_id makes another graph, whose cache
    rust-fil-proofs does not publish)."""
    names = {parent_cache_name(proof): proof.sector_size for proof in REGISTERED_PROOFS.values()
             if not proof.synthetic}
    assert names == {name: size for name, (size, _) in PARENT_CACHES.items()}


@pytest.mark.slow
def test_8mib_parent_cache_api_1_0():
    """The 8 MiB V1 graph (6.3 M Feistel hashes); the 8 MiB V1_1 graph is checked by the
    sealing test."""
    name, digest = parent_cache(8 << 20, "1.0")
    assert PARENT_CACHES[name] == (8 << 20, digest)


@pytest.mark.parametrize("version", list(ApiVersion))
def test_drg_parents_precede_their_node(version, np_rng):
    nodes = np.concatenate([[0, 1, 2], np_rng.integers(3, 1 << 30, 200)])
    parents = drg_parents(nodes, np_rng.bytes(32), version).astype(np.int64)
    assert (parents[:2] == 0).all()
    predecessor = 5 if version == ApiVersion.V1_0 else 0
    assert (parents[2:, predecessor] == nodes[2:] - 1).all()
    assert (parents[2:] < nodes[2:, None]).all()


def test_api_1_0_truncates_the_expander_permutation_to_u32(np_rng):
    """32 GiB: 8 · 2^30 slots overflow u32; API 1.0 divides the truncated value."""
    nodes, porep = np_rng.integers(0, 1 << 30, 64), np_rng.bytes(32)
    slots = (nodes[:, None] * 8 + np.arange(8)).astype(np.uint64).reshape(-1)
    permuted = feistel_permute(slots, 8 << 30, feistel_keys(porep))
    assert (permuted < (8 << 30)).all() and (permuted >= 1 << 32).any()
    assert np.array_equal(expander_parents(nodes, 1 << 30, porep, ApiVersion.V1_1).reshape(-1),
                          permuted // 8)
    assert np.array_equal(expander_parents(nodes, 1 << 30, porep, ApiVersion.V1_0).reshape(-1),
                          (permuted & 0xFFFFFFFF) // 8)


def test_feistel_is_a_permutation():
    values = np.arange(512, dtype=np.uint64)  # 2 KiB: 64 nodes · 8, on a 1024-value network
    assert sorted(feistel_permute(values, 512, (1, 2, 3, 4)).tolist()) == list(range(512))


def test_feistel_refuses_a_value_outside_its_elements():
    """Cycle-walking from outside [0, elements) need never come back into it."""
    with pytest.raises(ValueError, match=r"^values\[1\] = 512 is not below the 512 elements$"):
        feistel_permute(np.array([3, 512], dtype=np.uint64), 512, (1, 2, 3, 4))


@pytest.mark.parametrize("case", KNOWN_ANSWERS["sdr_labels"]["cases"],
                         ids=lambda c: c["api_version"])
def test_last_labels_are_filecoins(case):
    labels = sdr_last_layer(case["nodes"], case["layers"],
                            bytes.fromhex(case["replica_id_bytes"]),
                            bytes.fromhex(case["porep_id_bytes"]), case["api_version"])
    assert len(labels) == case["nodes"]
    assert labels[-1].hex() == case["last_label_le_bytes"]


def test_labels_depend_on_the_layer_below(np_rng):
    graph = SdrGraph(64, np_rng.bytes(32), ApiVersion.V1_1)
    replica = bytes(np_rng.integers(0, 64, 32, dtype=np.uint8))
    labels = layer_labels(graph, replica, 3)
    assert labels.shape == (3, 64, 32) and (labels[..., 31] < 64).all()
    other = layer_labels(graph, replica[:-1] + bytes([replica[-1] ^ 1]), 3)
    assert (labels != other).any(axis=-1).all()


def test_poseidon_binary_tree_is_filecoin_hashers():
    vector = KNOWN_ANSWERS["poseidon_filecoin_hashers"]
    leaves = np.frombuffer(b"".join(from_int(v) for v in (1, 0, 0, 1)), np.uint8).reshape(4, 32)
    levels = build_levels(leaves, (2, 2), poseidon_nodes)
    assert to_int(levels[1][0]) == int(vector["H(1,0)"], 16)
    assert to_int(levels[2][0]) == int(vector["root"], 16)


@pytest.mark.parametrize("hasher, arities", [(sha256_nodes, (2,) * 9), (poseidon_nodes, (8, 8, 8)),
                                             (poseidon_nodes, (8, 4, 8, 2))])
def test_paths_open_and_hash_to_the_root(hasher, arities, np_rng):
    count = int(np.prod(arities))
    leaves = np_rng.integers(0, 256, (count, 32), dtype=np.uint8)
    leaves[:, 31] &= 0x3F
    levels = build_levels(leaves, arities, hasher)
    nodes = np_rng.integers(0, count, (3, 4))
    path = open_paths(levels, arities, nodes, "Single")
    assert np.array_equal(path.node_index(), nodes)
    assert np.array_equal(path.leaf, leaves[nodes])
    assert (path_roots(path, hasher) == levels[-1][0]).all()
    path.levels[1].siblings[2, 1, 0, 5] ^= 1
    roots = path_roots(path, hasher)
    assert not (roots[2, 1] == levels[-1][0]).all() and (roots[0] == levels[-1][0]).all()


def test_a_sparse_tree_opens_valid_paths(np_rng):
    def fill(count):
        values = np_rng.integers(0, 256, (count, 32), dtype=np.uint8)
        values[:, 31] &= 0x3F
        return values
    positions = np.unique(np_rng.integers(0, 1 << 30, 40))
    tree = SparseTree(positions, fill(len(positions)), (8,) * 10, poseidon_nodes, fill)
    path = tree.open(positions[::-1], "Sub")
    assert np.array_equal(path.node_index(), positions[::-1])
    assert (path_roots(path, poseidon_nodes) == tree.root).all()
    with pytest.raises(ValueError, match="opens only the leaves"):
        tree.open(positions[:1] + 1, "Sub")
