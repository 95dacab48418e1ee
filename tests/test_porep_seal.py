"""Sealing, vanilla proofs and the circuit's constraints, on fresh random sectors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from snark.fields import FR_MODULUS, fr_to_limbs
from snark.merkle import MerkleTree
from snark.poseidon.hashing import hash2
from snark.porep.c1 import C1Error, fr_hex, parse_c1
from snark.porep.circuit import (challenges_for, circuit_r1cs, constraints_estimate,
                                 public_inputs, synthesize)
from snark.porep.derive import challenge_indices
from snark.porep.seal import data_to_fr, seal
from snark.porep.vanilla import verify_vanilla
from snark.r1cs import UnsatisfiedConstraint


@pytest.fixture()
def rng(np_rng):
    """Sectors are numpy bytes: this module's ``rng`` is the seeded numpy generator."""
    return np_rng


@pytest.fixture()
def c1(rng):
    return seal(2048, 2, 3, rng=rng)


def test_seal_reports_its_phases(rng):
    phases = []
    seal(2048, 1, 1, rng=rng, on_phase=phases.append)
    assert phases == ["reading data", "data tree (comm_d)", "encoding the replica",
                      "replica tree (comm_r)", "vanilla proofs"]


def test_seal_commits_to_the_data(rng):
    data = rng.bytes(4096)
    c1 = seal(4096, 1, 4, data=data, rng=rng)
    d = data_to_fr(data)
    assert c1.nodes == 128 and c1.depth == 7
    assert c1.comm_d == MerkleTree(d).root
    assert c1.replica_id == hash2(c1.ticket, c1.comm_d)
    for ch in c1.vanilla_proofs[0].challenges:
        assert ch.data_leaf == d[ch.index]
        assert ch.replica_leaf == (d[ch.index] + hash2(c1.replica_id, ch.index)) % FR_MODULUS
    assert [[ch.index for ch in c1.vanilla_proofs[0].challenges]] == \
        challenge_indices(c1.seed, c1.replica_id, 128, 1, 4)
    verify_vanilla(c1)
    assert parse_c1(c1.to_json()) == c1


def test_same_data_same_comm_d_new_replica(rng):
    data = rng.bytes(2048)
    one, two = seal(2048, 1, 1, data=data), seal(2048, 1, 1, data=data)
    assert one.comm_d == two.comm_d
    assert one.ticket != two.ticket and one.comm_r != two.comm_r


def test_bytes_map_below_2_254():
    nodes = data_to_fr(b"\xff" * 64 + bytes(range(32)))
    assert list(nodes[:2]) == [(1 << 254) - 1] * 2
    assert nodes[2] == int.from_bytes(bytes(range(31)) + bytes([31 & 0x3F]), "little")


@pytest.mark.parametrize("args, message", [
    ((2048, 1, 1, b"short"), "data: expected 2048 bytes"),
    ((3000, 1, 1, None), "sector_size: 3000 is not a power of two"),
    ((2048, 0, 1, None), "partitions: must be at least 1"),
    ((2048, 1, 0, None), "challenges: must be at least 1"),
])
def test_seal_rejects(args, message):
    with pytest.raises(C1Error, match=f"^{message}"):
        seal(*args)


def _bump(hex_value: str) -> str:
    return fr_hex((int(hex_value, 16) + 1) % FR_MODULUS)


def _ch(doc, p=1, j=2):
    return doc["vanilla_proofs"][p]["challenges"][j]


def _reseed(doc) -> None:
    """The next seed that moves challenge [0][0]: a plain bump leaves its index in place one
    time in 64 on this 64-node sector, and the first wrong index is then a later one."""
    seed, old = int(doc["seed"], 16), _ch(doc, 0, 0)["index"]
    shape = (int(doc["replica_id"], 16), doc["sector_size"] // 32, doc["partitions"],
             doc["challenges"])
    seed = (seed + 1) % FR_MODULUS
    while challenge_indices(seed, *shape)[0][0] == old:
        seed = (seed + 1) % FR_MODULUS
    doc["seed"] = fr_hex(seed)


TAMPER = {
    "index not from seed": (lambda d: _ch(d).update(index=(_ch(d)["index"] + 1) % 64),
                            "vanilla_proofs[1].challenges[2].index: "),
    "seed": (_reseed, "vanilla_proofs[0].challenges[0].index: "),
    "ticket": (lambda d: d.update(ticket=_bump(d["ticket"])), "replica_id: does not match"),
    "comm_d": (lambda d: d.update(comm_d=_bump(d["comm_d"])), "replica_id: does not match"),
    "data leaf": (lambda d: _ch(d).update(data_leaf=_bump(_ch(d)["data_leaf"])),
                  "vanilla_proofs[1].challenges[2]: data_leaf with d_path does not hash to comm_d"),
    "d sibling": (lambda d: _ch(d)["d_path"].__setitem__(3, _bump(_ch(d)["d_path"][3])),
                  "vanilla_proofs[1].challenges[2]: data_leaf with d_path"),
    "replica leaf": (lambda d: _ch(d).update(replica_leaf=_bump(_ch(d)["replica_leaf"])),
                     "vanilla_proofs[1].challenges[2]: replica_leaf with r_path"),
    "r sibling": (lambda d: _ch(d)["r_path"].__setitem__(0, _bump(_ch(d)["r_path"][0])),
                  "vanilla_proofs[1].challenges[2]: replica_leaf with r_path"),
    "comm_r": (lambda d: d.update(comm_r=_bump(d["comm_r"])),
               "comm_r: none of the 6 r_paths hashes to it (wrong comm_r)"),
}


@pytest.mark.parametrize("tamper, message", TAMPER.values(), ids=TAMPER.keys())
def test_vanilla_rejects_tampering(c1, tamper, message):
    doc = json.loads(c1.to_json())
    tamper(doc)
    with pytest.raises(C1Error) as err:
        verify_vanilla(parse_c1(doc))
    assert str(err.value).startswith(message), err.value


def test_vanilla_rejects_replica_not_encoding_its_data(rng):
    """A sector whose replica tree holds something else than d + key (a bad sealer)."""
    good = seal(2048, 1, 2, rng=rng)
    doc = json.loads(good.to_json())
    wrong = MerkleTree(np.array([int(rng.integers(1 << 60)) for _ in range(64)], dtype=object))
    doc["comm_r"] = fr_hex(wrong.root)
    for ch in doc["vanilla_proofs"][0]["challenges"]:
        ch["replica_leaf"] = fr_hex(wrong.leaf(ch["index"]))
        ch["r_path"] = [fr_hex(s) for s in wrong.path(ch["index"])]
    with pytest.raises(C1Error, match=r"challenges\[0\]: replica_leaf is not data_leaf \+ H"):
        verify_vanilla(parse_c1(doc))


def test_circuit_is_satisfied_and_exposes_the_statement(c1):
    reference = circuit_r1cs(c1.sector_size, c1.challenges)
    for partition in range(c1.partitions):
        cs = synthesize(c1, partition, check=True)
        assert cs.public_inputs() == public_inputs(c1, partition)
        assert cs.public_inputs()[:3] == [c1.comm_d, c1.comm_r, c1.replica_id]
        compiled = cs.compile()
        assert compiled.circuit_id() == reference.circuit_id()
        assert compiled.is_satisfied(cs.witness())
    assert reference.num_constraints == constraints_estimate(c1.sector_size, c1.challenges)
    assert reference.num_inputs == 1 + 3 + c1.challenges
    for outside in (-1, c1.partitions):
        with pytest.raises(C1Error, match=f"partition: {outside} is out of range"):
            synthesize(c1, outside)


@pytest.mark.parametrize("field", ["data_leaf", "replica_leaf", "d_path", "r_path", "index"])
def test_circuit_rejects_a_wrong_witness(c1, field):
    """Skip the vanilla check: the constraints alone must refuse the tampered value."""
    doc = json.loads(c1.to_json())
    ch = _ch(doc, 0, 1)
    if field == "index":
        ch["index"] = (ch["index"] + 1) % 64
    elif field.endswith("path"):
        ch[field][-1] = _bump(ch[field][-1])
    else:
        ch[field] = _bump(ch[field])
    with pytest.raises(UnsatisfiedConstraint):
        synthesize(parse_c1(doc), 0, check=True)


def test_wrong_witness_fails_the_compiled_r1cs(c1, rng):
    cs = synthesize(c1, 1)
    witness = cs.witness()
    row = int(rng.integers(cs.num_inputs, len(witness)))
    witness[row] = fr_to_limbs([(cs.aux[row - cs.num_inputs] + 1) % FR_MODULUS])[0]
    assert not circuit_r1cs(c1.sector_size, c1.challenges).is_satisfied(witness)


def test_circuit_size_grows_with_k_times_depth():
    per_2k = constraints_estimate(2048, 2) - constraints_estimate(2048, 1)
    per_8k = constraints_estimate(8192, 2) - constraints_estimate(8192, 1)
    assert 2 * 6 * 240 < per_2k < 2 * 6 * 260 + 300
    assert per_8k - per_2k >= 2 * 2 * 240
    k = challenges_for(2048, 1 << 16)
    assert constraints_estimate(2048, k) <= 1 << 16 < constraints_estimate(2048, k + 1)
