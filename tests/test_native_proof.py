"""Proofs on the native CPU backend: byte-identical to the object-array backend's (a
recorded vector), keys of the new setup in the arrays every backend reads, and the
density form (bellperson's) end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from snark import groth16
from snark.cpu_backend import CpuBackend
from snark.curve import PointArray
from snark.fields import FR_MODULUS as R
from snark.keys import KeyFileError, ProvingKey
from snark.qap import FORMS, ODD
from tests.circuits import random_circuit

VECTOR = Path(__file__).parent / "data" / "cpu_proof_vector"


@pytest.mark.parametrize("qap", FORMS.values(), ids=str)
def test_proofs_equal_the_recorded_ones(qap):
    record = json.loads((VECTOR / "vector.json").read_text())
    key = ProvingKey.load(next((VECTOR / qap.name).iterdir()))
    assert key.a_density is None and key.r1cs.circuit_id() == key.circuit_id
    witness = np.load(VECTOR / "witness.npy")
    proof = groth16.prove(key, witness, CpuBackend(), r=int(record["r"], 16),
                          s=int(record["s"], 16))
    assert proof.to_bytes().hex() == record["proofs"][qap.name]
    assert groth16.verify(key.vk, [int(x, 16) for x in record["public_inputs"]], proof)


@pytest.fixture(scope="module")
def circuit(module_rng):
    return random_circuit(num_inputs=3, num_constraints=150, rng=module_rng)


def test_setup_writes_the_arrays_every_backend_reads(circuit):
    """Affine standard-form limbs as arkworks encodes the points, (n, 2, 6) / (n, 2, 2, 6),
    with a boolean infinity mask: what the GPU backend uploads."""
    key = groth16.setup(circuit.compile())
    for name in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1"):
        points: PointArray = getattr(key, name)
        again = PointArray.from_points(points.to_points())
        assert points.xy.dtype == np.uint64 and points.inf.dtype == bool, name
        assert np.array_equal(points.xy, again.xy) and np.array_equal(points.inf, again.inf)
    assert key.a_g1.xy.shape == (key.r1cs.num_variables, 2, 6)
    assert key.b_g2.xy.shape == (key.r1cs.num_variables, 2, 2, 6)


def _density_key_from(dense: ProvingKey) -> ProvingKey:
    """The same key in density form: the bases of variables outside the masks dropped."""
    a_mask, b_mask = dense.r1cs.density()
    return ProvingKey(dense.r1cs, dense.vk, dense.beta_g1, dense.delta_g1,
                      dense.a_g1[a_mask], dense.b_g1[b_mask], dense.b_g2[b_mask], dense.l_g1,
                      dense.h_g1, qap=dense.qap, a_density=a_mask, b_density=b_mask)


@pytest.mark.parametrize("qap", FORMS.values(), ids=str)
def test_density_form_proves_what_the_dense_key_does(circuit, qap, rng):
    dense = groth16.setup(circuit.compile(), qap=qap)
    sparse = _density_key_from(dense)
    sparse.check_counts()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    w = circuit.witness()
    assert (groth16.prove(sparse, w, r=r, s=s).to_bytes()
            == groth16.prove(dense, w, r=r, s=s).to_bytes())


@pytest.fixture(scope="module")
def density_circuit(module_rng):
    """Variables that B never uses, and one that A never uses: masks with holes."""
    from snark.r1cs import ONE, ConstraintSystem

    cs = ConstraintSystem(check=True)
    x = cs.alloc_input(module_rng.randrange(R))
    bits = [cs.alloc(module_rng.randrange(2)) for _ in range(30)]
    for bit in bits:
        cs.enforce({ONE: 1, bit: -1}, {bit: 1}, {})  # booleans: A and B
    acc = x
    for bit in bits:
        nxt = cs.alloc(cs.eval(acc) * (cs.eval(bit) + 2) % R)
        cs.enforce(acc, {bit: 1, ONE: 2}, nxt)  # acc in A only
        acc = nxt
    only_b = cs.alloc(module_rng.randrange(R))
    cs.enforce({ONE: 1}, {only_b: 1}, {only_b: 1})  # only_b in B (and C), never in A
    return cs


@pytest.mark.parametrize("qap", FORMS.values(), ids=str)
def test_setup_with_density_proves_and_verifies(density_circuit, qap, tmp_path, rng):
    r1cs = density_circuit.compile()
    key = groth16.setup(r1cs, density=True, qap=qap)
    a_mask, b_mask = r1cs.density()
    assert np.array_equal(key.a_density, a_mask) and np.array_equal(key.b_density, b_mask)
    assert a_mask[:r1cs.num_inputs].all()  # every input, through its input constraint
    assert not a_mask.all() and not b_mask.all()
    assert len(key.a_g1) == a_mask.sum() < r1cs.num_variables
    assert len(key.b_g1) == len(key.b_g2) == b_mask.sum()
    w = density_circuit.witness()
    proof = groth16.prove(key, w)
    assert groth16.verify(key.vk, density_circuit.public_inputs(), proof)
    loaded = ProvingKey.load(key.save(tmp_path))
    assert np.array_equal(loaded.a_density, a_mask) and np.array_equal(loaded.b_density, b_mask)
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    assert (groth16.prove(loaded, w, r=r, s=s).to_bytes()
            == groth16.prove(key, w, r=r, s=s).to_bytes())
    bad = w.copy()
    bad[-2, 0] ^= 1
    assert not groth16.verify(key.vk, density_circuit.public_inputs(), groth16.prove(key, bad))


def _rewrite(directory: Path, name: str, array: np.ndarray) -> None:
    """Replace one array of a key directory, keeping its manifest's sha256 right (so only
    the counts can object)."""
    from snark.keys import _sha256

    np.save(directory / f"{name}.npy", array)
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["files"][f"{name}.npy"].update(shape=list(array.shape), dtype=str(array.dtype),
                                            sha256=_sha256(directory / f"{name}.npy"))
    (directory / "manifest.json").write_text(json.dumps(manifest))


def test_a_mask_that_disagrees_with_its_points_is_refused(density_circuit, tmp_path):
    key = groth16.setup(density_circuit.compile(), density=True)
    directory = key.save(tmp_path / "keys")
    copy = tmp_path / "short" / directory.name
    shutil.copytree(directory, copy)
    mask = key.a_density.copy()
    mask[np.flatnonzero(~mask)[0]] = True
    _rewrite(directory, "a_density", mask)
    with pytest.raises(KeyFileError) as caught:
        ProvingKey.load(directory)
    message = str(caught.value)
    assert "\n" not in message
    assert message.endswith(f"a_g1 has {len(key.a_g1)} points but a_density sets "
                            f"{len(key.a_g1) + 1} variables")
    _rewrite(copy, "b_density", key.b_density[:-1])
    with pytest.raises(KeyFileError, match=r"b_density has shape \(\d+,\), expected"):
        ProvingKey.load(copy)


def test_a_density_basis_takes_the_whole_witness(density_circuit):
    key = groth16.setup(density_circuit.compile(), density=True, qap=ODD)
    cpu = CpuBackend()
    w = cpu.load_witness(key, density_circuit.witness())
    with pytest.raises(ValueError, match="a_g1: a density key's basis takes the whole witness"):
        cpu.msm_g1(key, "a_g1", w[1:])


def test_a_key_over_coded_matrices_survives_storage(circuit, tmp_path, rng):
    from snark.r1cs import R1CS, CodedMatrix

    compiled = circuit.compile()
    coded = R1CS(compiled.num_inputs, compiled.num_aux,
                 *(CodedMatrix.from_sparse(m) for m in (compiled.a, compiled.b, compiled.c)))
    key = groth16.setup(coded, density=True)
    loaded = ProvingKey.load(key.save(tmp_path))
    assert isinstance(loaded.r1cs.a, CodedMatrix) and loaded.circuit_id == compiled.circuit_id()
    assert (tmp_path / key.circuit_id / "r1cs_a_codes.npy").exists()
    w = circuit.witness()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    proof = groth16.prove(loaded, w, r=r, s=s)
    assert proof.to_bytes() == groth16.prove(key, w, r=r, s=s).to_bytes()
    assert groth16.verify(key.vk, circuit.public_inputs(), proof)
