"""An equivalent Poseidon schedule with cheaper partial rounds, for hashing many pairs.

Elements 1..t-1 pass through a partial round linearly, so (Poseidon paper, appendix B):

* their round constants can be pushed forward through the MDS matrix: each partial round
  keeps only the constant of element 0, and the remainder lands on the next full round;
* the MDS matrix factors as ``M = S · diag(1, D)`` with ``S = [[a, wᵀ], [v, I]]`` sparse.
  ``diag(1, D)`` commutes with a partial round's S-box and element-0 constant, so it moves
  into the previous round's matrix; walking backwards leaves one sparse matrix per partial
  round (2t − 1 products instead of t²) and one dense matrix folded into the last full
  round before them.

The code is written once over "words" that are either Python ints or numpy object arrays
of ints, so a whole batch runs each round as a few vector operations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from snark.poseidon.linalg import Matrix, inverse, matmul, matvec
from snark.poseidon.params import PoseidonParams, poseidon_x5_255_3


@dataclass(frozen=True)
class SparseRound:
    """``S = [[a, wᵀ], [v, I]]`` applied after a partial round's S-box."""

    a: int
    w: tuple[int, ...]
    v: tuple[int, ...]


@dataclass(frozen=True)
class FastSchedule:
    modulus: int
    alpha: int
    head_constants: Matrix
    head_matrices: tuple[Matrix, ...]
    partial_constants: tuple[int, ...]
    sparse_rounds: tuple[SparseRound, ...]
    tail_constants: Matrix
    mds: Matrix


def _push_constants(params: PoseidonParams) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Element-0 constants of each partial round and the first tail round's constants."""
    p, half = params.modulus, params.half_full_rounds
    carry = (0,) * params.t
    element0 = []
    for r in range(half, half + params.partial_rounds):
        c = [(x + y) % p for x, y in zip(params.round_constants[r], carry)]
        element0.append(c[0])
        carry = matvec(params.mds, (0, *c[1:]), p)
    tail_first = params.round_constants[half + params.partial_rounds]
    return tuple(element0), tuple((x + y) % p for x, y in zip(tail_first, carry))


def _factor_partial_matrices(params: PoseidonParams) -> tuple[tuple[SparseRound, ...], Matrix]:
    """Sparse matrices of the partial rounds and the dense matrix left before them."""
    p, mds = params.modulus, params.mds
    pending = mds
    sparse = []
    for _ in range(params.partial_rounds):
        d = tuple(row[1:] for row in pending[1:])
        w = matmul((pending[0][1:],), inverse(d, p), p)[0]  # wᵀ = bᵀ D⁻¹
        sparse.append(SparseRound(pending[0][0], w, tuple(row[0] for row in pending[1:])))
        pending = (mds[0],) + matmul(d, mds[1:], p)
    sparse.reverse()
    return tuple(sparse), pending


@lru_cache(maxsize=16)
def fast_schedule(params: PoseidonParams | None = None) -> FastSchedule:
    params = params or poseidon_x5_255_3()
    half = params.half_full_rounds
    element0, tail_first = _push_constants(params)
    sparse, before_partial = _factor_partial_matrices(params)
    return FastSchedule(
        modulus=params.modulus, alpha=params.alpha,
        head_constants=params.round_constants[:half],
        head_matrices=(params.mds,) * (half - 1) + (before_partial,),
        partial_constants=element0,
        sparse_rounds=sparse,
        tail_constants=(tail_first,) + params.round_constants[half + params.partial_rounds + 1:],
        mds=params.mds)


def _power(x, alpha: int, p: int):
    """x^alpha by square-and-multiply, reducing after every product."""
    result = x
    for bit in bin(alpha)[3:]:
        result = result * result % p
        if bit == "1":
            result = result * x % p
    return result


def _full_round(words: list, constants: tuple[int, ...], matrix: Matrix, sbox, p: int) -> list:
    boxed = [sbox(w + c) for w, c in zip(words, constants)]
    return [sum(m * x for m, x in zip(row, boxed)) % p for row in matrix]


def permute_words(words: list, schedule: FastSchedule | None = None,
                  sbox: Callable | None = None) -> list:
    """The permutation of t words (ints or equal-length object arrays of reduced ints).

    ``sbox`` replaces x ↦ x^alpha, in S-box order (``trace.py`` records the powers there).
    """
    s = schedule or fast_schedule()
    p = s.modulus
    if sbox is None:
        def sbox(x):
            return _power(x, s.alpha, p)
    for constants, matrix in zip(s.head_constants, s.head_matrices):
        words = _full_round(words, constants, matrix, sbox, p)
    for c0, sr in zip(s.partial_constants, s.sparse_rounds):
        x = sbox(words[0] + c0)
        rest = words[1:]
        first = (sr.a * x + sum(wi * zi for wi, zi in zip(sr.w, rest))) % p
        # Elements 1..t-1 grow by one bit a round unreduced; a product costs less than a %.
        words = [first] + [zi + vi * x for zi, vi in zip(rest, sr.v)]
    for constants in s.tail_constants:
        words = _full_round(words, constants, s.mds, sbox, p)
    return words
