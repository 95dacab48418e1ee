"""The bellperson-mirroring gadgets: values, satisfied rows, and bellperson's constraint counts.

Counts are rust-fil-proofs' and neptune's own test figures (README §3 of shared/filecoin):
SHA-256 ``hash_leaf_bits_circuit`` of two 256-bit words 45,387; one SDR label 532,025;
Poseidon 311 / 377 / 505 / 598 at arity 2 / 4 / 8 / 11.
"""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

from snark.fields import FR_MODULUS, limbs_to_ints
from snark.filecoin.circuit.label import create_label
from snark.filecoin.circuit.por import pack_digest
from snark.filecoin.circuit.poseidon import poseidon_hash
from snark.gadgets import boolean as B
from snark.gadgets.assembly import assemble, fingerprint, unsatisfied_rows
from snark.gadgets.blocks import block
from snark.gadgets.evaluation import evaluate
from snark.gadgets.num import alloc_num
from snark.gadgets.program import Program, TemplateBook
from snark.gadgets.sha256 import sha256
from snark.poseidon.neptune import hash_optimized_static, neptune_constants


@block
def bits_block(cs, *, data):
    """Allocated bits from private data (bellperson's ``bytes_into_boolean_vec`` shape)."""
    bits = data["bits"]
    return [B.is_bit(B.alloc_bit(cs, bits[..., i], ("data", "bits", i, None)))
            for i in range(bits.shape[-1])]


@block
def value_block(cs, *, data):
    return alloc_num(cs, data["value"], ("data", "value", 0, None))


@block
def pack_block(cs, digest):
    return pack_digest(cs, digest)


def rows(program: Program) -> int:
    """Constraints as bellperson's test constraint systems count them (no input rows)."""
    fp = fingerprint(program)
    return fp.constraints - fp.input_constraints


def assert_satisfied(program: Program):
    """The tape's witness satisfies every row and equals the gadgets' own evaluation."""
    witness = evaluate(program)
    assert unsatisfied_rows(assemble(program), witness.assignment()).size == 0
    reference = evaluate(program, reference=True)
    assert np.array_equal(witness.aux, reference.aux)
    assert np.array_equal(witness.inputs, reference.inputs)
    return witness


def aux_int(witness, key: int) -> int:
    return limbs_to_ints(witness.aux[key:key + 1])[0]


def message_bits(program: Program, message: bytes):
    bits = np.unpackbits(np.frombuffer(message, np.uint8)).astype(bool)  # big-endian per byte
    return bits_block(program, data={"bits": bits})


@pytest.mark.parametrize("length", [0, 1, 55, 56, 64, 119])
def test_sha256_matches_hashlib_and_its_rows_hold(length, rng):
    message = rng.randbytes(length)
    program = Program(TemplateBook(), keep_data=True)
    digest = sha256(program, message_bits(program, message) if length else [])
    witness = assert_satisfied(program)
    got = bytes(np.packbits([bool(witness.aux[b.key, 0]) if b.kind == B.IS else b.const
                             for b in digest]))
    assert got == hashlib.sha256(message).digest()


def test_a_wrong_bit_breaks_a_row(rng):
    program = Program(TemplateBook(), keep_data=True)
    sha256(program, message_bits(program, rng.randbytes(32)))
    witness = evaluate(program)
    assignment = witness.assignment()
    flipped = program.num_inputs + rng.randrange(program.num_aux)
    assignment[flipped, 0] ^= 1
    assert unsatisfied_rows(assemble(program), assignment).size > 0


@pytest.mark.parametrize("kinds", list(itertools.product(("0", "1", "is", "not"), repeat=3)))
def test_boolean_gadgets_compute_and_constrain_every_kind_combination(kinds):
    """xor, and, ch and maj over constants, bits and negated bits: the truth table holds
    and every row they make is satisfied (bellperson folds constants the same way)."""
    values = list(itertools.product((False, True), repeat=3))
    program = Program(TemplateBook(), keep_data=True)
    per_kind = []
    for position, kind in enumerate(kinds):
        if kind in ("0", "1"):
            per_kind.append([B.constant(kind == "1")] * len(values))
            continue
        bits = bits_block(program, data={"bits": np.array([v[position] for v in values])})
        per_kind.append([b if kind == "is" else b.negated() for b in bits])
    results = [ops_block(program, a, b, c) for a, b, c in zip(*per_kind)]
    witness = assert_satisfied(program)

    def value(bit):
        if bit.kind == B.CONSTANT:
            return bit.const
        got = bool(witness.aux[bit.key, 0])
        return got if bit.kind == B.IS else not got

    for v, (xor, and_, ch, maj) in zip(values, results):
        a, b, c = ({"0": False, "1": True, "is": v[i], "not": not v[i]}[kinds[i]]
                   for i in range(3))
        assert value(xor) == (a != b)
        assert value(and_) == (a and b)
        assert value(ch) == ((a and b) != ((not a) and c))
        assert value(maj) == ((a + b + c) >= 2)


@block
def ops_block(cs, a, b, c):
    return [B.xor(cs, a, b), B.and_(cs, a, b), B.sha256_ch(cs, a, b, c),
            B.sha256_maj(cs, a, b, c)]


def test_hash_of_two_words_has_bellpersons_45387_rows():
    program = Program(TemplateBook())
    left, right = (bits_block(program, data={"bits": np.zeros(256, bool)}) for _ in range(2))
    flip = [bit for word in (left, right) for i in range(0, 256, 8)
            for bit in reversed(word[i:i + 8])]
    pack_block(program, sha256(program, flip))
    assert rows(program) == 45_387


def test_one_label_has_bellpersons_532025_rows():
    """create_label.rs's test: 37 parents and the replica id as 256 allocated bits each,
    layer 3 and node 22 as constants."""
    program = Program(TemplateBook())
    parents = [bits_block(program, data={"bits": np.zeros(256, bool)}) for _ in range(37)]
    replica = bits_block(program, data={"bits": np.zeros(256, bool)})
    node = [B.constant(bool(22 >> i & 1)) for i in range(64)]
    create_label(program, replica, parents, 3, node)
    assert rows(program) == 532_025


@pytest.mark.parametrize("arity, expected", [(2, 311), (4, 377), (8, 505), (11, 598)])
def test_poseidon_circuit_rows_and_value(arity, expected, rng):
    values = [rng.randrange(FR_MODULUS) for _ in range(arity)]
    program = Program(TemplateBook(), keep_data=True)
    preimage = [value_block(program, data={"value": np.array(v, dtype=object)})
                for v in values]
    out = poseidon_hash(program, preimage, constants=neptune_constants(arity))
    assert rows(program) == expected
    witness = assert_satisfied(program)
    assert aux_int(witness, out.key) == hash_optimized_static(values, neptune_constants(arity))
