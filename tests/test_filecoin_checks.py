"""Sealed and sparse C1s pass every pre-proving check; each kind of tampering is named."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from snark.filecoin.c1_schema import parse_c1
from snark.filecoin.c1_write import curio_json, phase1_json
from snark.filecoin.challenges import (interactive_challenges, porep_challenges,
                                       synthetic_challenges)
from snark.filecoin.checks import check_c1
from snark.filecoin.errors import FilecoinError
from snark.filecoin.graph import parent_cache_name
from snark.filecoin.prove import statement, verify_c1
from snark.filecoin.registered_proofs import registered_proof
from snark.filecoin.seal import seal, seal_sparse
from snark.proof import ProofFormatError
from tests.filecoin_c1s import above_r, small_big_proofs  # noqa: F401 (a fixture)
from tests.filecoin_vectors import PARENT_CACHES

WHERE = "vanilla_proofs.StackedDrg2KiBV1"


@pytest.fixture(scope="module")
def sealed(module_rng):
    """A 2 KiB sector whose ticket and seed are above r (as most of the chain's are)."""
    rng = np.random.default_rng(module_rng.getrandbits(64))
    return seal(registered_proof("StackedDrg2KiBV1_1"), rng, ticket=above_r(rng),
                seed=above_r(rng))


def test_a_sealed_sector_passes_in_both_encodings(sealed):
    assert min(sealed.ticket[31], sealed.seed[31]) > 0x73  # both above r
    check_c1(sealed)
    wrapped = parse_c1(curio_json(sealed, sealed.sector_num))
    assert wrapped.prover_id is None
    check_c1(wrapped, prover_id=sealed.prover_id, sector_id=sealed.sector_id)
    raw = parse_c1(phase1_json(sealed, with_ids=True))
    assert (raw.prover_id, raw.sector_id) == (sealed.prover_id, sealed.sector_id)
    check_c1(raw)


def _flip(array: np.ndarray, index) -> None:
    array[index] ^= 1


TAMPER = {
    "a sibling hash": (
        lambda c: _flip(c.vanilla.comm_r_last.levels[1].siblings, (0, 1, 3, 0)),
        f"{WHERE}[0][1].comm_r_last_proof.data.Single: does not hash to its root"),
    "a tree C sibling": (
        lambda c: _flip(c.vanilla.columns.path.levels[0].siblings, (0, 0, 9, 6, 2)),
        f"{WHERE}[0][0].replica_column_proofs.exp_parents[2].inclusion_proof.data.Single: does "
        f"not hash to its root"),
    "a label": (lambda c: _flip(c.vanilla.labeling.parents, (0, 1, 1, 3, 0)),
                f"{WHERE}[0][1].labeling_proofs[1].parents[3]: is not the row of the parent's "
                f"column"),
    "a column row": (lambda c: _flip(c.vanilla.columns.rows, (0, 0, 3, 1, 4)),
                     f"{WHERE}[0][0].replica_column_proofs.drg_parents[2].column: its rows do "
                     f"not hash to the leaf"),
    "the seed": (lambda c: object.__setattr__(c, "seed", _moved_seed(c)),
                 f"{WHERE}[0][0].replica_column_proofs.c_x.column.index: "),
    "a zero seed": (lambda c: object.__setattr__(c, "seed", bytes(32)),
                    'seed: is 32 zero bytes (rust-fil-proofs refuses it: "Invalid porep '
                    'challenge seed")'),
    "a zero comm_d": (lambda c: object.__setattr__(c, "comm_d", bytes(32)),
                      'comm_d: is 32 zero bytes (rust-fil-proofs refuses it: "Invalid all zero '
                      'commitment (comm_d)")'),
    "a zero comm_r": (lambda c: object.__setattr__(c, "comm_r", bytes(32)),
                      'comm_r: is 32 zero bytes (rust-fil-proofs refuses it: "Invalid all zero '
                      'commitment (comm_r)")'),
    "comm_r": (lambda c: object.__setattr__(c, "comm_r", bytes(31) + b"\x01"),
               "comm_r: is not Poseidon(comm_c, comm_r_last)"),
    "a data leaf": (lambda c: _flip(c.vanilla.comm_d.leaf, (0, 1, 7)),
                    f"{WHERE}[0][1].comm_d_proofs.data.Single: does not hash to its root"),
    "comm_d": (lambda c: object.__setattr__(c, "comm_d", bytes(31) + b"\x01"),
               "replica_id: is not the hash of prover_id, sector_id, ticket, comm_d"),
    "comm_d, no ids named": (lambda c: [object.__setattr__(c, "comm_d", bytes(31) + b"\x01"),
                                        object.__setattr__(c, "prover_id", None)],
                             f"{WHERE}[0][0].comm_d_proofs.data.Single.root: is not comm_d"),
    "a parent's column": (lambda c: _flip(c.vanilla.columns.index, (0, 1, 1)),
                          f"{WHERE}[0][1].replica_column_proofs.drg_parents[0].column.index: "),
    "a labeling node": (lambda c: _flip(c.vanilla.labeling.node, (0, 0, 1)),
                        f"{WHERE}[0][0].labeling_proofs[1].node: names node "),
    "a layer index": (lambda c: c.vanilla.labeling.layer_index.__setitem__((0, 1, 0), 2),
                      f"{WHERE}[0][1].labeling_proofs[0].layer_index: is 2, expected 1"),
    "the encoding parents": (lambda c: _flip(c.vanilla.encoding.parents, (0, 0, 36, 31)),
                             f"{WHERE}[0][0].encoding_proof.parents: are not the last labeling "
                             f"proof's parents"),
    "another tree's root": (lambda c: _flip(c.vanilla.comm_r_last.root, (0, 1, 0)),
                            f"{WHERE}[0][1].comm_r_last_proof.data.Single.root: differs from "
                            f"the first proof's comm_r_last (inconsistent comm_r_lasts)"),
    "another comm_c": (lambda c: _flip(c.vanilla.columns.path.root, (0, 1, 0, 5)),
                       f"{WHERE}[0][1].replica_column_proofs.c_x.inclusion_proof.data.Single."
                       f"root: differs from comm_c of the first proof's c_x (inconsistent "
                       f"comm_cs)"),
}


def _moved_seed(c1) -> bytes:
    """Another seed that moves partition 0's challenge 0: under a new seed a random 2 KiB
    sector keeps its first challenge one time in 64, and the check then names a later one."""
    first = porep_challenges(c1.proof, c1.replica_id, c1.comm_r, c1.seed)[0, 0]
    return next(seed for seed in (b"\xff" * 31 + bytes([k]) for k in range(256))
                if porep_challenges(c1.proof, c1.replica_id, c1.comm_r, seed)[0, 0] != first)


@pytest.mark.parametrize("tamper, expected", TAMPER.values(), ids=TAMPER.keys())
def test_tampering_names_partition_challenge_and_field(tamper, expected, sealed):
    c1 = copy.deepcopy(sealed)
    tamper(c1)
    with pytest.raises(FilecoinError) as info:
        check_c1(c1)
    assert str(info.value).startswith(expected), str(info.value)


def test_replica_id_is_checked_against_the_ids(sealed):
    with pytest.raises(FilecoinError, match="^replica_id: is not the hash of prover_id"):
        check_c1(sealed, sector_id=sealed.sector_id + 1)
    check_c1(dataclasses.replace(sealed, prover_id=None))  # unknown ids: nothing to compare


@pytest.mark.parametrize("name", ["StackedDrg2KiBV1", "StackedDrg512MiBV1_1"])
def test_sparse_c1s_pass(name, np_rng):
    c1 = seal_sparse(registered_proof(name), np_rng, seed=above_r(np_rng))
    check_c1(c1)
    check_c1(parse_c1(curio_json(c1, 3)))


@pytest.mark.usefixtures("small_big_proofs")
def test_a_sparse_64gib_shaped_c1_passes(np_rng):
    """The Top tree (8-8-2) and API 1.0 at 2^31 nodes, with one partition of two challenges."""
    c1 = parse_c1(curio_json(seal_sparse(registered_proof("StackedDrg64GiBV1"), np_rng), 1))
    assert c1.vanilla.comm_r_last.shape == "Top" and len(c1.vanilla.comm_r_last.levels) == 11
    check_c1(c1)


@pytest.mark.slow
def test_a_sealed_8mib_sector_passes_and_its_graph_is_filecoins(np_rng):
    """Seals 8 MiB (the V1_1 graph whose parent cache rust-fil-proofs lists, every label,
    every tree) and checks its C1 read back from Curio's encoding."""
    proof = registered_proof("StackedDrg8MiBV1_1")
    digests = []
    from snark.filecoin import graph
    original = graph.SdrGraph.parents

    def recorded(self, nodes=None):
        out = original(self, nodes)
        if nodes is None:
            digests.append(__import__("hashlib").sha256(out.astype("<u4").tobytes()).hexdigest())
        return out

    graph.SdrGraph.parents = recorded
    try:
        c1 = seal(proof, np_rng)
    finally:
        graph.SdrGraph.parents = original
    assert PARENT_CACHES[parent_cache_name(proof)] == (proof.sector_size, digests[0])
    check_c1(parse_c1(curio_json(c1, c1.sector_num)), prover_id=c1.prover_id,
             sector_id=c1.sector_id)


@pytest.mark.slow
def test_a_sparse_32gib_c1_passes_and_tampering_is_named(np_rng):
    c1 = parse_c1(curio_json(seal_sparse(registered_proof("StackedDrg32GiBV1_1"), np_rng), 1))
    assert c1.vanilla.columns.rows.shape == (10, 18, 15, 11, 32)
    check_c1(c1)
    _flip(c1.vanilla.columns.path.levels[9].siblings, (7, 4, 0, 3, 0))
    with pytest.raises(FilecoinError, match=r"^vanilla_proofs.StackedDrg32GiBV1\[7\]\[4\]."
                                            r"replica_column_proofs.c_x.inclusion_proof.data.Sub: "
                                            r"does not hash to its root"):
        check_c1(c1)


@pytest.mark.parametrize("name, proof_bytes, error, expected", [
    ("comm_d", bytes(192), FilecoinError, 'comm_d: is 32 zero bytes (rust-fil-proofs refuses '
                                          'it: "Invalid all zero commitment (comm_d)")'),
    ("comm_r", bytes(192), FilecoinError, "comm_r: is 32 zero bytes"),
    (None, b"", ProofFormatError, ""),           # "Invalid proof bytes (empty vector)"
    (None, bytes(384), ProofFormatError, ""),    # StackedCompound::verify "Inconsistent inputs"
], ids=["zero comm_d", "zero comm_r", "no proof", "two proofs for one partition"])
def test_verify_refuses_what_verify_seal_refuses(name, proof_bytes, error, expected, sealed):
    c1 = dataclasses.replace(sealed, **{name: bytes(32)}) if name else sealed
    with pytest.raises(error) as info:
        verify_c1(c1, None, proof_bytes)  # refused before any key is needed
    assert str(info.value).startswith(expected), str(info.value)


def test_the_statement_verify_seal_checks_derives_replica_id(sealed):
    same, derived = statement(sealed)
    assert derived and same.replica_id == sealed.replica_id
    other, derived = statement(sealed, sector_id=sealed.sector_id + 1)
    assert derived and other.replica_id != sealed.replica_id
    trusted, derived = statement(dataclasses.replace(sealed, prover_id=None, sector_id=None,
                                                     replica_id=bytes(31) + b"\x01"))
    assert not derived and trusted.replica_id == bytes(31) + b"\x01"


def test_a_sealed_synthetic_sector_passes_and_opens_synthetic_challenges(np_rng):
    """Synthetic PoRep: the seed picks among the challenges comm_r fixes; the same proofs
    named as V1_1 (interactive challenges) fail, and no sparse sealer exists for it."""
    proof = registered_proof("StackedDrg2KiBV1_1_Feat_SyntheticPoRep")
    c1 = seal(proof, np_rng, seed=above_r(np_rng), ticket=above_r(np_rng))
    check_c1(parse_c1(curio_json(c1, c1.sector_num)), prover_id=c1.prover_id,
             sector_id=c1.sector_id)
    picked = synthetic_challenges(c1.replica_id, c1.comm_r, c1.seed, proof.nodes, 1, 2)
    assert np.array_equal(c1.vanilla.nodes, picked)
    interactive = dataclasses.replace(c1, proof=registered_proof("StackedDrg2KiBV1_1"),
                                      prover_id=None)
    if not np.array_equal(picked, interactive_challenges(c1.replica_id, c1.seed, proof.nodes,
                                                         1, 2)):
        with pytest.raises(FilecoinError, match="c_x.column.index: .* is not challenge"):
            check_c1(interactive)
    with pytest.raises(FilecoinError, match="^registered_proof: StackedDrg2KiBV1_1_Feat_"
                                            "SyntheticPoRep cannot be sealed sparsely"):
        seal_sparse(proof, np_rng)
