"""Limb conversions and canonical checks on fresh random values."""

from __future__ import annotations


import numpy as np
import pytest

from snark.fields import (
    FQ_MODULUS,
    FR_MODULUS,
    fq_to_limbs,
    fr_to_limbs,
    from_montgomery,
    is_canonical,
    ints_to_limbs,
    limbs_to_ints,
    montgomery_encode,
    montgomery_reduce,
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


@pytest.mark.parametrize("modulus,n_limbs", [(FQ_MODULUS, 6), (FR_MODULUS, 4)])
def test_vectorised_montgomery_reduce_matches_ints(modulus, n_limbs, rng):
    values = [rng.randrange(modulus) for _ in range(300)] + [0, 1, modulus - 1]
    got = montgomery_reduce(to_montgomery(values, modulus, n_limbs), modulus, chunk=64)
    assert limbs_to_ints(got) == values
    # Any input below 2^(64·L), canonical or not, reduces to v·R^-1 mod p (shape kept).
    raw = [rng.randrange(1 << (64 * n_limbs)) for _ in range(200)] + [(1 << (64 * n_limbs)) - 1]
    limbs = ints_to_limbs(raw, n_limbs)
    r_inv = pow(1 << (64 * n_limbs), -1, modulus)
    got = montgomery_reduce(limbs[:200].reshape(10, 20, n_limbs), modulus)
    assert got.shape == (10, 20, n_limbs) and got.dtype == np.uint64
    assert limbs_to_ints(got) == [v * r_inv % modulus for v in raw[:200]]
    assert limbs_to_ints(montgomery_reduce(limbs[200:], modulus)) == [raw[200] * r_inv % modulus]


@pytest.mark.parametrize("modulus,n_limbs", [(FQ_MODULUS, 6), (FR_MODULUS, 4)])
def test_vectorised_montgomery_encode_matches_ints(modulus, n_limbs, rng):
    values = [rng.randrange(modulus) for _ in range(300)] + [0, 1, modulus - 1]
    limbs = ints_to_limbs(values, n_limbs)
    got = montgomery_encode(limbs.reshape(3, 101, n_limbs), modulus, chunk=64)
    assert got.shape == (3, 101, n_limbs) and got.dtype == np.uint64
    assert limbs_to_ints(got) == limbs_to_ints(to_montgomery(values, modulus, n_limbs))
    assert limbs_to_ints(montgomery_reduce(got, modulus)) == values
