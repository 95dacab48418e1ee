"""The reference's security tests for a candidate MDS matrix (one S-box per partial round).

A Cauchy matrix is MDS, but it can still let a subspace pass through arbitrarily many
partial rounds without activating an S-box (an infinitely long subspace trail). The
reference generator rejects such matrices with three tests, restated here for s = 1:

1. for i = 1 … t−1: M^i must not be a scalar matrix; no eigenvector of M^i (eigenvalue
   in the field) may lie in the subspace S_i of states whose first i − 1 rounds leave the
   S-box input at zero; and S_i must not be invariant under M^j for j = 1 … i;
2. the iterates of e₀ under M must span the whole space;
3. test 2 must also hold for M^r, r = 2 … 4t.
"""

from __future__ import annotations

from snark.poseidon.linalg import (
    Matrix,
    charpoly,
    identity,
    kernel,
    matpow,
    matvec,
    rank,
    roots,
)


def _inactive_subspace(m: Matrix, rounds: int, p: int) -> list[tuple[int, ...]]:
    """Basis of S_rounds: states with x₀ = 0 whose S-box input stays 0 for rounds − 1 more."""
    t = len(m)
    constraints = [matpow(m, k, p)[0][1:] for k in range(1, rounds)]
    return [(0, *v) for v in kernel(constraints, t - 1, p)]


def _eigenspaces(a: Matrix, p: int) -> list[list[tuple[int, ...]]]:
    t = len(a)
    return [kernel([[(x - lam * (i == j)) % p for j, x in enumerate(row)]
                    for i, row in enumerate(a)], t, p)
            for lam in roots(charpoly(a, p), p)]


def _meets(u: list, v: list, p: int) -> bool:
    """Whether two subspaces (given by bases) share a non-zero vector."""
    return bool(u) and bool(v) and rank(u + v, p) < len(u) + len(v)


def _has_no_trail_subspaces(m: Matrix, p: int) -> bool:
    """Test 1."""
    t = len(m)
    for i in range(1, t):
        power = matpow(m, i, p)
        scalar = power[0][0]
        if all(power[r][c] == scalar * (r == c) for r in range(t) for c in range(t)):
            return False
        s = _inactive_subspace(m, i, p)
        if any(_meets(s, e, p) for e in _eigenspaces(power, p)):
            return False
        for j in range(1, i + 1):
            moved = [matvec(matpow(m, j, p), v, p) for v in s]
            if rank(s + moved, p) == len(s):
                return False
    return True


def _krylov_spans(a: Matrix, p: int) -> bool:
    """Test 2: e₀, A·e₀, A²·e₀, … span the whole space."""
    t = len(a)
    basis = [identity(t)[0]]
    v = basis[0]
    while len(basis) < t:
        v = matvec(a, v, p)
        if rank(basis + [v], p) == len(basis):
            return False
        basis.append(v)
    return True


def is_secure_mds(m: Matrix, p: int) -> bool:
    """All three reference tests."""
    t = len(m)
    return (_has_no_trail_subspaces(m, p)
            and all(_krylov_spans(matpow(m, r, p), p) for r in range(1, 4 * t + 1)))

