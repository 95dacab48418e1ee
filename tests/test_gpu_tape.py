"""Witness tapes on the device's code: the host build of tape.cuh (here, in CI) and the
GPU kernel (marked gpu) give the numpy tape's witness value for value — for PoRep's,
SnapDeals' and PoSt's partitions; a tampered op of an encoded tape changes it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import gpu
from gpu import hostlib
from gpu.tape import KINDS, encode, plan_calls
from snark.fields import FR_MODULUS
from snark.filecoin import registered_proof, seal, seal_sparse
from snark.filecoin.circuit import StackedShape, witness_plan
from snark.filecoin.circuit.inputs import field_ints, partition_data
from snark.filecoin.circuit.poseidon import poseidon_hash
from snark.filecoin.post import generate as post_generate
from snark.filecoin.post.checks import circuit_sectors
from snark.filecoin.post.circuit import FALLBACK_POST, PostData, PostShape
from snark.filecoin.post.circuit import public_inputs as post_public_inputs
from snark.filecoin.post.registered_proofs import post_proof
from snark.filecoin.seal import random_fields
from snark.filecoin.snap import circuit as snap_circuit
from snark.filecoin.snap import generate as snap_generate
from snark.filecoin.snap import inputs as snap_inputs
from snark.filecoin.snap.shape import SnapShape
from snark.gadgets import boolean as B
from snark.gadgets.evaluation import WitnessPlan
from snark.gadgets.program import Program, TemplateBook
from snark.gadgets.sha256 import sha256
from snark.poseidon.neptune import neptune_constants
from tests.test_gadgets import message_bits, value_block

GPU_OK, GPU_WHY = gpu.available()


def host_run(plan, values, tapes=None) -> tuple[np.ndarray, np.ndarray]:
    """The host kernel's aux and inputs (ONE first), standard-form limbs, from ``tapes``
    (the encoded tapes by template) where given."""
    aux = np.zeros((plan.num_aux, 4), np.uint64)
    inputs = np.zeros((plan.num_inputs, 4), np.uint64)
    inputs[0, 0] = 1
    for tape, refs, data, aux_base, input_base in plan_calls(plan, values, tapes or {}):
        hostlib.tape_run(tape, refs, data, aux_base, input_base, aux, inputs)
    return aux, inputs


def host_witness(plan, values, tapes=None):
    """The CPU tape's witness, and the host kernel's aux and inputs."""
    return plan.run(values), *host_run(plan, values, tapes)


def same(reference, aux, inputs) -> bool:
    return np.array_equal(aux, reference.aux) and np.array_equal(inputs, reference.inputs)


def tampered_tapes(plan, kind: str, change) -> dict:
    """The plan's encoded tapes with ``change(tape, rows)`` applied to the rows of their
    ``kind`` ops (rows changed in place)."""
    tapes, changed = {}, 0
    for group in plan.groups:
        template = group.template
        if id(template) not in tapes:
            tape = tapes[id(template)] = encode(template.tape, template.data_shapes)
            rows = tape.ops[:, 0] == KINDS.index(kind)
            tape.ops[rows] = change(tape, tape.ops[rows])
            changed += int(rows.sum())
    assert changed, f"no {kind} op to tamper with"
    return tapes


def swap_select_branches(tape, rows):
    rows[:, 2] ^= 1  # the condition negated: the other operand picked
    return rows


def snap_partition(np_rng):
    """A 2 KiB SnapDeals update's partition 0: its plan, values and public inputs."""
    update = snap_generate.generate_update(SnapShape(64), np_rng)
    return (snap_circuit.witness_plan(update.shape),
            snap_inputs.partition_data(update, 0).flatten(),
            snap_inputs.public_inputs(update, 0))


def post_partition(np_rng, go_id: int, sectors: int, partition_index: int):
    """A 2 KiB PoSt partition of whole test sectors, as ``Partition.witness`` reads it."""
    proof = post_proof(go_id)
    randomness = random_fields(np_rng, 1)[0].tobytes()
    made = [post_generate.whole_sector(proof, np_rng, 10 + i) for i in range(sectors)]
    vanilla = post_generate.vanilla_proofs(proof, made, randomness, partition_index)
    public = post_public_inputs(proof, randomness, vanilla.sector_ids,
                                [c.tobytes() for c in vanilla.comm_r], partition_index)
    return (FALLBACK_POST.witness_plan(PostShape.of(proof)),
            PostData.of(circuit_sectors(vanilla)).flatten(), public)


def sparse_post_partition(np_rng, go_id: int):
    """Two sparse sectors of a large WindowPoSt (its tree shape, two circuit sectors)."""
    proof = post_proof(go_id)
    made = post_generate.sparse_proofs(proof, np_rng, [11, 12], b"\x07" * 32, 5)
    shape = PostShape(proof.nodes, proof.shape, 2, proof.challenge_count)
    return FALLBACK_POST.witness_plan(shape), PostData.of(made).flatten()


def random_snap_values(shape: SnapShape, np_rng) -> np.ndarray:
    """Random Fr values for every private value of a SnapDeals partition: no valid update,
    but the witness is the same function of them on both sides."""
    return field_ints(random_fields(np_rng, len(snap_circuit.SnapData.blank(shape).flatten())))


def gadget_program(rng) -> Program:
    program = Program(TemplateBook(), keep_data=True)
    sha256(program, message_bits(program, rng.randbytes(70)))
    for arity in (2, 8, 11):
        preimage = [value_block(program, data={"value": np.array(rng.randrange(FR_MODULUS),
                                                                 dtype=object)})
                    for _ in range(arity)]
        poseidon_hash(program, preimage, constants=neptune_constants(arity))
    return program


def test_the_op_kinds_are_the_kernels_in_order():
    enum = (hostlib.KERNELS / "tape.cuh").read_text().split("enum tape_kind")[1]
    names = re.findall(r"TAPE_(\w+)", enum.split("};")[0])
    assert names == [kind.upper() for kind in KINDS]


def test_host_tapes_match_the_numpy_tapes_on_sha256_and_poseidon(rng):
    reference, aux, inputs = host_witness(WitnessPlan(gadget_program(rng)), None)
    assert np.array_equal(aux, reference.aux) and np.array_equal(inputs, reference.inputs)


def test_host_tapes_match_the_numpy_tapes_on_a_2kib_partition(rng):
    c1 = seal(registered_proof("StackedDrg2KiBV1_1"), np.random.default_rng(rng.getrandbits(64)))
    plan = witness_plan(StackedShape.of(c1.proof))
    reference, aux, inputs = host_witness(plan, partition_data(c1, 0).flatten())
    assert np.array_equal(aux, reference.aux) and np.array_equal(inputs, reference.inputs)


def test_host_scale_ops_match_the_numpy_tape_for_every_kind_of_condition(rng):
    """SnapDeals' ``scale`` (c_high · h_select bit) with conditions that are bits, negated
    bits and constants, both ways; with its condition negated a scale gives other values."""
    program = Program(TemplateBook(), keep_data=True)
    c_bits = message_bits(program, rng.randbytes(2) + bytes([rng.randrange(1, 256)]))
    selects = message_bits(program, rng.randbytes(1))[:4]
    h_select = [selects[0], selects[1].negated(), selects[2], selects[3].negated(), B.TRUE,
                B.FALSE]
    snap_circuit.challenge_high_bits(program, c_bits, h_select, hs=(1, 3, 5, 8, 8, 2))
    plan = WitnessPlan(program)
    reference, aux, inputs = host_witness(plan, None)
    assert same(reference, aux, inputs)
    assert same(plan.run(None, reference=True), aux, inputs)

    def negate_the_condition(tape, rows):
        rows[:, 2] ^= 1
        return rows
    # the last byte is not 0, so the top 8 bits scaled under TRUE are not 0: one output moves
    assert not same(*host_witness(plan, None, tampered_tapes(plan, "scale",
                                                             negate_the_condition)))


def test_host_tapes_match_the_numpy_tapes_on_a_2kib_snap_partition(np_rng):
    plan, values, public = snap_partition(np_rng)
    reference, aux, inputs = host_witness(plan, values)
    assert reference.public_inputs() == public
    assert same(reference, aux, inputs)
    assert not same(*host_witness(plan, values, tampered_tapes(plan, "select",
                                                               swap_select_branches)))


@pytest.mark.slow  # an 8 MiB partition's plan (10 M variables) run on both sides: 10 s
def test_host_tapes_match_the_numpy_tapes_at_snaps_production_hs(np_rng):
    """8 MiB: the first shape whose high-bit widths are 7…12 (random values)."""
    shape = SnapShape(1 << 18)
    assert same(*host_witness(snap_circuit.witness_plan(shape),
                              random_snap_values(shape, np_rng)))


@pytest.mark.parametrize("go_id, sectors, partition_index", [(0, 1, 0), (10, 2, 1)],
                         ids=["winning", "window"])
def test_host_tapes_match_the_numpy_tapes_on_a_2kib_post_partition(np_rng, go_id, sectors,
                                                                   partition_index):
    plan, values, public = post_partition(np_rng, go_id, sectors, partition_index)
    reference, aux, inputs = host_witness(plan, values)
    assert reference.public_inputs() == public
    assert same(reference, aux, inputs)
    assert not same(*host_witness(plan, values, tampered_tapes(plan, "select",
                                                               swap_select_branches)))


def device_assignment(plan, values) -> np.ndarray:
    """The plan's assignment computed on the device (``gpu.witness.DevicePlan``)."""
    from gpu.witness import DevicePlan

    backend = gpu.get_backend()
    device = DevicePlan(plan, backend.device_id, backend.stream)
    return device.run(device.upload(values)).get(stream=backend.stream)


def on_gpu(test):
    return pytest.mark.gpu(pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)(test))


@on_gpu
@pytest.mark.parametrize("size, sealing", [("2KiB", seal), ("512MiB", seal_sparse)])
def test_device_witness_matches_the_cpu(size, sealing, rng):
    c1 = sealing(registered_proof(f"StackedDrg{size}V1_1"),
                 np.random.default_rng(rng.getrandbits(64)))
    plan = witness_plan(StackedShape.of(c1.proof))
    values = partition_data(c1, 0).flatten()
    assert np.array_equal(device_assignment(plan, values), plan.run(values).assignment())


@on_gpu
def test_device_snap_witness_matches_the_cpu(np_rng):
    plan, values, _ = snap_partition(np_rng)
    assert np.array_equal(device_assignment(plan, values), plan.run(values).assignment())


@on_gpu
@pytest.mark.slow  # an 8 MiB partition's plan (10 M variables) made and run on the CPU
def test_device_snap_witness_matches_the_cpu_at_production_hs(np_rng):
    """8 MiB: the first shape whose high-bit widths are 7…12 (random values)."""
    shape = SnapShape(1 << 18)
    plan, values = snap_circuit.witness_plan(shape), random_snap_values(shape, np_rng)
    assert np.array_equal(device_assignment(plan, values), plan.run(values).assignment())


@on_gpu
@pytest.mark.parametrize("go_id, sectors, partition_index", [(0, 1, 0), (10, 2, 1)],
                         ids=["winning", "window"])
def test_device_post_witness_matches_the_cpu(np_rng, go_id, sectors, partition_index):
    plan, values, _ = post_partition(np_rng, go_id, sectors, partition_index)
    assert np.array_equal(device_assignment(plan, values), plan.run(values).assignment())


@on_gpu
@pytest.mark.parametrize("go_id", [13, 14], ids=["32GiB", "64GiB"])
def test_device_post_witness_matches_the_cpu_on_large_trees(np_rng, go_id):
    plan, values = sparse_post_partition(np_rng, go_id)
    assert np.array_equal(device_assignment(plan, values), plan.run(values).assignment())
