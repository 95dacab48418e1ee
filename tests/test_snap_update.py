"""SnapDeals updates: the strict bincode reader of ``PartitionProof`` (every field checked,
the first failure named), the JSON form and Curio's request fields, and the checks run
before proving, on test updates of whole sectors (2 KiB; the 1 KiB and 32 KiB test shapes
for Sub and Top trees and two partitions), each tampered input refused at its field."""

from __future__ import annotations

import base64
import dataclasses
import json
import struct

import numpy as np
import pytest

from snark.filecoin.c1 import MerklePath, PathLevel
from snark.filecoin.domain import from_int, from_limbs, to_int
from snark.filecoin.errors import FilecoinError
from snark.filecoin.seal import random_fields
from snark.filecoin.snap import generate
from snark.filecoin.snap.bincode import decode_partition_proof, encode_partition_proof
from snark.filecoin.snap.proofs import PartitionProof
from snark.filecoin.snap.checks import check_partition, check_update, comm_r
from snark.filecoin.snap.shape import SnapShape
from snark.filecoin.snap.update import from_request, parse_update
from snark.filecoin.trees import WholeTree, poseidon_nodes
from snark.fields import FR_MODULUS, fr_to_limbs


def np_rng(rng) -> np.random.Generator:
    return np.random.default_rng(rng.getrandbits(64))


@pytest.fixture(scope="module")
def update_2kib(module_rng):
    return generate.generate_update(SnapShape(64), np_rng(module_rng))


@pytest.fixture(scope="module")
def update_32kib(module_rng):
    """The 32 KiB test shape: tree R 8-8-2 (Top), two partitions."""
    return generate.generate_update(SnapShape(1024), np_rng(module_rng))


def request(update, **changes) -> dict:
    fields = dict(vanilla_proofs=list(update.vanilla_proofs), comm_r_old=update.comm_r_old,
                  comm_r_new=update.comm_r_new, comm_d_new=update.comm_d_new,
                  registered_proof=0, sector_size=2048)
    fields.update(changes)
    return fields


# -- bincode ---------------------------------------------------------------------------------
@pytest.mark.parametrize("nodes", [32, 64, 1024])
def test_bincode_round_trip(nodes, rng):
    shape = SnapShape(nodes)
    update = generate.generate_update(shape, np_rng(rng))
    for raw, proof in zip(update.vanilla_proofs, update.partitions):
        again = decode_partition_proof(raw, shape)
        assert encode_partition_proof(again) == raw
        for name in ("r_old", "d_new", "r_new"):
            a, b = getattr(again, name), getattr(proof, name)
            assert a.shape == b.shape and (a.leaf == b.leaf).all() and (a.root == b.root).all()
            assert all((x.siblings == y.siblings).all() and (x.index == y.index).all()
                       for x, y in zip(a.levels, b.levels))


def test_bincode_layout_of_a_2kib_partition(update_2kib):
    """comm_c ‖ 8 apex leaves ‖ 10 × (Single r_old, Single d_new of 6 levels, Single r_new):
    a Single proof is 4 + 64 + 8 + levels × (8 + siblings × 32 + 8)."""
    raw = update_2kib.vanilla_proofs[0]
    single_r = 4 + 64 + 8 + 2 * (8 + 7 * 32 + 8)
    single_d = 4 + 64 + 8 + 6 * (8 + 32 + 8)
    assert len(raw) == 32 + 8 + 8 * 32 + 8 + 10 * (2 * single_r + single_d)
    assert raw[:32] == update_2kib.partitions[0].comm_c.tobytes()
    assert struct.unpack_from("<Q", raw, 32)[0] == 8


def _blank_partition(shape: SnapShape, rng) -> PartitionProof:
    """A partition of ``shape``'s layout with random small domains and indices."""
    k = shape.challenges

    def domains(*lead: int) -> np.ndarray:
        values = np.frombuffer(rng.randbytes(32 * int(np.prod(lead))), dtype=np.uint8)
        values = values.reshape(*lead, 32).copy()
        values[..., -1] &= 0x3F
        return values

    def path(variant: str, arities: list[int]) -> MerklePath:
        return MerklePath(variant, domains(k), domains(k), tuple(
            PathLevel(a, domains(k, a - 1), np.asarray([rng.randrange(a) for _ in range(k)]))
            for a in arities))

    return PartitionProof(domains(1)[0], domains(shape.apex_leaves),
                          path(shape.tree.name, shape.tree_arities()),
                          path("Single", [2] * shape.challenge_bits),
                          path(shape.tree.name, shape.tree_arities()))


@pytest.mark.parametrize("nodes, size", [(1 << 30, 561_768), (1 << 31, 575_528)])
def test_bincode_of_32_and_64gib_partitions(nodes, size, rng):
    """86 challenges, 128 apex leaves, tree R Sub (8-8-0: a proof of 2,484 bytes, as the
    sheet gives for PoSt's) and Top (8-8-2)."""
    shape = SnapShape(nodes)
    raw = encode_partition_proof(_blank_partition(shape, rng))
    assert len(raw) == size
    single_d = 4 + 64 + 8 + shape.challenge_bits * 48
    assert (size - 32 - 8 - 128 * 32 - 8) // 86 - single_d == 2 * (
        2_484 if nodes == 1 << 30 else 2_484 + 8 + 8 + 32 + 8)
    assert encode_partition_proof(decode_partition_proof(raw, shape)) == raw


def _mutated(raw: bytes, at: int, value: bytes) -> bytes:
    return raw[:at] + value + raw[at + len(value):]


@pytest.mark.parametrize("where, value, message", [
    (32, struct.pack("<Q", 9), r"^vanilla_proofs\[0\]\.apex_leafs: has 9 entries, expected 8$"),
    (32 + 8 + 256, struct.pack("<Q", 11),
     r"^vanilla_proofs\[0\]\.challenge_proofs: has 11 entries, expected 10$"),
    (32 + 8 + 256 + 8, struct.pack("<I", 1),
     r"^vanilla_proofs\[0\]\.challenge_proofs\[0\]\.proof_r_old: is variant Sub, expected "
     r"Single$"),
    (32 + 8 + 256 + 8 + 4 + 64, struct.pack("<Q", 3),
     r"^vanilla_proofs\[0\]\.challenge_proofs\[0\]\.proof_r_old\.path: has 3 entries, "
     r"expected 2$"),
    (32 + 8 + 256 + 8 + 4 + 64 + 8, struct.pack("<Q", 6),
     r"^vanilla_proofs\[0\]\.challenge_proofs\[0\]\.proof_r_old\.path\[0\]\.siblings: has 6 "
     r"entries, expected 7$"),
    (32 + 8 + 256 + 8 + 4 + 64 + 8 + 8 + 224, struct.pack("<Q", 8),
     r"^vanilla_proofs\[0\]\.challenge_proofs\[0\]\.proof_r_old\.path\[0\]\.index: 8 is not "
     r"below the arity 8$"),
    (0, b"\xff" * 32, r"^vanilla_proofs\[0\]\.comm_c: is not a reduced field element"),
    (32 + 8 + 3 * 32, b"\xff" * 32,
     r"^vanilla_proofs\[0\]\.apex_leafs\[3\]: is not a reduced field element"),
])
def test_bincode_refuses_each_bad_field(update_2kib, where, value, message):
    raw = _mutated(update_2kib.vanilla_proofs[0], where, value)
    with pytest.raises(FilecoinError, match=message):
        decode_partition_proof(raw, SnapShape(64))


def test_bincode_refuses_truncation_and_trailing_bytes(update_2kib, rng):
    raw = update_2kib.vanilla_proofs[0]
    cut = rng.randrange(1, len(raw))
    with pytest.raises(FilecoinError, match=r"^vanilla_proofs\[0\]\.\S+: ends at byte "):
        decode_partition_proof(raw[:cut], SnapShape(64))
    with pytest.raises(FilecoinError, match=r"^vanilla_proofs\[0\]: 1 bytes left after"):
        decode_partition_proof(raw + b"\0", SnapShape(64))


def test_bulk_and_field_by_field_reading_agree(update_32kib, rng):
    """Random bytes changed: a proof comes back that writes the same bytes, or the first bad
    field is named (never the reader's internal disagreement)."""
    raw, shape = update_32kib.vanilla_proofs[1], update_32kib.shape
    for _ in range(40):
        mutated = bytearray(raw)
        at = rng.randrange(len(raw))
        mutated[at] = rng.randrange(256)
        try:
            proof = decode_partition_proof(bytes(mutated), shape)
        except FilecoinError as exc:
            assert str(exc).startswith("vanilla_proofs[0].")
        else:
            assert encode_partition_proof(proof) == bytes(mutated)


# -- the request and the JSON form -----------------------------------------------------------
def test_json_form_round_trips_as_protobuf_json(update_2kib):
    text = update_2kib.to_json()
    doc = json.loads(text)
    assert doc["registered_proof"] == 0 and doc["sector_size"] == 2048
    assert base64.b64decode(doc["comm_d_new"]) == update_2kib.comm_d_new
    again = parse_update(text)
    assert again == update_2kib
    check_update(again)


@pytest.mark.parametrize("change, message", [
    ({"registered_proof": 7}, r"^registered_proof: 7 is not a registered update proof"),
    ({"sector_size": 1 << 23}, r"^sector_size: 8388608 is not the 2KiB"),
    ({"comm_r_old": b"\0" * 31}, r"^comm_r_old: expected 32 raw bytes, got 31$"),
    ({"comm_d_new": b"\xff" * 32}, r"^comm_d_new: is not a reduced field element"),
    ({"vanilla_proofs": []}, r"^vanilla_proofs: has 0 partition proofs, a 2KiB update has 1$"),
    ({"vanilla_proofs": ["text"]}, r"^vanilla_proofs\[0\]: expected bytes, got str$"),
])
def test_request_fields_refused_by_name(update_2kib, change, message):
    with pytest.raises(FilecoinError, match=message):
        from_request(**request(update_2kib, **change))


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("comm_r_new"), r"^update: missing comm_r_new$"),
    (lambda d: d.update(extra=1), r"^update: unknown extra$"),
    (lambda d: d.update(comm_r_old="%%"), r"^comm_r_old: is not base64$"),
    (lambda d: d.update(sector_size="2048"), r"^sector_size: expected an integer"),
])
def test_json_form_refused_by_name(update_2kib, edit, message):
    doc = json.loads(update_2kib.to_json())
    edit(doc)
    with pytest.raises(FilecoinError, match=message):
        parse_update(json.dumps(doc))


# -- checks ----------------------------------------------------------------------------------
def test_generated_updates_pass_every_check(update_2kib, update_32kib, rng):
    check_update(update_2kib)
    check_update(update_32kib)
    check_update(generate.generate_update(SnapShape(32), np_rng(rng)))  # 8-4-0: Sub


def _replace_partition(update, k: int, **changes):
    partitions = list(update.partitions)
    partitions[k] = dataclasses.replace(partitions[k], **changes)
    return dataclasses.replace(update, partitions=tuple(partitions))


def _path_with(path, **changes):
    return dataclasses.replace(path, **changes)


def test_a_tampered_commitment_is_refused(update_2kib, rng):
    field = rng.choice(["comm_r_old", "comm_r_new", "comm_d_new"])
    other = from_int((to_int(getattr(update_2kib, field)) + 1) % FR_MODULUS)
    tampered = dataclasses.replace(update_2kib, **{field: other})
    expected = {"comm_r_old": r"proof_r_old\.root: Poseidon\(comm_c, root\) is not comm_r_old",
                "comm_r_new": r"proof_r_new\.root: Poseidon\(comm_c, root\) is not comm_r_new",
                "comm_d_new": r"proof_d_new\.root: is not the partition's root"}[field]
    with pytest.raises(FilecoinError, match=expected):
        check_update(tampered)


def test_a_tampered_path_is_refused(update_2kib, rng):
    proof = update_2kib.partitions[0]
    name = rng.choice(["r_old", "d_new", "r_new"])
    path = getattr(proof, name)
    i, level = rng.randrange(len(path.leaf)), rng.randrange(len(path.levels))
    siblings = path.levels[level].siblings.copy()
    siblings[i, 0, 0] ^= 1
    levels = list(path.levels)
    levels[level] = dataclasses.replace(levels[level], siblings=siblings)
    tampered = _replace_partition(update_2kib, 0, **{name: _path_with(path, levels=tuple(levels))})
    with pytest.raises(FilecoinError, match=rf"challenge_proofs\[{i}\]\.proof_{name}: its path "
                                            "does not hash to its root"):
        check_update(tampered)


def test_a_tampered_leaf_is_refused(update_2kib, rng):
    name = rng.choice(["r_old", "d_new", "r_new"])
    path = getattr(update_2kib.partitions[0], name)
    i = rng.randrange(len(path.leaf))
    leaf = path.leaf.copy()
    leaf[i, 0] ^= 1
    tampered = _replace_partition(update_2kib, 0, **{name: _path_with(path, leaf=leaf)})
    with pytest.raises(FilecoinError, match=rf"challenge_proofs\[{i}\]\.proof_{name}"):
        check_update(tampered)


def test_labels_not_encoded_with_rho_are_refused(rng):
    """A new replica one more than old + data·rho at every node: its paths and comm_r_new
    are consistent, its labels are not."""
    shape = SnapShape(64)
    key = generate.random_sector_key(shape, np_rng(rng))
    encoded = generate.encode(shape, key, random_fields(np_rng(rng), shape.nodes))
    shifted = fr_to_limbs([(to_int(v) + 1) % FR_MODULUS for v in encoded.tree_r_new.levels[0]])
    tree = WholeTree.build(from_limbs(shifted).reshape(-1, 32), shape.tree_arities(),
                           poseidon_nodes)
    comm_r_new = from_int(comm_r(to_int(key.comm_c), to_int(tree.root)))
    encoded = dataclasses.replace(encoded, tree_r_new=tree, comm_r_new=comm_r_new)
    proof = generate.partition_proof(shape, encoded, 0)
    update = generate.SnapUpdate(shape, encoded.comm_r_old, comm_r_new, encoded.comm_d_new,
                                 (encode_partition_proof(proof),), (proof,))
    with pytest.raises(FilecoinError, match=r"challenge_proofs\[0\]\.proof_r_new\.leaf: is not "
                                            r"the old label \+ new data · rho"):
        check_update(update)


def test_a_tampered_apex_leaf_is_refused(update_2kib, rng):
    proof = update_2kib.partitions[0]
    apex = proof.apex_leaves.copy()
    apex[rng.randrange(len(apex)), 0] ^= 1
    with pytest.raises(FilecoinError, match=r"vanilla_proofs\[0\]\.(challenge_proofs\[\d+\]\."
                                            r"proof_d_new: does not pass through|apex_leafs)"):
        check_update(_replace_partition(update_2kib, 0, apex_leaves=apex))


def test_partitions_out_of_order_are_refused(update_32kib):
    swapped = dataclasses.replace(update_32kib, partitions=update_32kib.partitions[::-1])
    with pytest.raises(FilecoinError, match=r"^vanilla_proofs\[0\]\.challenge_proofs\[0\]\."
                                            r"proof_r_old: opens node \d+, the challenge is"):
        check_update(swapped)
    check_partition(update_32kib, 1)


@pytest.mark.slow  # a whole 8 MiB sector encoded: tens of seconds
def test_a_whole_8mib_update(rng):
    """Four partitions of 10 challenges, h = 10 (rho changes every 2^8 nodes), 128 apex
    leaves each: every check passes, and partitions in another order are refused."""
    shape = SnapShape(1 << 18)
    update = generate.generate_update(shape, np_rng(rng))
    assert len(update.vanilla_proofs) == 4
    again = parse_update(update.to_json())
    check_update(again)
    order = [1, 0, 2, 3]
    swapped = dataclasses.replace(again, partitions=tuple(again.partitions[k] for k in order))
    with pytest.raises(FilecoinError, match=r"^vanilla_proofs\[0\]\.challenge_proofs\[0\]\."
                                            r"proof_r_old: opens node"):
        check_update(swapped)


def test_an_index_of_2_to_the_63_or_more_is_refused_by_name(update_32kib):
    """The bulk reader once read a path index as int64, so one with its top bit set came back
    negative, below every arity, and was accepted (found by the fuzz test above)."""
    from snark.filecoin.snap.bincode import _layout

    raw, shape = update_32kib.vanilla_proofs[1], update_32kib.shape
    offsets = _layout(shape)["indices"]
    at = int(next(iter(offsets.values()))[0])
    mutated = bytearray(raw)
    mutated[at + 7] = 0x80
    with pytest.raises(FilecoinError, match=r"\.index: \d+ is not below the arity"):
        decode_partition_proof(bytes(mutated), shape)


def test_the_new_replica_is_old_plus_data_times_rho_at_every_node(np_rng):
    """``encode``'s vectorised replica against the formula node by node, in ints."""
    from snark.filecoin.snap import randomness

    shape = SnapShape(64)
    key = generate.random_sector_key(shape, np_rng)
    data = random_fields(np_rng, shape.nodes)
    encoded = generate.encode(shape, key, data)
    phi = randomness.phi(to_int(encoded.comm_d_new), to_int(encoded.comm_r_old))
    high = randomness.high_bits(shape, np.arange(shape.nodes))
    for node in range(shape.nodes):
        rho = randomness.rho(phi, int(high[node]))
        expected = (to_int(key.replica[node]) + to_int(data[node]) * rho) % FR_MODULUS
        assert to_int(encoded.tree_r_new.levels[0][node]) == expected, node
