"""Witness tapes on the device's code: the host build of tape.cuh (here, in CI) and the
GPU kernel (marked gpu) give the numpy tape's witness value for value."""

from __future__ import annotations

import numpy as np
import pytest

import gpu
from gpu import hostlib
from gpu.tape import plan_calls
from snark.fields import FR_MODULUS
from snark.filecoin import registered_proof, seal, seal_sparse
from snark.filecoin.circuit import StackedShape, witness_plan
from snark.filecoin.circuit.inputs import partition_data
from snark.filecoin.circuit.poseidon import poseidon_hash
from snark.gadgets.evaluation import WitnessPlan
from snark.gadgets.program import Program, TemplateBook
from snark.gadgets.sha256 import sha256
from snark.poseidon.neptune import neptune_constants
from tests.test_gadgets import message_bits, value_block

GPU_OK, GPU_WHY = gpu.available()


def host_witness(plan, values):
    reference = plan.run(values)
    aux, inputs = np.zeros_like(reference.aux), np.zeros_like(reference.inputs)
    inputs[0, 0] = 1
    for tape, refs, data, aux_base, input_base in plan_calls(plan, values, {}):
        hostlib.tape_run(tape, refs, data, aux_base, input_base, aux, inputs)
    return reference, aux, inputs


def gadget_program(rng) -> Program:
    program = Program(TemplateBook(), keep_data=True)
    sha256(program, message_bits(program, rng.randbytes(70)))
    for arity in (2, 8, 11):
        preimage = [value_block(program, data={"value": np.array(rng.randrange(FR_MODULUS),
                                                                 dtype=object)})
                    for _ in range(arity)]
        poseidon_hash(program, preimage, constants=neptune_constants(arity))
    return program


def test_host_tapes_match_the_numpy_tapes_on_sha256_and_poseidon(rng):
    reference, aux, inputs = host_witness(WitnessPlan(gadget_program(rng)), None)
    assert np.array_equal(aux, reference.aux) and np.array_equal(inputs, reference.inputs)


def test_host_tapes_match_the_numpy_tapes_on_a_2kib_partition(rng):
    c1 = seal(registered_proof("StackedDrg2KiBV1_1"), np.random.default_rng(rng.getrandbits(64)))
    plan = witness_plan(StackedShape.of(c1.proof))
    reference, aux, inputs = host_witness(plan, partition_data(c1, 0).flatten())
    assert np.array_equal(aux, reference.aux) and np.array_equal(inputs, reference.inputs)


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)
@pytest.mark.parametrize("size, sealing", [("2KiB", seal), ("512MiB", seal_sparse)])
def test_device_witness_matches_the_cpu(size, sealing, rng):
    from gpu.witness import DevicePlan

    backend = gpu.get_backend()
    c1 = sealing(registered_proof(f"StackedDrg{size}V1_1"),
                 np.random.default_rng(rng.getrandbits(64)))
    plan = witness_plan(StackedShape.of(c1.proof))
    values = partition_data(c1, 0).flatten()
    reference = plan.run(values)
    device = DevicePlan(plan, backend.device_id, backend.stream)
    got = device.run(device.upload(values)).get(stream=backend.stream)
    assert np.array_equal(got, reference.assignment())
