"""The R1CS builder: compiled matrices, witness order, circuit ids, checking mode."""

from __future__ import annotations

import random

import pytest

from snark.fields import fr_to_limbs, limbs_to_ints
from snark.fields import FR_MODULUS as R
from snark.r1cs import ONE, ConstraintSystem, UnsatisfiedConstraint
from tests.circuits import random_circuit


def test_witness_order_and_shape():
    cs = ConstraintSystem()
    x = cs.alloc_input(5)
    a = cs.alloc(7)
    y = cs.alloc_input(35)
    cs.enforce(x, a, y)
    assert limbs_to_ints(cs.witness()) == [1, 5, 35, 7]
    r1cs = cs.compile()
    assert (r1cs.num_inputs, r1cs.num_aux, r1cs.num_constraints) == (3, 1, 1 + 3)
    assert r1cs.domain_size == 4
    assert list(r1cs.a.indices[:1]) == [1] and list(r1cs.b.indices[:1]) == [3]


def test_check_mode_names_the_constraint():
    cs = ConstraintSystem(check=True)
    x = cs.alloc(3)
    cs.enforce(x, x, {ONE: 9}, "square")
    with pytest.raises(UnsatisfiedConstraint, match="constraint 1 \\(cube\\)"):
        cs.enforce(x, x, {ONE: 27}, "cube")


def test_circuit_id_depends_on_structure_only():
    first = random_circuit(2, 40, rng=random.Random(1))
    second = random_circuit(2, 40, rng=random.Random(1))
    assert first.compile().circuit_id() == second.compile().circuit_id()
    third = random_circuit(2, 40, rng=random.Random(2))
    assert first.compile().circuit_id() != third.compile().circuit_id()


def test_satisfaction_check_catches_any_change(rng):
    cs = random_circuit(2, 50, rng=rng)
    r1cs = cs.compile()
    witness = cs.witness()
    assert r1cs.is_satisfied(witness)
    bad = witness.copy()
    slot = rng.randrange(1, len(bad))
    was = limbs_to_ints(bad[slot])[0]
    bad[slot] = fr_to_limbs([(was + rng.randrange(1, R)) % R])[0]  # another canonical value
    assert not r1cs.is_satisfied(bad)


def test_linear_combination_coefficients_reduce():
    cs = ConstraintSystem(check=True)
    x = cs.alloc(2)
    cs.enforce({x: R + 1}, {ONE: 1}, {x: 1})
    assert limbs_to_ints(cs.compile().a.data)[0] == 1
