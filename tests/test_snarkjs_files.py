"""A committed snarkjs key and witness, for the machines without node (the GPU machine):
proofs of it check against snarkjs's own exported verifying key, and the GPU backend's proof
is byte-identical to the CPU backend's for the same r, s.

``data/snarkjs/mul20.*`` was made with circom2 0.2.23 (``--prime bls12381``) and snarkjs
0.7.6: powers of tau 2^8 with one contribution, groth16 setup, one zkey contribution,
witness for a = 3, b = 5 (``mul20.circom``: 20 products, public a, output c).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import gpu
from snark import groth16
from snark.cpu_backend import CpuBackend
from snark.fields import FR_MODULUS as R
from snark.snarkjs.binfile import SnarkjsFormatError
from snark.snarkjs.json_formats import vk_from_json
from snark.snarkjs.keystore import import_zkey
from snark.snarkjs.witness import check_witness, public_inputs
from snark.snarkjs.wtns import read_wtns

DATA = Path(__file__).parent / "data" / "snarkjs"
GPU_OK, GPU_WHY = gpu.available()


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    return import_zkey(DATA / "mul20.zkey", tmp_path_factory.mktemp("params"))


@pytest.fixture(scope="module")
def witness(key):
    witness = read_wtns(DATA / "mul20.wtns")
    check_witness(key, witness)
    return witness


def test_witness_from_bytes_is_the_file(witness):
    raw = (DATA / "mul20.wtns").read_bytes()
    assert (read_wtns(raw, "job 7 witness") == witness).all()
    with pytest.raises(SnarkjsFormatError, match="job 7 witness: section 2 claims .*truncated"):
        read_wtns(raw[:-32], "job 7 witness")


def test_proof_checks_against_snarkjs_vk(key, witness):
    vk = vk_from_json(json.loads((DATA / "mul20.vk.json").read_text()))
    public = public_inputs(key, witness)
    assert public[1] == 3  # output c, then the public input a
    proof = groth16.prove(key, witness, CpuBackend())
    assert groth16.verify(vk, public, proof)
    assert not groth16.verify(vk, [public[0], 4], proof)


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)
def test_gpu_proof_identical_to_cpu(key, witness):
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    on_gpu = groth16.prove(key, witness, gpu.get_backend(), r=r, s=s)
    assert on_gpu.to_bytes() == groth16.prove(key, witness, CpuBackend(), r=r, s=s).to_bytes()
    assert groth16.verify(key.vk, public_inputs(key, witness), on_gpu)
