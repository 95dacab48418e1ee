"""Evaluation domains over Fr and the reference NTTs, on 1-D object arrays of Python ints.

Proving does not run these: the CPU backend's NTTs are native (``snark.native.ntt``) and
the GPU's are kernels. This plain version is the reference both are tested against
(tests/test_native_ntt.py, tests/test_gpu_ntt.py): numpy object arrays let each radix-2
stage run as a handful of whole-vector operations while the arithmetic stays exact.

Conventions shared with the GPU kernels:
- ``omega`` = FR_ROOT_OF_UNITY^(2^32 / n), natural-order input and output;
- ``ntt(a)[i] = Σ_j a_j ω^{ij}`` (evaluation), ``intt`` its inverse (1/n folded in);
- the coset is ``g·⟨ω⟩`` with ``g = FR_MULTIPLICATIVE_GENERATOR``: ``coset_ntt(a)[i] = A(g ω^i)``;
- the odd points of the 2n-domain are ``ψ·⟨ω⟩`` with ψ the primitive 2n-th root whose square
  is ω: ``odd_ntt(a)[i] = A(ψ^(2i+1))`` (the snarkjs QAP form, ``snark.qap.ODD``).
"""

from __future__ import annotations

import functools

import numpy as np

from snark.fields import (
    FR_MODULUS,
    FR_MULTIPLICATIVE_GENERATOR,
    FR_ROOT_OF_UNITY,
    FR_TWO_ADICITY,
)

MAX_LOG_SIZE = FR_TWO_ADICITY


def powers(base: int, count: int) -> np.ndarray:
    """``[1, base, base², …]`` (``count`` terms) as an object array."""
    out = np.empty(count, dtype=object)
    acc = 1
    for i in range(count):
        out[i] = acc
        acc = acc * base % FR_MODULUS
    return out


def batch_inverse(values, modulus: int = FR_MODULUS) -> np.ndarray:
    """Inverses of non-zero elements of the prime field of ``modulus`` (Fr unless given;
    ``gpu.msm`` inverts Fq values) with one exponentiation (Montgomery's trick)."""
    n = len(values)
    prefix = np.empty(n, dtype=object)
    acc = 1
    for i in range(n):
        prefix[i] = acc
        acc = acc * values[i] % modulus
    inv = pow(acc, -1, modulus)
    out = np.empty(n, dtype=object)
    for i in range(n - 1, -1, -1):
        out[i] = inv * prefix[i] % modulus
        inv = inv * values[i] % modulus
    return out


@functools.lru_cache(maxsize=8)
def _bit_reverse(n: int) -> np.ndarray:
    bits = n.bit_length() - 1
    idx = np.arange(n, dtype=np.int64)
    rev = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        rev |= ((idx >> b) & 1) << (bits - 1 - b)
    return rev


class Domain:
    """The multiplicative subgroup of size ``n`` (a power of two) and its coset."""

    def __init__(self, n: int) -> None:
        if n < 2 or n & (n - 1) or n.bit_length() - 1 > MAX_LOG_SIZE:
            raise ValueError(f"domain size {n} is not a power of two in [2, 2^{MAX_LOG_SIZE}]")
        self.n = n
        self.log_n = n.bit_length() - 1
        self.omega = pow(FR_ROOT_OF_UNITY, 1 << (MAX_LOG_SIZE - self.log_n), FR_MODULUS)
        self.omega_inv = pow(self.omega, -1, FR_MODULUS)
        self.n_inv = pow(n, -1, FR_MODULUS)
        self.shift = FR_MULTIPLICATIVE_GENERATOR
        self.shift_inv = pow(self.shift, -1, FR_MODULUS)

    @functools.cached_property
    def _twiddles(self) -> np.ndarray:
        return powers(self.omega, self.n // 2)

    @functools.cached_property
    def _twiddles_inv(self) -> np.ndarray:
        return powers(self.omega_inv, self.n // 2)

    @functools.cached_property
    def _shift_powers(self) -> np.ndarray:
        return powers(self.shift, self.n)

    @functools.cached_property
    def odd_shift(self) -> int:
        """ψ: the primitive 2n-th root of unity with ψ² = ω."""
        if self.log_n == MAX_LOG_SIZE:
            raise ValueError(f"domain 2^{MAX_LOG_SIZE} has no 2n-th root of unity in Fr")
        return pow(FR_ROOT_OF_UNITY, 1 << (MAX_LOG_SIZE - self.log_n - 1), FR_MODULUS)

    @functools.cached_property
    def _odd_shift_powers(self) -> np.ndarray:
        return powers(self.odd_shift, self.n)

    @functools.cached_property
    def _shift_inv_powers_scaled(self) -> np.ndarray:
        return powers(self.shift_inv, self.n) * self.n_inv % FR_MODULUS

    def elements(self) -> np.ndarray:
        """``[ω^0, …, ω^{n−1}]``."""
        return powers(self.omega, self.n)

    def vanishing_on_coset_inverse(self) -> int:
        """1 / Z(g ω^i) = 1 / (g^n − 1): the same for every coset point."""
        return pow(pow(self.shift, self.n, FR_MODULUS) - 1, -1, FR_MODULUS)

    def _transform(self, values: np.ndarray, twiddles: np.ndarray) -> np.ndarray:
        """Iterative radix-2 DIT: bit-reverse, then log n whole-vector butterfly stages.

        Sums and differences are not reduced: a value grows by at most one bit per stage
        (and may go negative), the product with the twiddle is reduced, and one final
        ``% R`` makes everything canonical. That drops two of a butterfly's three long
        divisions (~30% of an NTT's time at 2^14)."""
        a = np.asarray(values, dtype=object)[_bit_reverse(self.n)]
        out = np.empty(self.n, dtype=object)
        half = 1
        while half < self.n:
            blocks, sums = a.reshape(-1, 2 * half), out.reshape(-1, 2 * half)
            lo = blocks[:, :half]
            hi = blocks[:, half:] * twiddles[:: self.n // (2 * half)][:half] % FR_MODULUS
            np.add(lo, hi, out=sums[:, :half])
            np.subtract(lo, hi, out=sums[:, half:])
            a, out = out, a
            half *= 2
        return a % FR_MODULUS

    def ntt(self, coeffs: np.ndarray) -> np.ndarray:
        return self._transform(coeffs, self._twiddles)

    def intt(self, evals: np.ndarray) -> np.ndarray:
        return self._transform(evals, self._twiddles_inv) * self.n_inv % FR_MODULUS

    def coset_ntt(self, coeffs: np.ndarray) -> np.ndarray:
        return self.ntt(np.asarray(coeffs, dtype=object) * self._shift_powers % FR_MODULUS)

    def odd_ntt(self, coeffs: np.ndarray) -> np.ndarray:
        return self.ntt(np.asarray(coeffs, dtype=object) * self._odd_shift_powers % FR_MODULUS)

    def coset_intt(self, evals: np.ndarray) -> np.ndarray:
        scaled = self._transform(evals, self._twiddles_inv) * self._shift_inv_powers_scaled
        return scaled % FR_MODULUS
