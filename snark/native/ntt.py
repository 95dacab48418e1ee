"""NTTs and the Groth16 quotient in native code, with ``snark.domain``'s conventions
(natural order, ω of ``snark.fields``, coset g = 7, odd points ψ^(2i+1)): byte-identical to
``Domain.ntt`` and its siblings on standard-form ``(n, 4)`` limbs, n = 2^1 … 2^32."""

from __future__ import annotations

import numpy as np

from snark.native.field import fr_limbs
from snark.native.library import call, ptr

_NTT, _INTT, _COSET_NTT, _COSET_INTT, _ODD_NTT = range(5)


def _log_size(values: np.ndarray, name: str) -> int:
    n = values.shape[0]
    if n < 2 or n & (n - 1):
        raise ValueError(f"{name}: length {n} is not a power of two >= 2")
    return n.bit_length() - 1


def _transform(kind: int, values: np.ndarray) -> np.ndarray:
    out = fr_limbs(values, "values").copy()
    call("pq_ntt", kind, ptr(out), _log_size(out, "values"))
    return out


def ntt(coeffs: np.ndarray) -> np.ndarray:
    """``out[i] = Σ_j a_j ω^{ij}``."""
    return _transform(_NTT, coeffs)


def intt(evals: np.ndarray) -> np.ndarray:
    return _transform(_INTT, evals)


def coset_ntt(coeffs: np.ndarray) -> np.ndarray:
    """``out[i] = A(g ω^i)``."""
    return _transform(_COSET_NTT, coeffs)


def coset_intt(evals: np.ndarray) -> np.ndarray:
    return _transform(_COSET_INTT, evals)


def odd_ntt(coeffs: np.ndarray) -> np.ndarray:
    """``out[i] = A(ψ^(2i+1))``, ψ the 2n-th root of unity with ψ² = ω."""
    return _transform(_ODD_NTT, coeffs)


def quotient(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, *,
             odd: bool = False) -> np.ndarray:
    """The H MSM's scalars from A·w, B·w, C·w on the domain (n rows each), in the H forms
    of ``snark.keys``: the coset form, the n − 1 coefficients of (A·B − C)/Z; with ``odd``,
    A·B − C on the n odd points of the 2n-domain with C = A∘B (``c`` unused)."""
    a, b = fr_limbs(a, "a"), fr_limbs(b, "b")
    log_n = _log_size(a, "a")
    if odd:
        c = a
    elif c is None:
        raise ValueError("c: C·w on the domain is needed unless odd")
    else:
        c = fr_limbs(c, "c")
    for name, v in (("b", b), ("c", c)):
        if v.shape != a.shape:
            raise ValueError(f"{name}: {v.shape[0]} rows, a has {a.shape[0]}")
    out = np.empty((a.shape[0] - (0 if odd else 1), 4), dtype=np.uint64)
    call("pq_quotient", int(odd), ptr(a), ptr(b), ptr(c), ptr(out), log_n)
    return out
