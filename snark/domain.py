"""Evaluation domains over Fr and the CPU NTTs, on 1-D object arrays of Python ints.

The CPU backend is the reference every other backend is checked against, so it favours
plainness: numpy object arrays let each radix-2 stage run as a handful of whole-vector
operations (no Python loop per element per stage) while the arithmetic stays exact.

Conventions shared with the GPU kernels:
- ``omega`` = FR_ROOT_OF_UNITY^(2^32 / n), natural-order input and output;
- ``ntt(a)[i] = Σ_j a_j ω^{ij}`` (evaluation), ``intt`` its inverse (1/n folded in);
- the coset is ``g·⟨ω⟩`` with ``g = FR_MULTIPLICATIVE_GENERATOR``: ``coset_ntt(a)[i] = A(g ω^i)``.
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
from snark.r1cs import SparseMatrix

R = FR_MODULUS
MAX_LOG_SIZE = FR_TWO_ADICITY


def powers(base: int, count: int) -> np.ndarray:
    """``[1, base, base², …]`` (``count`` terms) as an object array."""
    out = np.empty(count, dtype=object)
    acc = 1
    for i in range(count):
        out[i] = acc
        acc = acc * base % R
    return out


def batch_inverse(values, modulus: int = R) -> np.ndarray:
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
        self.omega = pow(FR_ROOT_OF_UNITY, 1 << (MAX_LOG_SIZE - self.log_n), R)
        self.omega_inv = pow(self.omega, -1, R)
        self.n_inv = pow(n, -1, R)
        self.shift = FR_MULTIPLICATIVE_GENERATOR
        self.shift_inv = pow(self.shift, -1, R)

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
    def _shift_inv_powers_scaled(self) -> np.ndarray:
        return powers(self.shift_inv, self.n) * self.n_inv % R

    def elements(self) -> np.ndarray:
        """``[ω^0, …, ω^{n−1}]``."""
        return powers(self.omega, self.n)

    def vanishing_on_coset_inverse(self) -> int:
        """1 / Z(g ω^i) = 1 / (g^n − 1): the same for every coset point."""
        return pow(pow(self.shift, self.n, R) - 1, -1, R)

    def _transform(self, values: np.ndarray, twiddles: np.ndarray) -> np.ndarray:
        """Iterative radix-2 DIT: bit-reverse, then log n whole-vector butterfly stages."""
        a = np.asarray(values, dtype=object)[_bit_reverse(self.n)]
        half = 1
        while half < self.n:
            blocks = a.reshape(-1, 2 * half)
            lo = blocks[:, :half]
            hi = blocks[:, half:] * twiddles[:: self.n // (2 * half)][:half] % R
            a = np.concatenate([(lo + hi) % R, (lo - hi) % R], axis=1).reshape(-1)
            half *= 2
        return a

    def ntt(self, coeffs: np.ndarray) -> np.ndarray:
        return self._transform(coeffs, self._twiddles)

    def intt(self, evals: np.ndarray) -> np.ndarray:
        return self._transform(evals, self._twiddles_inv) * self.n_inv % R

    def coset_ntt(self, coeffs: np.ndarray) -> np.ndarray:
        return self.ntt(np.asarray(coeffs, dtype=object) * self._shift_powers % R)

    def coset_intt(self, evals: np.ndarray) -> np.ndarray:
        return self._transform(evals, self._twiddles_inv) * self._shift_inv_powers_scaled % R


def sparse_matvec(matrix: SparseMatrix, vector: np.ndarray,
                  data: np.ndarray | None = None) -> np.ndarray:
    """``matrix · vector`` over Fr with object arrays; ``data`` may pass pre-converted values."""
    from snark.fields import limbs_to_object

    values = limbs_to_object(matrix.data) if data is None else data
    out = np.zeros(matrix.rows, dtype=object)
    if matrix.nnz == 0:
        return out
    products = values * np.asarray(vector, dtype=object)[matrix.indices]
    # A trailing zero keeps every start index valid, trailing empty rows included.
    sums = np.add.reduceat(np.append(products, 0), matrix.indptr[:-1])
    nonempty = np.diff(matrix.indptr) > 0
    out[nonempty] = sums[nonempty] % R
    return out


def sparse_transposed_matvec(matrix: SparseMatrix, vector: np.ndarray, columns: int,
                             data: np.ndarray | None = None) -> np.ndarray:
    """``matrixᵀ · vector`` (length ``columns``): column j gets Σ_i M[i, j]·vector[i]."""
    from snark.fields import limbs_to_object

    values = limbs_to_object(matrix.data) if data is None else data
    out = np.zeros(columns, dtype=object)
    if matrix.nnz == 0:
        return out
    products = values * np.asarray(vector, dtype=object)[matrix.row_ids()]
    order = np.argsort(matrix.indices, kind="stable")
    cols = matrix.indices[order]
    starts = np.flatnonzero(np.r_[True, cols[1:] != cols[:-1]])
    out[cols[starts]] = np.add.reduceat(products[order], starts) % R
    return out
