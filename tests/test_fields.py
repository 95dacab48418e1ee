"""Limb conversions and canonical checks on fresh random values."""

from __future__ import annotations


import numpy as np

from snark.fields import (
    FQ_MODULUS,
    FR_MODULUS,
    fq_to_limbs,
    fr_to_limbs,
    from_montgomery,
    is_canonical,
    limbs_to_ints,
    random_fr,
    to_montgomery,
)


def test_fr_round_trip(rng):
    values = [rng.randrange(FR_MODULUS) for _ in range(100)] + [0, FR_MODULUS - 1]
    limbs = fr_to_limbs(values)
    assert limbs.shape == (102, 4) and limbs.dtype == np.uint64
    assert limbs_to_ints(limbs) == values


def test_fq_round_trip(rng):
    values = [rng.randrange(FQ_MODULUS) for _ in range(100)]
    assert limbs_to_ints(fq_to_limbs(values)) == values


def test_canonical_mask():
    values = [FR_MODULUS - 1, FR_MODULUS, FR_MODULUS + 1, 0, 2**256 - 1]
    assert list(is_canonical(fr_to_limbs(values), FR_MODULUS)) == [True, False, False, True, False]


def test_random_fr_is_canonical_and_fresh():
    a, b = random_fr(500), random_fr(500)
    assert is_canonical(a, FR_MODULUS).all()
    assert not np.array_equal(a, b)


def test_montgomery_round_trip(rng):
    values = [rng.randrange(FQ_MODULUS) for _ in range(20)]
    mont = to_montgomery(values, FQ_MODULUS, 6)
    assert limbs_to_ints(mont) != values
    assert from_montgomery(mont, FQ_MODULUS) == values
