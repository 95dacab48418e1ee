"""Full-size checks of a partition proved under a timing key (issue #42): each MSM and the
quotient at 2^27 checked on the host by an independent computation of O(n) field
operations — no second MSM, no second NTT.

A timing key's bases repeat D points of known discrete logs (``bench/filecoin_gpu.py``
``timing_key``): point t of a basis is k[t mod D]·G. So an MSM Σ_t s_t·P_t is
(Σ_t s_t·k[t mod D])·G: the scalars folded into D sums, D products, one sum, one scalar
multiplication. The quotient (coset form, ``snark.qap.COSET``) is checked at a random
point x (Schwartz–Zippel: a wrong h passes with probability about n/r): A, B, C from their
values on the domain through the Lagrange basis at x, H from its n − 1 coefficients, and
H(x)·(xⁿ − 1) = A(x)·B(x) − C(x).

Everything here is host numpy on standard-form limbs, ``(n, 4)`` uint64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark import native
from snark.curve import G1Point, G2Point, Scalar, g1_generator, g2_generator
from snark.fields import FR_MODULUS, limbs_to_ints


@dataclass(frozen=True)
class KnownLogs:
    """The discrete logs of a timing key's tiles: G1 bases repeat ``g1`` (D points), the
    G2 basis repeats ``g2``."""

    g1: np.ndarray  # (D, 4)
    g2: np.ndarray  # (D', 4)


def fr_sum(values: np.ndarray) -> int:
    """Σ values mod r, by halving (log₂ n vector additions)."""
    values = np.asarray(values, dtype=np.uint64)
    if len(values) == 0:
        return 0
    while len(values) > 1:
        if len(values) % 2:
            values = np.concatenate([values, np.zeros((1, 4), dtype=np.uint64)])
        half = len(values) // 2
        values = native.fr_add(values[:half], values[half:])
    return limbs_to_ints(values)[0]


def folded_dot(scalars: np.ndarray, logs: np.ndarray) -> int:
    """Σ_t scalars[t]·logs[t mod D] mod r: the scalars summed per residue class, then
    D products."""
    d = len(logs)
    rows = -(-len(scalars) // d)
    padded = np.zeros((rows * d, 4), dtype=np.uint64)
    padded[:len(scalars)] = scalars
    buckets = padded[:d]
    for row in range(1, rows):
        buckets = native.fr_add(buckets, padded[row * d:(row + 1) * d])
    return fr_sum(native.fr_mul(buckets, logs))


def msm_expected(scalars: np.ndarray, logs: np.ndarray, group: int) -> G1Point | G2Point:
    """What an MSM of ``scalars`` over a tiled basis of ``logs`` must give."""
    generator = g1_generator() if group == 1 else g2_generator()
    return generator * Scalar(folded_dot(scalars, logs))


def quotient_holds(a: np.ndarray, b: np.ndarray, c: np.ndarray, h: np.ndarray,
                   rng: np.random.Generator) -> bool:
    """Whether ``h`` (n − 1 coefficients) is (A·B − C)/Z for A, B, C given on the n-domain,
    at a random point."""
    n = len(a)
    x = int(rng.integers(2, 2**62)) * int(rng.integers(2, 2**62)) % FR_MODULUS
    lagrange = native.lagrange_at(n, x)
    a_x, b_x, c_x = (fr_sum(native.fr_mul(v, lagrange)) for v in (a, b, c))
    h_x = fr_sum(native.fr_mul(h, native.fr_powers(x, len(h))))
    z_x = (pow(x, n, FR_MODULUS) - 1) % FR_MODULUS
    return h_x * z_x % FR_MODULUS == (a_x * b_x - c_x) % FR_MODULUS


def msm_scalars(key, assignment: np.ndarray, h: np.ndarray) -> dict[str, np.ndarray]:
    """Each basis's scalars as the prover forms them: a and b over the variables their
    density selects, l over the private ones, h the quotient."""
    def pick(mask):
        return assignment if mask is None else assignment[np.asarray(mask)]

    return {"a_g1": pick(key.a_density), "b_g1": pick(key.b_density),
            "b_g2": pick(key.b_density),
            "l_g1": assignment[key.r1cs.num_inputs:], "h_g1": h}


def check_partition(key, logs: KnownLogs, assignment: np.ndarray, abc, h: np.ndarray,
                    results: dict, rng: np.random.Generator) -> dict[str, bool]:
    """Each step's verdict: ``quotient`` (unless ``abc`` is None: a witness that does not
    satisfy the circuit has no quotient to check) and every basis of ``results`` (its
    MSM's point)."""
    verdicts = {} if abc is None else {"quotient": quotient_holds(*abc, h, rng)}
    for basis, scalars in msm_scalars(key, assignment, h).items():
        if basis in results:
            group, tile = (2, logs.g2) if basis == "b_g2" else (1, logs.g1)
            verdicts[basis] = results[basis] == msm_expected(scalars, tile, group)
    return verdicts
