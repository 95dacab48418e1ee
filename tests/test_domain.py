"""The reference (object-array) NTTs against naive polynomial evaluation on fresh random
inputs; the native ones are checked against these in tests/test_native_ntt.py."""

from __future__ import annotations

import numpy as np
import pytest

from snark.domain import Domain, batch_inverse
from snark.fields import FR_MODULUS as R


def _random_vector(rng, n):
    return np.array([rng.randrange(R) for _ in range(n)], dtype=object)


def _evaluate(coeffs, x):
    acc = 0
    for c in reversed(list(coeffs)):
        acc = (acc * x + int(c)) % R
    return acc


@pytest.mark.parametrize("log_n", [1, 2, 3, 5, 7])
def test_ntt_matches_naive_evaluation(log_n, rng):
    domain = Domain(1 << log_n)
    coeffs = _random_vector(rng, domain.n)
    points = [pow(domain.omega, i, R) for i in range(domain.n)]
    assert list(domain.ntt(coeffs)) == [_evaluate(coeffs, x) for x in points]
    coset = [domain.shift * x % R for x in points]
    assert list(domain.coset_ntt(coeffs)) == [_evaluate(coeffs, x) for x in coset]


@pytest.mark.parametrize("log_n", [1, 4, 10, 12])
def test_inverses_round_trip(log_n, rng):
    domain = Domain(1 << log_n)
    values = _random_vector(rng, domain.n)
    assert list(domain.intt(domain.ntt(values))) == list(values)
    assert list(domain.coset_intt(domain.coset_ntt(values))) == list(values)


def test_omega_has_exact_order():
    domain = Domain(1 << 10)
    assert pow(domain.omega, domain.n, R) == 1 and pow(domain.omega, domain.n // 2, R) != 1


@pytest.mark.parametrize("n", [0, 3, 12, 1 << 33])
def test_bad_domain_sizes(n):
    with pytest.raises(ValueError, match="power of two"):
        Domain(n)


def test_batch_inverse(rng):
    values = _random_vector(rng, 50)
    values[values == 0] = 1
    assert all(int(v) * int(i) % R == 1 for v, i in zip(values, batch_inverse(values)))


def test_batch_inverse_in_another_field(rng):
    from snark.fields import FQ_MODULUS as Q

    values = [rng.randrange(1, Q) for _ in range(20)]
    assert all(v * i % Q == 1 for v, i in zip(values, batch_inverse(values, Q)))
    assert len(batch_inverse([], Q)) == 0
