"""Neptune's Poseidon, as Filecoin uses it (neptune 11, ``Strength::Standard``,
``HashType::MerkleTree``), over BLS12-381 Fr.

The instance of arity a has width t = a + 1 and x^5 S-boxes. Its facts (``neptune:src/``):

* rounds (``round_numbers.rs``): R_F = 8 and R_P from the Poseidon paper's security
  inequalities for a 256-bit prime and 128-bit security, with neptune's margin (R_F + 2,
  R_P · 1.075 rounded up), computed in f32 as neptune does: 55 / 56 / 57 / 57 for
  t = 3 / 5 / 9 / 12;
* round constants (``round_constants.rs``): the Grain LFSR of ``grain.py`` seeded with field 1,
  S-box tag 1, n = 255, t, R_F, R_P; (R_F + R_P)·t constants, rejection-sampled below r;
* MDS (``mds.rs``): the Cauchy matrix 1 / (i + (t + j)), symmetric, not drawn from Grain;
* the state starts as [domain tag 2^a − 1, inputs…] and the hash is state[1] after the
  permutation (``poseidon.rs``, ``hash_type.rs``).

Two schedules compute the same permutation. Hashing many values runs ``fast.py``'s generic
sparse schedule (``poseidon_many``: the one function tree builders call, the seam where a
native kernel can replace the inner loop). ``PoseidonConstants`` holds what neptune itself
precomputes for its optimised hash and circuit (``hash_optimized_static``, ``circuit.rs``):
constants compressed backwards through M⁻¹ and added after the S-boxes, and the partial
rounds' sparse matrices. Its matrices act on row vectors (state · M), as neptune's do; the
sparse factors are the transposes of ``fast.py``'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from snark.fields import FR_MODULUS, fr_to_limbs, is_canonical
from snark.poseidon.fast import fast_schedule, permute_words
from snark.poseidon.linalg import Matrix, inverse, matvec
from snark.poseidon.params import PoseidonParams, derive_params

#: The Grain seed's S-box field in neptune (``neptune:src/lib.rs`` ``SBOX``).
NEPTUNE_SBOX_TAG = 1
FIELD_BITS = 255
ALPHA = 5
#: Inputs hashed per vector pass (bounds the temporaries of a huge batch).
CHUNK = 1 << 14

_PRIME_BITS, _SECURITY = 256, 128


# -- the instance -----------------------------------------------------------------------------

def round_numbers(t: int) -> tuple[int, int]:
    """(R_F, R_P) of width t: the cheapest secure pair, then neptune's margin; the loop and
    its f32 arithmetic follow ``round_numbers.rs`` ``calc_round_numbers`` (including that a
    margin, once added, carries over to the rest of the R_P scan for that R_F)."""
    f32 = np.float32
    n, m, tt = f32(_PRIME_BITS), f32(_SECURITY), f32(t)
    rf_stat = 6 if m <= (n - f32(3)) * (tt + f32(1)) else 10
    rf_max, margin_rp = {}, {}
    for rp in range(4, 200):
        bounds = (f32(0.43) * m + np.log2(tt) - f32(rp), f32(0.21) * n - f32(rp),
                  (f32(0.14) * n - f32(1) - f32(rp)) / (tt - f32(1)))
        rf_max[rp] = max(rf_stat, *(max(0, math.ceil(b)) for b in bounds))
        margin_rp[rp] = math.ceil(f32(1.075) * f32(rp))
    best, best_rf, best_rp = math.inf, 0, 0
    for rf_start in range(2, 1001, 2):
        rf = rf_start
        for rp in range(4, 200):
            if rf >= rf_max[rp]:
                rf += 2
                cost = t * rf + margin_rp[rp]
                if cost < best or (cost == best and rf < best_rf):
                    best, best_rf, best_rp = cost, rf, margin_rp[rp]
    return best_rf, best_rp


def mds_matrix(t: int) -> Matrix:
    """Neptune's MDS matrix: 1 / (x_i + y_j) with x = 0 … t−1 and y = t … 2t−1."""
    return tuple(tuple(pow(i + t + j, -1, FR_MODULUS) for j in range(t)) for i in range(t))


def domain_tag(arity: int) -> int:
    """``HashType::MerkleTree``'s tag: 2^arity − 1."""
    return (1 << arity) - 1


@lru_cache(maxsize=16)
def neptune_params(arity: int) -> PoseidonParams:
    """The plain permutation of arity ``arity`` (width arity + 1): constants in neptune's
    order, one row of t per round."""
    if not 1 <= arity <= 36:
        raise ValueError(f"neptune supports arities 1 to 36, got {arity}")
    t = arity + 1
    full, partial = round_numbers(t)
    return derive_params(FR_MODULUS, FIELD_BITS, t, ALPHA, full, partial,
                         sbox_tag=NEPTUNE_SBOX_TAG, mds=mds_matrix(t))


# -- neptune's precomputed constants ------------------------------------------------------

def transpose(m: Matrix) -> Matrix:
    return tuple(zip(*m))


def row_times(v: Sequence[int], m: Matrix) -> tuple[int, ...]:
    """The row vector v times m (neptune's ``apply_matrix``)."""
    return matvec(transpose(m), v, FR_MODULUS)


def minor00(m: Matrix) -> Matrix:
    return tuple(row[1:] for row in m[1:])


@dataclass(frozen=True)
class MdsMatrices:
    """``mds.rs`` ``MdsMatrices``: M, M⁻¹, M̂ (M without row and column 0), M̂⁻¹, and the
    factors M = M′ · M″ with M′ = diag(1, M̂) and M″ = [[M₀₀, v], [ŵ, I]]."""

    m: Matrix
    m_inv: Matrix
    m_hat: Matrix
    m_hat_inv: Matrix
    m_prime: Matrix
    m_double_prime: Matrix


@dataclass(frozen=True)
class SparseMatrix:
    """A partial round's M″: ``w_hat`` its first column, ``v_rest`` its first row without
    element 0 (``mds.rs`` ``SparseMatrix``). As a row-vector product:
    out₀ = Σ w_hat_i · s_i and out_j = s_j + v_rest_{j−1} · s₀."""

    w_hat: tuple[int, ...]
    v_rest: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class PoseidonConstants:
    """Neptune's ``PoseidonConstants`` of one arity (``poseidon.rs``), for the optimised
    hash and circuit. ``compressed_round_constants`` has full_rounds · width + partial_rounds
    entries; ``sparse_matrices`` has one per partial round, in round order.

    Compared and hashed as an object (``neptune_constants`` makes one an arity): a circuit's
    gadgets pass it as a static argument, which keys every block call's template lookup, and
    hashing its thousands of ints there took a tenth of a WindowPoSt plan."""

    arity: int
    width: int
    domain_tag: int
    full_rounds: int
    half_full_rounds: int
    partial_rounds: int
    round_constants: tuple[int, ...]
    compressed_round_constants: tuple[int, ...]
    mds_matrices: MdsMatrices
    pre_sparse_matrix: Matrix
    sparse_matrices: tuple[SparseMatrix, ...]


def mds_matrices(m: Matrix) -> MdsMatrices:
    p, t = FR_MODULUS, len(m)
    m_hat = minor00(m)
    m_hat_inv = inverse(m_hat, p)
    w_hat = row_times([row[0] for row in m[1:]], m_hat_inv)
    prime = ((1,) + (0,) * (t - 1),) + tuple((0,) + row[1:] for row in m[1:])
    double_prime = ((m[0][0],) + m[0][1:],) + tuple(
        (w_hat[i - 1],) + tuple(int(i == j) for j in range(1, t)) for i in range(1, t))
    return MdsMatrices(m, inverse(m, p), m_hat, m_hat_inv, prime, double_prime)


def _compress_round_constants(params: PoseidonParams, m_inv: Matrix) -> tuple[int, ...]:
    """``preprocessing.rs`` with every partial round preprocessed: round 0's constants as
    they are; then, added after each S-box layer, the next round's constants pulled back
    through M⁻¹; the partial rounds' constants folded backwards into the last first-half
    full round, leaving one constant per partial round (for element 0)."""
    p, keys = FR_MODULUS, params.round_constants
    half, partial = params.half_full_rounds, params.partial_rounds
    out = list(keys[0])
    for r in range(1, half):
        out += row_times(keys[r], m_inv)
    acc, partial_keys = keys[half + partial], []
    for r in reversed(range(half, half + partial)):
        pulled = list(row_times(acc, m_inv))
        partial_keys.append(pulled[0])
        pulled[0] = 0
        acc = tuple((k + x) % p for k, x in zip(keys[r], pulled))
    out += row_times(acc, m_inv)
    out += reversed(partial_keys)
    for r in range(half + partial + 1, params.rounds):
        out += row_times(keys[r], m_inv)
    return tuple(out)


@lru_cache(maxsize=16)
def neptune_constants(arity: int) -> PoseidonConstants:
    """All of neptune's constants for ``arity``; the sparse factors come from ``fast.py``'s
    factorisation (the transposes of its matrix-times-column factors)."""
    params = neptune_params(arity)
    matrices = mds_matrices(params.mds)
    schedule = fast_schedule(params)
    return PoseidonConstants(
        arity=arity, width=params.t, domain_tag=domain_tag(arity),
        full_rounds=params.full_rounds, half_full_rounds=params.half_full_rounds,
        partial_rounds=params.partial_rounds,
        round_constants=tuple(c for row in params.round_constants for c in row),
        compressed_round_constants=_compress_round_constants(params, matrices.m_inv),
        mds_matrices=matrices,
        pre_sparse_matrix=transpose(schedule.head_matrices[-1]),
        sparse_matrices=tuple(SparseMatrix((s.a, *s.w), s.v) for s in schedule.sparse_rounds))


def hash_optimized_static(preimage: Sequence[int], c: PoseidonConstants) -> int:
    """Neptune's ``hash_optimized_static`` on ints: the schedule its circuit mirrors."""
    p = FR_MODULUS
    state = [(x + k) % p for x, k in zip((c.domain_tag, *preimage),
                                         c.compressed_round_constants)]
    offset = c.width
    rounds = ["full"] * c.half_full_rounds + ["partial"] * c.partial_rounds + \
        ["full"] * c.half_full_rounds
    for r, kind in enumerate(rounds):
        if kind == "partial":
            state[0] = (pow(state[0], ALPHA, p) + c.compressed_round_constants[offset]) % p
            offset += 1
        elif r == len(rounds) - 1:
            state = [pow(x, ALPHA, p) for x in state]
        else:
            keys = c.compressed_round_constants[offset:offset + c.width]
            state = [(pow(x, ALPHA, p) + k) % p for x, k in zip(state, keys)]
            offset += c.width
        sparse = r - c.half_full_rounds
        if r == c.half_full_rounds - 1:
            state = list(row_times(state, c.pre_sparse_matrix))
        elif 0 <= sparse < c.partial_rounds:
            s = c.sparse_matrices[sparse]
            first = sum(w * x for w, x in zip(s.w_hat, state)) % p
            state = [first] + [(x + v * state[0]) % p for x, v in zip(state[1:], s.v_rest)]
        else:
            state = list(row_times(state, c.mds_matrices.m))
    return state[1]


# -- hashing ----------------------------------------------------------------------------------

def poseidon_hash(values: Sequence[int]) -> int:
    """Neptune's hash of ``len(values)`` field elements (an arity 1–36; Filecoin uses 2, 4, 8
    and 11), given and returned as ints."""
    for i, value in enumerate(values):
        if not isinstance(value, (int, np.integer)) or not 0 <= value < FR_MODULUS:
            raise ValueError(f"values[{i}] is not a reduced Fr element: {value!r}")
    arity = len(values)
    words = [domain_tag(arity), *(int(v) for v in values)]
    return permute_words(words, fast_schedule(neptune_params(arity)))[1]


def poseidon_many(inputs: np.ndarray, arity: int, *, tag: int | None = None) -> np.ndarray:
    """Neptune hashes of many preimages: ``inputs`` uint64 ``(n, arity, 4)`` standard-form Fr
    limbs, result ``(n, 4)``: the states (domain tag, preimage) permuted by the native
    engine's sparse schedule (``snark.native.permute_batch``), ``CHUNK`` at a time. ``tag``:
    a custom domain tag instead of the Merkle tree's (the constants stay the tree's)."""
    if inputs.dtype != np.uint64 or inputs.ndim != 3 or inputs.shape[1:] != (arity, 4):
        raise ValueError(f"inputs must be uint64 limbs of shape (n, {arity}, 4), got "
                         f"{inputs.dtype} {inputs.shape}")
    bad = np.flatnonzero(~is_canonical(inputs, FR_MODULUS).all(axis=1))
    if bad.size:
        raise ValueError(f"inputs[{bad[0]}] holds a value that is not a reduced Fr element")
    from snark import native  # the native engine loads arkworks: not for producers' imports

    schedule = fast_schedule(neptune_params(arity))
    tag = fr_to_limbs([domain_tag(arity) if tag is None else tag])[0]
    out = np.empty((len(inputs), 4), dtype=np.uint64)
    for start in range(0, len(inputs), CHUNK):
        part = inputs[start:start + CHUNK]
        states = np.empty((len(part), arity + 1, 4), dtype=np.uint64)
        states[:, 0] = tag
        states[:, 1:] = part
        out[start:start + CHUNK] = native.permute_batch(states, schedule)[:, 1]
    return out
