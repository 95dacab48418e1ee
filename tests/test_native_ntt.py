"""snark.native's NTTs and quotient against the reference in snark.domain, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

from snark import native
from snark.domain import Domain
from snark.fields import FR_MODULUS as R
from snark.fields import fr_to_limbs, limbs_to_ints, limbs_to_object, random_fr

TRANSFORMS = ("ntt", "intt", "coset_ntt", "coset_intt", "odd_ntt")


def _reference(name: str, values: np.ndarray) -> list[int]:
    return list(getattr(Domain(values.shape[0]), name)(limbs_to_object(values)))


# 2^12 is one block of the transform; 2^13 and 2^14 add whole-array stages
@pytest.mark.parametrize("log_n", [1, 2, 3, 5, 8, 12, 13, 14])
@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_match_the_reference(name, log_n, np_rng):
    values = random_fr(1 << log_n, np_rng)
    assert limbs_to_ints(getattr(native, name)(values)) == _reference(name, values)


def test_edge_values():
    n = 1 << 6
    for values in ([0] * n, [1] * n, [R - 1] * n, [1] + [0] * (n - 1), list(range(n))):
        limbs = fr_to_limbs(values)
        for name in TRANSFORMS:
            assert limbs_to_ints(getattr(native, name)(limbs)) == _reference(name, limbs), name


@pytest.mark.slow
def test_round_trips_at_2_20_and_the_thread_count_does_not_matter(np_rng):
    values = random_fr(1 << 20, np_rng)
    forward = native.ntt(values)
    assert np.array_equal(native.intt(forward), values)
    assert np.array_equal(native.coset_intt(native.coset_ntt(values)), values)
    before = native.threads()
    try:
        for threads in (1, 3):
            native.set_threads(threads)
            assert np.array_equal(native.ntt(values), forward), threads
    finally:
        native.set_threads(before)
    spot = np_rng.integers(0, 1 << 20, 3)
    omega = Domain(1 << 20).omega
    coeffs = limbs_to_ints(values)
    for i in spot:
        x = pow(omega, int(i), R)
        acc = 0
        for c in reversed(coeffs):
            acc = (acc * x + c) % R
        assert limbs_to_ints(forward[i:i + 1]) == [acc]


def _reference_quotient(a, b, c, odd: bool) -> list[int]:
    """The quotient as the object-array backend computed it."""
    domain = Domain(a.shape[0])
    a, b, c = (limbs_to_object(v) for v in (a, b, c))
    if odd:
        a, b, c = (domain.odd_ntt(domain.intt(v)) for v in (a, b, a * b % R))
        return list((a * b - c) % R)
    a, b, c = (domain.coset_ntt(domain.intt(v)) for v in (a, b, c))
    h = (a * b - c) % R * domain.vanishing_on_coset_inverse() % R
    return list(domain.coset_intt(h)[: domain.n - 1])


@pytest.mark.parametrize("odd", [False, True])
@pytest.mark.parametrize("log_n", [1, 4, 13])
def test_quotient_matches_the_reference(odd, log_n, np_rng):
    a, b, c = (random_fr(1 << log_n, np_rng) for _ in range(3))
    got = native.quotient(a, b, c, odd=odd)
    assert got.shape == ((1 << log_n) - (0 if odd else 1), 4)
    assert limbs_to_ints(got) == _reference_quotient(a, b, c, odd)


def test_a_satisfied_abc_has_a_polynomial_quotient(np_rng):
    """C = A∘B on the domain: A·B − C vanishes there, so (A·B − C)/Z is a polynomial and
    H times Z at a random point is A·B − C there (the coset form's claim)."""
    n = 1 << 6
    a, b = random_fr(n, np_rng), random_fr(n, np_rng)
    c = native.fr_mul(a, b)
    h = limbs_to_ints(native.quotient(a, b, c))
    domain = Domain(n)
    x = int(np_rng.integers(2, 1 << 62))

    def at(evals):
        coeffs = domain.intt(limbs_to_object(evals))
        return sum(int(k) * pow(x, j, R) for j, k in enumerate(coeffs)) % R

    h_x = sum(k * pow(x, j, R) for j, k in enumerate(h)) % R
    assert h_x * (pow(x, n, R) - 1) % R == (at(a) * at(b) - at(c)) % R


def test_bad_sizes_and_values():
    with pytest.raises(ValueError, match="not a power of two"):
        native.ntt(fr_to_limbs([1, 2, 3]))
    with pytest.raises(ValueError, match="not a power of two"):
        native.ntt(fr_to_limbs([1]))
    with pytest.raises(ValueError, match=r"values\[1\] is not a canonical Fr"):
        native.coset_ntt(fr_to_limbs([1, R]))
    four = fr_to_limbs([1, 2, 3, 4])
    with pytest.raises(ValueError, match="b: 2 rows, a has 4"):
        native.quotient(four, four[:2], four)
