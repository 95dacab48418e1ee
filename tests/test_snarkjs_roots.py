"""snarkjs's domain order in this project's: the root exponent and the two permutations."""

from __future__ import annotations

import numpy as np
import pytest

from snark.fields import FR_MODULUS as R
from snark.fields import FR_ROOT_OF_UNITY, FR_TWO_ADICITY
from snark.snarkjs.roots import (SNARKJS_ROOT_OF_UNITY, constraint_positions,
                                 odd_point_positions, snarkjs_root_exponent)


def test_snarkjs_root_is_the_odd_power_of_ours():
    m = snarkjs_root_exponent()
    assert m % 2 == 1 and pow(FR_ROOT_OF_UNITY, m, R) == SNARKJS_ROOT_OF_UNITY
    assert pow(SNARKJS_ROOT_OF_UNITY, 1 << (FR_TWO_ADICITY - 1), R) == R - 1  # order 2^32


@pytest.mark.parametrize("log_n", [1, 5, 12])
def test_positions_are_permutations_onto_the_same_points(log_n):
    n = 1 << log_n
    ours_n = pow(FR_ROOT_OF_UNITY, 1 << (FR_TWO_ADICITY - log_n), R)
    ours_2n = pow(FR_ROOT_OF_UNITY, 1 << (FR_TWO_ADICITY - log_n - 1), R)
    theirs_n = pow(SNARKJS_ROOT_OF_UNITY, 1 << (FR_TWO_ADICITY - log_n), R)
    theirs_2n = pow(SNARKJS_ROOT_OF_UNITY, 1 << (FR_TWO_ADICITY - log_n - 1), R)
    index = np.arange(n, dtype=np.int64)
    rows, odd = constraint_positions(index, n), odd_point_positions(index, n)
    assert sorted(rows) == list(range(n)) and sorted(odd) == list(range(n))
    for j in np.random.default_rng().choice(n, size=min(n, 8), replace=False):
        assert pow(theirs_n, int(j), R) == pow(ours_n, int(rows[j]), R)
        assert pow(theirs_2n, 2 * int(j) + 1, R) == pow(ours_2n, 2 * int(odd[j]) + 1, R)
