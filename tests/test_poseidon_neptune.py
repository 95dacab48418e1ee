"""Neptune's Poseidon: known answers, the optimised constants, the batch hash."""

from __future__ import annotations

import numpy as np
import pytest

from snark.fields import FR_MODULUS, fr_to_limbs, limbs_to_ints, random_fr
from snark.poseidon.linalg import identity, inverse, matmul
from snark.poseidon.native import permute
from snark.poseidon.neptune import (hash_optimized_static, mds_matrix, neptune_constants,
                                    neptune_params, poseidon_hash, poseidon_many, round_numbers)
from tests.filecoin_vectors import KNOWN_ANSWERS

ARITIES = (2, 4, 8, 11)


@pytest.mark.parametrize("case", KNOWN_ANSWERS["poseidon_neptune"]["cases"],
                         ids=lambda c: f"arity{c['arity']}")
def test_neptune_known_answers(case):
    expected = int(case["hash"], 16)
    constants = neptune_constants(case["arity"])
    assert poseidon_hash(case["inputs"]) == expected
    assert hash_optimized_static(case["inputs"], constants) == expected
    assert permute([constants.domain_tag, *case["inputs"]], neptune_params(case["arity"]))[1] \
        == expected


def test_filecoin_hashers_binary_tree():
    """filecoin-hashers' binary Poseidon tree over the leaves [1, 0, 0, 1]."""
    vector = KNOWN_ANSWERS["poseidon_filecoin_hashers"]
    left, right = poseidon_hash([1, 0]), poseidon_hash([0, 1])
    assert left == int(vector["H(1,0)"], 16)
    assert poseidon_hash([left, right]) == int(vector["root"], 16)


def test_round_numbers_match_neptunes_table():
    """neptune round_numbers.rs test cases (t, R_P), all with R_F = 8."""
    for t, rp in ((2, 55), (3, 55), (4, 56), (5, 56), (8, 57), (9, 57), (12, 57), (16, 59),
                  (25, 59), (37, 60)):
        assert round_numbers(t) == (8, rp)


@pytest.mark.parametrize("arity", ARITIES)
def test_optimised_schedule_equals_the_plain_permutation(arity, rng):
    constants = neptune_constants(arity)
    width = arity + 1
    assert len(constants.compressed_round_constants) == 8 * width + constants.partial_rounds
    assert len(constants.sparse_matrices) == constants.partial_rounds
    m = constants.mds_matrices
    assert m.m == mds_matrix(width) and m.m == tuple(zip(*m.m))  # symmetric
    assert matmul(m.m_prime, m.m_double_prime, FR_MODULUS) == m.m
    assert matmul(m.m, m.m_inv, FR_MODULUS) == identity(width)
    assert m.m_hat_inv == inverse(m.m_hat, FR_MODULUS)
    for _ in range(3):
        preimage = [rng.randrange(FR_MODULUS) for _ in range(arity)]
        plain = permute([constants.domain_tag, *preimage], neptune_params(arity))[1]
        assert hash_optimized_static(preimage, constants) == plain == poseidon_hash(preimage)


def test_a_wrong_constant_changes_the_optimised_hash(rng):
    """The compressed constants and sparse matrices are all used: perturbing one changes
    the result (the equality above is not vacuous)."""
    from dataclasses import replace
    constants = neptune_constants(2)
    preimage = [rng.randrange(FR_MODULUS) for _ in range(2)]
    good = hash_optimized_static(preimage, constants)
    keys = list(constants.compressed_round_constants)
    keys[rng.randrange(len(keys))] += 1
    assert hash_optimized_static(preimage, replace(
        constants, compressed_round_constants=tuple(keys))) != good
    sparse = list(constants.sparse_matrices)
    k = rng.randrange(len(sparse))
    sparse[k] = replace(sparse[k], v_rest=(sparse[k].v_rest[0] + 1, *sparse[k].v_rest[1:]))
    assert hash_optimized_static(preimage, replace(
        constants, sparse_matrices=tuple(sparse))) != good


@pytest.mark.parametrize("arity", (2, 8))
def test_poseidon_many_equals_the_scalar_hash(arity, np_rng):
    inputs = random_fr(5 * arity, np_rng).reshape(5, arity, 4)
    inputs[0] = 0
    got = limbs_to_ints(poseidon_many(inputs, arity))
    assert got == [poseidon_hash(limbs_to_ints(row)) for row in inputs]


def test_poseidon_many_rejects_bad_input(np_rng):
    inputs = random_fr(4, np_rng).reshape(2, 2, 4)
    with pytest.raises(ValueError, match=r"shape \(n, 8, 4\)"):
        poseidon_many(inputs, 8)
    inputs[1, 1] = fr_to_limbs([FR_MODULUS])[0]
    with pytest.raises(ValueError, match=r"inputs\[1\] holds a value"):
        poseidon_many(inputs, 2)
    with pytest.raises(ValueError, match=r"values\[0\] is not a reduced"):
        poseidon_hash([FR_MODULUS, 1])
    assert poseidon_many(np.zeros((0, 2, 4), np.uint64), 2).shape == (0, 4)


@pytest.mark.parametrize("arity", (2, 8))
def test_sparse_factors_are_neptunes_own(arity):
    """neptune mds.rs factor_to_sparse_matrices, step by step: M'' of the current matrix is a
    partial round's sparse matrix and M · M' the next current matrix, in reverse; the last
    current matrix is pre_sparse_matrix. The circuit's coefficients are these very values."""
    from snark.poseidon.neptune import mds_matrices
    constants = neptune_constants(arity)
    m = constants.mds_matrices.m
    current, factors = m, []
    for _ in range(constants.partial_rounds):
        derived = mds_matrices(current)
        factors.append(derived.m_double_prime)
        current = matmul(m, derived.m_prime, FR_MODULUS)
    factors.reverse()
    assert constants.pre_sparse_matrix == current
    for sparse, factor in zip(constants.sparse_matrices, factors):
        assert sparse.w_hat == tuple(row[0] for row in factor)
        assert sparse.v_rest == factor[0][1:]
