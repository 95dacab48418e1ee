"""WindowPoSt / WinningPoSt inputs: the registered proofs and their parameter names, the
challenges against rust-fil-proofs' derivations (known-answers-snap-post.json), Curio's
bincode vanilla proofs decoded strictly, the api's vanilla checks and the padding of short
partitions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from snark.filecoin import prover_id_for_miner
from snark.filecoin.errors import FilecoinError
from snark.filecoin.post import challenges, checks, generate, vanilla
from snark.filecoin.post.circuit import PostData, PostShape, public_inputs, structure, witness
from snark.filecoin.post.registered_proofs import POST_PROOFS, PostApiVersion, post_proof
from snark.gadgets.assembly import check_rows

ANSWERS = json.loads((Path(__file__).parent / "data" / "filecoin" /
                      "known-answers-snap-post.json").read_text())
POST = ANSWERS["post"]
RANDOMNESS = bytes.fromhex(POST["randomness_masked_hex"])


def test_parameter_file_names_are_rust_fil_proofs():
    files = [f for f in ANSWERS["parameter_files"]["files"] if f["kind"] != "snap"]
    assert len(files) == 10
    for entry in files:
        matching = [p for p in POST_PROOFS.values()
                    if p.kind == entry["kind"] and p.sector_size == entry["sector_size"]]
        assert len(matching) == (1 if entry["kind"] == "winning" else 2)
        for proof in matching:
            assert proof.parameter_identifier == entry["identifier"]
            assert proof.params_file_stem == entry["name"]


def test_go_numbering_maps_v1_1_to_the_apis_v1_2():
    assert post_proof(0).name == "StackedDrgWinning2KiBV1"
    assert post_proof(3).api_version == PostApiVersion.V1_0
    assert post_proof(8).api_name == "StackedDrgWindow32GiBV1"
    assert post_proof(8).api_version == PostApiVersion.V1_0
    assert post_proof(13).name == "StackedDrgWindow32GiBV1_1"
    assert post_proof(13).api_name == "StackedDrgWindow32GiBV1_2"
    assert post_proof(13).api_version == PostApiVersion.V1_2
    assert (post_proof(13).sector_count, post_proof(14).sector_count) == (2349, 2300)
    assert (post_proof(4).sector_count, post_proof(4).challenge_count) == (66, 1)
    with pytest.raises(FilecoinError, match="registered_proof: 15"):
        post_proof(15)
    with pytest.raises(FilecoinError, match="not a winning"):
        post_proof(13, "winning")


def test_window_challenges_match_the_vectors_and_v1_2_drops_the_sector_index():
    vectors = POST["window_32GiB_sector_1234"]
    v1_0, v1_2 = post_proof(8), post_proof(13)
    for sector_index, key in ((0, "V1_0 sector_index 0"), (2, "V1_0 sector_index 2")):
        got = challenges.sector_challenges(v1_0, RANDOMNESS, 1234, sector_index)
        assert got.tolist() == vectors[key]
    for sector_index in (0, 2, 2348, 5000):
        got = challenges.sector_challenges(v1_2, RANDOMNESS, 1234, sector_index)
        assert got.tolist() == vectors["V1_2 any sector_index"]
    assert vectors["V1_0 sector_index 2"] != vectors["V1_2 any sector_index"]
    for version in PostApiVersion:  # 1.1 counts as 1.0 does; 1.2 drops the sector index
        expected = 7 if version == PostApiVersion.V1_2 else 2 * 10 + 7
        assert challenges.challenge_index(version, 2, 10, 7) == expected
    got = challenges.sector_challenges(post_proof(10), RANDOMNESS, 7, 1)
    assert got.tolist() == POST["window_2KiB_sector_7_V1_2"]


def test_winning_challenges_and_sector_choice_match_the_vectors():
    got = challenges.sector_challenges(post_proof(3), RANDOMNESS, 1234, 0)
    assert got.tolist() == POST["winning_32GiB_sector_1234_all66"]
    circuit = challenges.circuit_challenges(post_proof(3), RANDOMNESS, [1234], 0)
    assert circuit.shape == (66, 1) and circuit[:, 0].tolist() == got.tolist()
    choice = POST["winning_sector_choice"]
    prover_id = prover_id_for_miner(choice["prover_actor_id"])
    assert prover_id.hex() == choice["prover_id_hex"]
    assert challenges.winning_sector(prover_id, RANDOMNESS, choice["sector_set_len"]) == \
        choice["index"]
    for actor, text in POST["prover_id"].items():  # "e8070000…(zeros)"
        head = text.split("\u2026")[0]
        assert prover_id_for_miner(int(actor)).hex() == head.ljust(64, "0")


@pytest.fixture(scope="module")
def window_sectors(module_rng):
    rng = np.random.default_rng(module_rng.getrandbits(64))
    proof = post_proof(10)
    return proof, [generate.whole_sector(proof, rng, 100 + i) for i in range(2)]


def _window(window_sectors, partition_index=0, count=2) -> vanilla.SectorProofs:
    proof, sectors = window_sectors
    return generate.vanilla_proofs(proof, sectors[:count], RANDOMNESS, partition_index)


def test_bincode_round_trips_at_every_tree_shape(np_rng):
    for go_id in (0, 10, 13, 14):
        proof = post_proof(go_id)
        made = generate.sparse_proofs(proof, np_rng, [3, 4][:1 if go_id == 0 else 2],
                                      RANDOMNESS)
        elements = vanilla.encode(made)
        assert len(elements[0]) == 120 + proof.config_challenges * {
            "8-0-0": 4 + 64 + 8 + 2 * 240, "8-8-0": 2484,
            "8-8-2": 4 + 64 + 8 + 9 * 240 + 248 + 8 + 8 + 32 + 8}[proof.shape.display]
        decoded = vanilla.decode(elements, proof)
        assert vanilla.encode(decoded) == elements
        assert decoded.sector_ids == made.sector_ids
        checks.check_partition(decoded, RANDOMNESS, 0)
    assert len(vanilla.encode(generate.sparse_proofs(post_proof(13), np_rng, [1],
                                                     RANDOMNESS))[0]) == 24_960


# offset of a field in a 2 KiB window element: sector_id 0, comm_r 8, sectors 40, proofs 48,
# inclusion proof 0 at 56: variant 56, root 60, leaf 92, path count 124, element 0 at 132
# (count 132, hashes 140, index 364)
@pytest.mark.parametrize("offset, value, field", [
    (40, 2, r"vanilla_proofs\[1\]\.vanilla_proof\.sectors: holds 2"),
    (48, 9, r"inclusion_proofs: holds 9 proofs"),
    (56, 1, r"inclusion_proofs\[0\]\.data: is variant 1"),
    (124, 3, r"inclusion_proofs\[0\]\.data\.Single\.path\.path: has 3 elements"),
    (132, 6, r"\.path\[0\]\.hashes: has 6 hashes"),
    (364, 8, r"\.path\[0\]\.index: is 8, expected below the arity 8"),
    (39, 0xff, r"vanilla_proofs\[1\]\.comm_r: is not below"),
    (171, 0xff, r"\.path\[0\]\.hashes: a hash is not below r"),
])
def test_a_bad_field_is_named(window_sectors, offset, value, field):
    elements = vanilla.encode(_window(window_sectors))
    bad = bytearray(elements[1])
    bad[offset] = value
    with pytest.raises(FilecoinError, match=field):
        vanilla.decode([elements[0], bytes(bad)], post_proof(10))


def test_a_truncated_or_empty_list_is_refused(window_sectors):
    elements = vanilla.encode(_window(window_sectors))
    with pytest.raises(FilecoinError, match=r"vanilla_proofs\[0\]: is 5679 bytes, .* is 5680"):
        vanilla.decode([elements[0][:-1]], post_proof(10))
    with pytest.raises(FilecoinError, match="vanilla_proofs: is empty"):
        vanilla.decode([], post_proof(10))
    with pytest.raises(FilecoinError, match="is 5680 bytes"):
        vanilla.decode(elements, post_proof(13))


def _tampered(sectors: vanilla.SectorProofs, what: str) -> vanilla.SectorProofs:
    elements = [bytearray(e) for e in vanilla.encode(sectors)]
    target = elements[1]
    offsets = {"comm_r": 8, "leaf": 92, "sibling": 140, "root": 60 + 564,
               "comm_r_last": len(target) - 32}
    target[offsets[what]] ^= 1
    return vanilla.decode([bytes(e) for e in elements], sectors.proof)


@pytest.mark.parametrize("what, field", [
    ("comm_r", r"vanilla_proofs\[1\]\.comm_r: is not Poseidon2"),
    ("leaf", r"vanilla_proofs\[1\]\..*inclusion_proofs\[0\]: does not hash to its root"),
    ("sibling", r"vanilla_proofs\[1\]\..*inclusion_proofs\[0\]: does not hash"),
    ("root", r"vanilla_proofs\[1\]\..*inclusion_proofs\[1\]\.root: differs"),
    ("comm_r_last", r"vanilla_proofs\[1\]\.vanilla_proof\.sectors\[0\]\.comm_r_last"),
])
def test_the_vanilla_checks_refuse_tampered_proofs(window_sectors, what, field):
    with pytest.raises(FilecoinError, match=field):
        checks.check_partition(_tampered(_window(window_sectors), what), RANDOMNESS, 0)


def test_challenges_bind_randomness_sector_and_v1_partition(window_sectors):
    good = _window(window_sectors)
    checks.check_partition(good, RANDOMNESS, 0)
    checks.check_partition(good, RANDOMNESS, 7)  # V1_2: the partition does not matter
    other = bytes([RANDOMNESS[0] ^ 1]) + RANDOMNESS[1:]
    with pytest.raises(FilecoinError, match=r"vanilla_proofs\[0\]\..*opens leaf"):
        checks.check_partition(good, other, 0)
    v1 = generate.vanilla_proofs(post_proof(5), window_sectors[1], RANDOMNESS, 1)
    checks.check_partition(v1, RANDOMNESS, 1)
    with pytest.raises(FilecoinError, match="opens leaf"):
        checks.check_partition(v1, RANDOMNESS, 0)
    with pytest.raises(FilecoinError, match="randomness: is not below"):
        checks.check_partition(good, b"\xff" * 32, 0)
    swapped = good.take([1, 0])
    with pytest.raises(FilecoinError, match="opens leaf|does not hash"):
        checks.check_partition(
            vanilla.SectorProofs(good.proof, good.sector_ids, swapped.comm_r, swapped.comm_c,
                                 swapped.comm_r_last, swapped.paths), RANDOMNESS, 0)
    with pytest.raises(FilecoinError, match=r"vanilla_proofs\[1\]\.sector_id: sector 100"):
        checks.check_partition(good.take([0, 0]), RANDOMNESS, 0)


def test_a_short_partition_repeats_its_last_sector(window_sectors):
    proof = post_proof(10)
    short = _window(window_sectors, partition_index=3, count=1)
    checks.check_partition(short, RANDOMNESS, 3)
    padded = checks.circuit_sectors(short)
    assert padded.sector_ids == [100, 100]
    assert (padded.paths.leaf[0] == padded.paths.leaf[1]).all()
    inputs = public_inputs(proof, RANDOMNESS, short.sector_ids, [short.comm_r[0].tobytes()], 3)
    assert len(inputs) == 2 * 11 and inputs[:11] == inputs[11:]
    shape = PostShape.of(proof)
    assignment = witness(shape, PostData.of(padded))
    assert assignment.public_inputs() == inputs
    assert check_rows(structure(shape), assignment.assignment()).size == 0


def test_winning_unrolls_its_66_proofs_into_circuit_sectors(np_rng):
    proof = post_proof(0)
    sector = generate.whole_sector(proof, np_rng, 42)
    made = generate.vanilla_proofs(proof, [sector], RANDOMNESS)
    checks.check_partition(made, RANDOMNESS, 0)
    circuit = checks.circuit_sectors(made)
    assert len(circuit) == 66 and circuit.paths.leaf.shape == (66, 1, 32)
    assert (circuit.paths.node_index()[:, 0] == made.paths.node_index()[0]).all()
    inputs = public_inputs(proof, RANDOMNESS, [42], [made.comm_r[0].tobytes()], 0)
    shape = PostShape.of(proof)
    assignment = witness(shape, PostData.of(circuit))
    assert assignment.public_inputs() == inputs and len(inputs) == 132
    assert check_rows(structure(shape), assignment.assignment()).size == 0
    with pytest.raises(FilecoinError, match="WinningPoSt proves one sector, got 2"):
        checks.check_partition(made.take([0, 0]), RANDOMNESS, 0)


def test_official_keys_are_named_and_their_digests_checked(tmp_path):
    from snark.filecoin.params import OFFICIAL_DIGESTS, check_digest, official_paths
    from snark.filecoin.registered_proofs import key_stem

    files = {f["name"]: (f["params_digest"], f["vk_digest"])
             for f in ANSWERS["parameter_files"]["files"] if f["kind"] != "snap"}
    for proof in POST_PROOFS.values():
        assert OFFICIAL_DIGESTS[proof.params_file_stem] == files[proof.params_file_stem]
        assert key_stem(proof, "official") == proof.params_file_stem
        assert key_stem(proof, "development").startswith("proofq-dev-proof-of-spacetime-")
    params_path, vk_path = official_paths(post_proof(13), tmp_path)
    vk_path.write_bytes(b"not the ceremony's key")
    with pytest.raises(FilecoinError, match="is not parameters.json's 0f8ec542485568fa"):
        check_digest(vk_path)


@pytest.mark.parametrize("go_id", [13, 14])
def test_sparse_large_sectors_satisfy_the_circuit(np_rng, go_id):
    """Sparse 32 GiB (8-8-0, Sub) and 64 GiB (8-8-2, Top) sectors: their vanilla proofs pass
    the checks, and two of them satisfy the per-sector circuit of that tree shape."""
    proof = post_proof(go_id)
    made = vanilla.decode(vanilla.encode(generate.sparse_proofs(proof, np_rng, [11, 12],
                                                                RANDOMNESS, 5)), proof)
    checks.check_partition(made, RANDOMNESS, 5)
    shape = PostShape(proof.nodes, proof.shape, 2, proof.challenge_count)
    assignment = witness(shape, PostData.of(made))
    assert check_rows(structure(shape), assignment.assignment()).size == 0
    expected = []
    for i, sector_id in enumerate(made.sector_ids):
        leaves = challenges.sector_challenges(proof, RANDOMNESS, sector_id, 5 * 2349 + i)
        expected += [int.from_bytes(made.comm_r[i].tobytes(), "little"), *leaves.tolist()]
    assert assignment.public_inputs() == expected
    bad = PostData.of(made)
    bad.path[3].siblings[1, 4, 0] += 1
    assert check_rows(structure(shape), witness(shape, bad).assignment()).size > 0


@pytest.mark.slow
def test_a_full_32gib_window_partition_is_built_and_checked(np_rng):
    """2,349 sparse 32 GiB sectors (58.6 MB of bincode): decoded, every api check, public
    inputs (9 minutes on two busy shared cores, nearly all of it Poseidon: 235,000 arity-8
    hashes to make the trees and as many to check the paths)."""
    proof = post_proof(13)
    made = generate.sparse_proofs(proof, np_rng, list(range(1000, 1000 + 2349)), RANDOMNESS, 2)
    elements = vanilla.encode(made)
    assert sum(map(len, elements)) == 2349 * 24_960
    decoded = vanilla.decode(elements, proof)
    checks.check_partition(decoded, RANDOMNESS, 2)
    inputs = public_inputs(proof, RANDOMNESS, decoded.sector_ids,
                           [c.tobytes() for c in decoded.comm_r], 2)
    assert len(inputs) == 25_839


@pytest.mark.slow
def test_a_whole_8mib_sector_passes_and_satisfies_the_window_circuit(np_rng):
    proof = post_proof(11)
    sector = generate.whole_sector(proof, np_rng, 77)
    made = generate.vanilla_proofs(proof, [sector], RANDOMNESS, 4)
    checks.check_partition(made, RANDOMNESS, 4)
    shape = PostShape.of(proof)
    assignment = witness(shape, PostData.of(checks.circuit_sectors(made)))
    assert check_rows(structure(shape), assignment.assignment()).size == 0
    assert assignment.public_inputs() == public_inputs(proof, RANDOMNESS, [77],
                                                       [sector.comm_r()], 4)
