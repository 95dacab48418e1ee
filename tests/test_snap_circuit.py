"""EmptySectorUpdateCircuit against the figures rust-fil-proofs records for it
(``storage-proofs-update/tests/circuit.rs`` and ``src/gadgets.rs``; constraints without
bellperson's appended input rows, inputs with ONE), the derived production sizes of the
shared sheet, and witnesses from test updates satisfying every row with the public inputs
``EmptySectorUpdateCompound`` derives."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from snark.filecoin.snap import circuit, generate
from snark.filecoin.snap.inputs import partition_data, public_inputs
from snark.filecoin.snap.shape import SnapShape
from snark.gadgets.assembly import check_rows
from snark.gadgets.program import Program, TemplateBook
from snark.filecoin.circuit.stacked import alloc_column, alloc_value


def np_rng(rng) -> np.random.Generator:
    return np.random.default_rng(rng.getrandbits(64))


@pytest.mark.parametrize("nodes, constraints", [
    (32, 1_248_389), (64, 1_705_039), (128, 2_165_109), (256, 2_620_359),
    (512, 6_300_021), (1024, 6_760_091)])
def test_test_shapes_match_rust_fil_proofs(nodes, constraints):
    fp = circuit.circuit_fingerprint(SnapShape(nodes))
    assert fp.constraints - fp.input_constraints == constraints
    assert fp.inputs == 5 and fp.input_constraints == 5


@pytest.mark.parametrize("nodes, constraints, domain", [
    (1 << 30, 81_049_499, 27),   # 32 GiB: published
    (1 << 18, 10_007_503, 24),   # 8 MiB, 512 MiB, 64 GiB: the sheet's rebuild
    (1 << 24, 57_450_479, 26),
    (1 << 31, 85_006_101, 27)])
def test_production_partitions(nodes, constraints, domain):
    """Counted from the templates: a 32 GiB partition in about a second."""
    fp = circuit.circuit_fingerprint(SnapShape(nodes))
    assert fp.constraints - fp.input_constraints == constraints
    assert fp.inputs == 5
    assert fp.domain_log2 == domain


def _numbers(program, count):
    return alloc_column(program, data={"rows": np.zeros(count, dtype=object)})


def _bits(program, count):
    value = alloc_value(program, data={"value": np.asarray(0, dtype=object)})
    return circuit.k_and_h_select_bits(program, value, count=count)


@pytest.mark.parametrize("leaves, bits, rows", [(8, 0, 317_654), (128, 1, 5_808_515)])
def test_apex_por_gadget(leaves, bits, rows):
    program = Program(TemplateBook())
    apex, partition = _numbers(program, leaves), _bits(program, bits)
    path = _numbers(program, bits) if bits else []
    comm_d = alloc_value(program, data={"value": np.asarray(0, dtype=object)})
    before = program.num_rows
    circuit.apex_por(program, apex, partition, path, comm_d)
    assert program.num_rows - before == rows


def test_gen_challenge_bits_gadget_per_digest():
    shape = SnapShape(1 << 30)  # 10 digests of 9 challenges (86 in all)
    program = Program(TemplateBook())
    comm_r_new, partition = _numbers(program, 2)
    before = program.num_rows
    generated = circuit.gen_challenge_bits(program, shape, comm_r_new, partition)
    assert program.num_rows - before == 10 * 568
    assert len(generated) == 86 and {len(bits) for bits in generated} == {26}


@pytest.fixture(scope="module", params=[64, 32, 1024], ids=["2KiB", "1KiB-Sub", "32KiB-Top"])
def update(request, module_rng):
    return generate.generate_update(SnapShape(request.param), np_rng(module_rng))


def test_witness_satisfies_every_row_with_the_derived_inputs(update):
    shape = update.shape
    for k in range(shape.partitions):
        assignment = circuit.witness(shape, partition_data(update, k))
        assert assignment.public_inputs() == public_inputs(update, k)
        assert check_rows(circuit.structure(shape), assignment.assignment()).size == 0


def test_tapes_agree_with_the_gadgets_own_code(update):
    """The ``scale`` op (c_high · h_select bit) and the rest: tape run = reference run."""
    shape = update.shape
    values = partition_data(update, 0).flatten()
    plan = circuit.witness_plan(shape)
    tape, reference = plan.run(values), plan.run(values, reference=True)
    assert (tape.aux == reference.aux).all() and (tape.inputs == reference.inputs).all()


@pytest.fixture(scope="module")
def update_2kib(module_rng):
    return generate.generate_update(SnapShape(64), np_rng(module_rng))


@pytest.mark.parametrize("field", ["leaf_r_old", "leaf_d_new", "path_r_new", "path_d",
                                   "apex_leaves", "comm_c", "comm_d_new"])
def test_a_tampered_private_value_breaks_a_row(update_2kib, field, rng):
    shape = update_2kib.shape
    data = partition_data(update_2kib, 0)
    value = np.array(getattr(data, field), dtype=object)
    flat = value.reshape(-1)
    at = rng.randrange(flat.size)
    flat[at] = (flat[at] + 1) % (1 << 250)
    tampered = dataclasses.replace(data, **{field: value})
    assignment = circuit.witness(shape, tampered)
    assert check_rows(circuit.structure(shape), assignment.assignment()).size > 0


@pytest.mark.slow  # a whole 8 MiB sector encoded, a 10 M-row partition checked: a minute
def test_an_8mib_partition_selects_h_10(rng):
    """The first production shape whose ``hs`` are not all 1 (7…12, h = 10 selected by
    h_select = 8): the last partition's witness satisfies every row."""
    shape = SnapShape(1 << 18)
    update = generate.generate_update(shape, np_rng(rng))
    k = shape.partitions - 1
    assignment = circuit.witness(shape, partition_data(update, k))
    assert assignment.public_inputs() == public_inputs(update, k)
    assert public_inputs(update, k)[0] == 35  # k | 8 << 2
    assert check_rows(circuit.structure(shape), assignment.assignment()).size == 0
