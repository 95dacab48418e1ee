"""Groth16 on the CPU backend: proofs of random circuits verify; anything altered does not."""

from __future__ import annotations

import numpy as np
import pytest

from snark import groth16
from snark.fields import FR_MODULUS as R
from snark.fields import limbs_to_ints, limbs_to_object
from snark.cpu_backend import CpuBackend
from snark.domain import Domain
from snark.keys import KeyFileError, ProvingKey
from snark.qap import ODD
from snark.params import load_or_setup
from snark.proof import PROOF_BYTES, Proof, ProofFormatError, split_proofs
from tests.circuits import random_circuit


@pytest.fixture(scope="module")
def circuit(module_rng):
    return random_circuit(num_inputs=3, num_constraints=200, rng=module_rng)


@pytest.fixture(scope="module")
def key(circuit):
    return groth16.setup(circuit.compile())


def test_random_circuit_is_satisfied(circuit):
    assert circuit.compile().is_satisfied(circuit.witness())


def test_tampered_witness_is_not_satisfied(circuit, rng):
    witness = circuit.witness().copy()
    witness[rng.randrange(1, len(witness)), 0] ^= 1
    assert not circuit.compile().is_satisfied(witness)


def test_proof_verifies(circuit, key):
    proof = groth16.prove(key, circuit.witness())
    assert groth16.verify(key.vk, circuit.public_inputs(), proof)


def test_proof_is_randomised(circuit, key):
    first = groth16.prove(key, circuit.witness()).to_bytes()
    assert first != groth16.prove(key, circuit.witness()).to_bytes()


def test_fixed_blinding_is_deterministic(circuit, key, rng):
    r, s = rng.randrange(R), rng.randrange(R)
    one = groth16.prove(key, circuit.witness(), r=r, s=s).to_bytes()
    assert one == groth16.prove(key, circuit.witness(), r=r, s=s).to_bytes()


def test_wrong_public_input_rejected(circuit, key, rng):
    proof = groth16.prove(key, circuit.witness())
    inputs = circuit.public_inputs()
    i = rng.randrange(len(inputs))
    inputs[i] = (inputs[i] + rng.randrange(1, R)) % R
    assert not groth16.verify(key.vk, inputs, proof)


def test_public_input_count_and_range_checked(circuit, key):
    proof = groth16.prove(key, circuit.witness())
    with pytest.raises(ValueError, match="expected 3"):
        groth16.verify(key.vk, circuit.public_inputs()[:2], proof)
    with pytest.raises(ValueError, match=r"inputs\[1\]"):
        groth16.verify(key.vk, [1, R, 2], proof)


def test_every_flipped_byte_is_rejected(circuit, key, rng):
    """A flipped byte either fails to decode (off curve / subgroup / flags) or to verify."""
    good = groth16.prove(key, circuit.witness()).to_bytes()
    for position in rng.sample(range(PROOF_BYTES), 24):
        bad = bytearray(good)
        bad[position] ^= 1 << rng.randrange(8)
        try:
            proof = Proof.from_bytes(bytes(bad))
        except ProofFormatError:
            continue
        assert not groth16.verify(key.vk, circuit.public_inputs(), proof), position


def test_proof_from_other_params_rejected(circuit, key):
    other = groth16.setup(circuit.compile())
    proof = groth16.prove(other, circuit.witness())
    assert groth16.verify(other.vk, circuit.public_inputs(), proof)
    assert not groth16.verify(key.vk, circuit.public_inputs(), proof)


def test_proof_for_other_statement_rejected(key, rng):
    other = random_circuit(num_inputs=3, num_constraints=200, rng=rng)
    other_key = groth16.setup(other.compile())
    proof = groth16.prove(other_key, other.witness())
    assert not groth16.verify(key.vk, other.public_inputs(), proof)


def test_proof_round_trip_and_truncation(circuit, key):
    proof = groth16.prove(key, circuit.witness())
    data = proof.to_bytes()
    assert len(data) == PROOF_BYTES and Proof.from_bytes(data) == proof
    assert split_proofs(data * 3, 3) == [proof] * 3
    with pytest.raises(ProofFormatError, match="expected 192 bytes, got 191"):
        Proof.from_bytes(data[:-1])
    with pytest.raises(ProofFormatError, match="expected 2 proofs"):
        split_proofs(data * 3, 2)


def test_key_save_load_round_trip(tmp_path, circuit, key, rng):
    loaded = ProvingKey.load(key.save(tmp_path))
    assert loaded.vk.to_json() == key.vk.to_json()
    r, s = rng.randrange(R), rng.randrange(R)
    assert (groth16.prove(loaded, circuit.witness(), r=r, s=s).to_bytes()
            == groth16.prove(key, circuit.witness(), r=r, s=s).to_bytes())


def test_vk_json_errors_name_the_field(key):
    from snark.keys import VerifyingKey

    data = key.vk.to_json()
    del data["gamma_g2"]
    with pytest.raises(KeyFileError, match="gamma_g2"):
        VerifyingKey.from_json(data)
    data = key.vk.to_json()
    data["alpha_g1"] = "00" * 48
    with pytest.raises(KeyFileError, match="alpha_g1: not canonical"):
        VerifyingKey.from_json(data)


def test_corrupt_key_file_detected(tmp_path, key):
    directory = key.save(tmp_path)
    target = directory / "a_g1.npy"
    raw = bytearray(target.read_bytes())
    raw[-1] ^= 0xFF
    target.write_bytes(bytes(raw))
    with pytest.raises(KeyFileError, match="a_g1.npy: sha256"):
        ProvingKey.load(directory)


def test_load_or_setup_caches_by_circuit_id(tmp_path, circuit):
    r1cs = circuit.compile()
    first = load_or_setup(r1cs, tmp_path)
    second = load_or_setup(r1cs, tmp_path)
    assert first.vk.to_json() == second.vk.to_json()
    assert [p.name for p in tmp_path.iterdir()] == [r1cs.circuit_id()]


def test_setup_hands_fixed_base_standard_form_limbs(circuit):
    """The seam GPU setup plugs into: every batch is (n, 4) uint64 limbs, values < r."""
    from snark.fields import is_canonical

    def checked(scalars):
        assert scalars.dtype == np.uint64 and scalars.ndim == 2 and scalars.shape[1] == 4
        assert is_canonical(scalars, R).all()

    class Checked(groth16.CpuFixedBase):
        def mul_g1(self, scalars):
            checked(scalars)
            return super().mul_g1(scalars)

        def mul_g2(self, scalars):
            checked(scalars)
            return super().mul_g2(scalars)

    key = groth16.setup(circuit.compile(), fixed_base=Checked())
    assert groth16.verify(key.vk, circuit.public_inputs(), groth16.prove(key, circuit.witness()))


# -- the odd H form (snarkjs keys): the same prover, H on the odd points of the 2n-domain ----
@pytest.fixture(scope="module")
def odd_key(circuit):
    return groth16.setup(circuit.compile(), qap=ODD)


def test_odd_form_proof_verifies_and_survives_storage(tmp_path, circuit, odd_key, rng):
    assert len(odd_key.h_g1) == odd_key.domain_size
    loaded = ProvingKey.load(odd_key.save(tmp_path))
    assert loaded.qap is ODD
    r, s = rng.randrange(R), rng.randrange(R)
    proof = groth16.prove(loaded, circuit.witness(), r=r, s=s)
    assert proof.to_bytes() == groth16.prove(odd_key, circuit.witness(), r=r, s=s).to_bytes()
    assert groth16.verify(odd_key.vk, circuit.public_inputs(), proof)
    inputs = circuit.public_inputs()
    inputs[0] = (inputs[0] + 1) % R
    assert not groth16.verify(odd_key.vk, inputs, proof)


def test_odd_quotient_is_ab_minus_c_at_the_odd_points(circuit, odd_key, rng):
    """h_i = (A·B − C)(ψ^(2i+1)) with C interpolating the real C·w (the form uses A∘B)."""
    cpu = CpuBackend()
    abc = cpu.evaluate_abc(odd_key, cpu.load_witness(odd_key, circuit.witness()))
    h = limbs_to_ints(cpu.quotient(odd_key, abc))
    domain = Domain(odd_key.domain_size)
    a, b, c = (domain.intt(limbs_to_object(v)) for v in abc)
    for i in rng.sample(range(domain.n), 5):
        x = pow(domain.odd_shift, 2 * i + 1, R)
        value = [sum(int(k) * pow(x, j, R) for j, k in enumerate(poly)) % R for poly in (a, b, c)]
        assert h[i] == (value[0] * value[1] - value[2]) % R


def test_odd_form_wrong_witness_fails(circuit, odd_key, rng):
    witness = circuit.witness().copy()
    witness[rng.randrange(odd_key.r1cs.num_inputs, len(witness)), 0] ^= 1
    proof = groth16.prove(odd_key, witness)
    assert not groth16.verify(odd_key.vk, circuit.public_inputs(), proof)


def test_setup_reports_every_basis_in_chunks_and_the_chunked_key_proves(circuit, monkeypatch):
    """A long setup reports progress per basis as its chunks land; the bases put together
    from chunks make a key whose proofs verify."""
    monkeypatch.setattr(groth16.CpuFixedBase, "chunk", 37)  # several uneven chunks per basis
    reports: list[tuple[str, int, int | None]] = []
    r1cs = circuit.compile()
    key = groth16.setup(r1cs, progress=lambda *report: reports.append(report))
    counted = {}
    for step, done, total in reports:
        if total is not None:
            assert done <= total and done >= counted.get(step, 0)
            counted[step] = done
    assert counted == {"ic": r1cs.num_inputs, "a_g1": len(key.a_g1), "b_g1": len(key.b_g1),
                       "b_g2": len(key.b_g2), "l_g1": len(key.l_g1), "h_g1": len(key.h_g1)}
    assert sum(1 for step, _, _ in reports if step == "h_g1") == -(-len(key.h_g1) // 37)
    assert groth16.verify(key.vk, circuit.public_inputs(), groth16.prove(key, circuit.witness()))


def test_the_cli_bars_count_points_per_basis_and_close_steps_without_a_count():
    from rich.progress import Progress

    from client.commands.output import setup_bars

    with Progress(disable=True) as progress:
        report = setup_bars(progress)
        report("compile the circuit", 0, None)
        report("a_g1", 40, 100)
        report("a_g1", 100, 100)
        tasks = {task.description: task for task in progress.tasks}
    assert tasks["compile the circuit"].finished
    assert (tasks["a_g1"].completed, tasks["a_g1"].total) == (100, 100)


def test_setup_names_the_key_by_the_callers_name_or_the_circuits_hash(circuit):
    r1cs = circuit.compile()
    assert groth16.setup(r1cs, circuit_id="a-named-key").vk.circuit_id == "a-named-key"
    assert groth16.setup(r1cs).vk.circuit_id == r1cs.circuit_id()
