"""porep-2KiB Groth16 proofs: fresh sectors verify; anything altered is rejected."""

from __future__ import annotations

import numpy as np
import pytest

from snark import groth16
from snark.fields import FR_MODULUS
from snark.keys import KeyFileError
from snark.porep.circuit import circuit_r1cs, public_inputs
from snark.porep.prove import (load_or_setup_key, prove_c1, prove_partition, verify_c1,
                               verify_partition)
from snark.porep.seal import seal
from snark.proof import PROOF_BYTES, Proof, ProofFormatError

SHAPE = dict(sector_size=2048, partitions=2, challenges=2)


@pytest.fixture(scope="module")
def params_dir(tmp_path_factory):
    """Shared with the CLI tests through the session's base temp dir: one setup per shape."""
    return tmp_path_factory.getbasetemp() / "porep-params"


@pytest.fixture(scope="module")
def key(params_dir):
    return load_or_setup_key(seal(**SHAPE), params_dir)


@pytest.fixture(scope="module")
def proved(key):
    c1 = seal(**SHAPE)
    return c1, prove_c1(c1, key)


@pytest.fixture(scope="module")
def other_key():
    """A second development ceremony for the same circuit."""
    return groth16.setup(circuit_r1cs(SHAPE["sector_size"], SHAPE["challenges"]))


def test_a_fresh_sector_proves_and_verifies(key, proved):
    c1, proof = proved
    assert len(proof) == c1.partitions * PROOF_BYTES
    assert verify_c1(c1, key.vk, proof)
    for p in range(c1.partitions):
        assert verify_partition(c1, p, key.vk, proof[p * PROOF_BYTES:(p + 1) * PROOF_BYTES])
    assert not verify_partition(c1, 0, key.vk, proof[PROOF_BYTES:])  # partition order matters


def test_every_flipped_byte_is_rejected(key, proved, np_rng):
    c1, proof = proved
    positions = np_rng.choice(len(proof), size=16, replace=False)
    for pos in positions:
        bad = bytearray(proof)
        bad[pos] ^= int(np_rng.integers(1, 256))
        try:
            accepted = verify_c1(c1, key.vk, bytes(bad))
        except ProofFormatError as exc:
            assert f"proof[{pos // PROOF_BYTES}]" in str(exc)
            continue
        assert not accepted, f"flipping byte {pos} was accepted"


def test_wrong_public_inputs_are_rejected(key, proved, np_rng):
    c1, proof = proved
    decoded = Proof.from_bytes(proof[:PROOF_BYTES])
    inputs = public_inputs(c1, 0)
    assert groth16.verify(key.vk, inputs, decoded)
    for i in range(len(inputs)):
        wrong = list(inputs)
        wrong[i] = (wrong[i] + int(np_rng.integers(1, 1 << 32))) % FR_MODULUS
        assert not groth16.verify(key.vk, wrong, decoded), f"public input {i} altered"
    moved = c1.model_copy(update={"comm_r": (c1.comm_r + 1) % FR_MODULUS})
    assert not verify_c1(moved, key.vk, proof)


def test_a_proof_for_another_sector_is_rejected(key, proved):
    c1, proof = proved
    assert not verify_c1(seal(**SHAPE), key.vk, proof)


def test_a_proof_with_other_params_is_rejected(key, other_key, proved):
    c1, _ = proved
    foreign = prove_partition(c1, 0, other_key)
    assert verify_partition(c1, 0, other_key.vk, foreign)
    assert not verify_partition(c1, 0, key.vk, foreign)


def test_params_for_another_circuit_are_refused(key, other_key, proved):
    c1, proof = proved
    small = seal(2048, 1, 1)
    with pytest.raises(KeyFileError, match="made for another circuit; porep-2KiB-k1 needs"):
        prove_partition(small, 0, key)
    with pytest.raises(KeyFileError, match="made for another circuit"):
        verify_c1(small, other_key.vk, proof[:PROOF_BYTES])


@pytest.mark.parametrize("length", [0, 191, 383, 385])
def test_truncated_or_padded_proofs_are_malformed(key, proved, length):
    c1, proof = proved
    with pytest.raises(ProofFormatError, match="expected 2 proofs = 384 bytes"):
        verify_c1(c1, key.vk, (proof * 2)[:length])


@pytest.mark.parametrize("sector_size,challenges", [(2048, 1), (2048, 5), (8192, 3)])
def test_repeated_circuit_equals_the_compiled_one(sector_size, challenges):
    from snark.porep.circuit import placeholder_c1, synthesize

    compiled = synthesize(placeholder_c1(sector_size, challenges), 0).compile()
    repeated = circuit_r1cs(sector_size, challenges)
    assert (repeated.num_inputs, repeated.num_aux) == (compiled.num_inputs, compiled.num_aux)
    for name in "abc":
        for part in ("indptr", "indices", "data"):
            assert np.array_equal(getattr(getattr(repeated, name), part),
                                  getattr(getattr(compiled, name), part)), (name, part)


def test_a_circuit_whose_challenges_interact_is_not_repeated(monkeypatch):
    import snark.porep.circuit as circuit

    honest = circuit.synthesize

    def linked(c1, partition, **kw):  # one extra row joining the first two challenges
        cs = honest(c1, partition, **kw)
        if c1.challenges > 1:
            cs.enforce(4, 5, {}, "index 0 times index 1")
        return cs

    monkeypatch.setattr(circuit, "synthesize", linked)
    circuit._one_challenge_r1cs.cache_clear()
    circuit.circuit_r1cs.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="not independent copies"):
            circuit.circuit_r1cs(4096, 3)
    finally:
        circuit._one_challenge_r1cs.cache_clear()
        circuit.circuit_r1cs.cache_clear()
