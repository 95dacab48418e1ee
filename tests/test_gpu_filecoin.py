"""Filecoin on the GPU: coded R1CS, density-form keys and whole partition proofs,
byte-identical to the CPU backend for the same r, s. Needs a GPU."""

from __future__ import annotations

import numpy as np
import pytest

import gpu
from snark import groth16
from snark.cpu_backend import CpuBackend
from snark.filecoin import registered_proof, seal
from snark.filecoin.circuit import StackedShape, witness
from snark.filecoin.circuit.inputs import partition_data, public_inputs
from snark.filecoin.params import load_proving_key, load_verifying_key, make_development_key
from snark.filecoin.prove import prove_c1, verify_c1
from snark.gadgets.assembly import to_r1cs
from snark.gadgets.evaluation import evaluate
from snark.gadgets.program import Program, TemplateBook
from snark.gadgets.sha256 import sha256
from tests.test_bellperson import pack_digest_block, public
from tests.test_gadgets import message_bits

GPU_OK, GPU_WHY = gpu.available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)]


@pytest.fixture(scope="module")
def backend():
    return gpu.get_backend()


def test_a_density_key_proves_byte_identically_on_gpu_and_cpu(backend, rng):
    program = Program(TemplateBook(), keep_data=True)
    public(program, pack_digest_block(program, sha256(program, message_bits(program,
                                                                            rng.randbytes(40)))))
    r1cs, assignment = to_r1cs(program), evaluate(program)
    key = groth16.setup(r1cs, density=True)
    r, s = rng.randrange(1, 1 << 250), rng.randrange(1, 1 << 250)
    on_gpu = groth16.prove(key, assignment.assignment(), backend, r, s)
    on_cpu = groth16.prove(key, assignment.assignment(), CpuBackend(), r, s)
    assert on_gpu.to_bytes() == on_cpu.to_bytes()
    assert groth16.verify(key.vk, assignment.public_inputs(), on_gpu)


def test_a_filecoin_partition_proves_on_the_gpu_under_a_development_key(backend, rng,
                                                                         tmp_path):
    """A sealed 2 KiB sector's C1, a development key made with the GPU's fixed-base kernel
    and written in bellperson's formats, the partition proved on the GPU, verified from the
    .vk, and the same proof as the CPU's for the same r, s. (8 MiB and 512 MiB partitions
    are proved and verified through the pipeline by ``bench/scale.py --type filecoin``.)"""
    from gpu.fixed_base import GpuFixedBase

    proof = registered_proof("StackedDrg2KiBV1_1")
    c1 = seal(proof, np.random.default_rng(rng.getrandbits(64)))
    params_path, vk_path = make_development_key(proof, tmp_path, fixed_base=GpuFixedBase())
    key = load_proving_key(proof, params_path)
    vk = load_verifying_key(vk_path)
    assert verify_c1(c1, vk, prove_c1(c1, key, backend))
    assignment = witness(StackedShape.of(proof), partition_data(c1, 0)).assignment()
    r, s = rng.randrange(1, 1 << 250), rng.randrange(1, 1 << 250)
    on_gpu = groth16.prove(key, assignment, backend, r, s)
    on_cpu = groth16.prove(key, assignment, CpuBackend(), r, s)
    assert on_gpu.to_bytes() == on_cpu.to_bytes()
    assert groth16.verify(vk, public_inputs(c1, 0), on_gpu)
