"""Fr vectors (standard-form ``(n, 4)`` limbs, ``snark.fields``) in native code: sums,
differences and products, batch inversion, powers, and a domain's Lagrange basis at a point.
"""

from __future__ import annotations

import numpy as np

from snark.fields import FR_LIMBS, fr_to_limbs
from snark.native.library import call, ptr

_ADD, _SUB, _MUL = 0, 1, 2


def fr_limbs(values: np.ndarray, name: str) -> np.ndarray:
    """``values`` as contiguous ``(n, 4)`` uint64 (no copy when they already are), or a
    one-line ``ValueError`` naming ``name``."""
    if not isinstance(values, np.ndarray) or values.ndim != 2 or values.shape[1] != FR_LIMBS:
        shape = values.shape if isinstance(values, np.ndarray) else type(values).__name__
        raise ValueError(f"{name}: expected Fr limbs of shape (n, 4), got {shape}")
    if values.dtype != np.uint64:
        raise ValueError(f"{name}: expected uint64 limbs, got {values.dtype}")
    return np.ascontiguousarray(values)


def _scalar(value: np.ndarray | int, name: str) -> np.ndarray:
    return fr_to_limbs([int(value)]) if isinstance(value, (int, np.integer)) \
        else fr_limbs(value, name)


def _elementwise(op: int, a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    a = fr_limbs(a, "a")
    b = _scalar(b, "b")
    out = np.empty_like(a)
    call("pq_fr_op", op, ptr(a), ptr(b), b.shape[0], ptr(out), a.shape[0])
    return out


def fr_add(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """a + b; ``b`` has a's rows, or is one element (an int or one row) for every row."""
    return _elementwise(_ADD, a, b)


def fr_sub(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    return _elementwise(_SUB, a, b)


def fr_mul(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    return _elementwise(_MUL, a, b)


def fr_batch_inverse(values: np.ndarray) -> np.ndarray:
    """1/v for every row (one inversion per chunk); a zero row is a ValueError."""
    values = fr_limbs(values, "values")
    out = np.empty_like(values)
    call("pq_fr_batch_inverse", ptr(values), ptr(out), values.shape[0])
    return out


def fr_powers(base: int, count: int, scale: int = 1) -> np.ndarray:
    """``scale · base^i`` for i < count."""
    out = np.empty((count, FR_LIMBS), dtype=np.uint64)
    call("pq_fr_powers", ptr(_scalar(base, "base")), ptr(_scalar(scale, "scale")), ptr(out),
         count)
    return out


def lagrange_at(n: int, tau: int, count: int | None = None) -> np.ndarray:
    """L_i(τ) = (τ^n − 1)·ω^i / (n·(τ − ω^i)) on the domain of size n (a power of two),
    for the first ``count`` points (all n by default); τ must not be in the domain."""
    if n < 1 or n & (n - 1):
        raise ValueError(f"n: {n} is not a power of two")
    count = n if count is None else count
    out = np.empty((count, FR_LIMBS), dtype=np.uint64)
    call("pq_fr_lagrange", n.bit_length() - 1, ptr(_scalar(tau, "tau")), ptr(out), count)
    return out
