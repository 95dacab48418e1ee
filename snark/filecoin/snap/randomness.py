"""SnapDeals' randomness: challenges, phi and rho, with neptune's custom-tag Poseidon.

``storage-proofs-update/src/{challenges,vanilla}.rs``. ``H_gen`` is neptune's arity-2 Poseidon
with domain tag 2^40 (``HashType::Custom(CType::Arbitrary(1))``): the round constants and
matrices of the MerkleTree instance, only the first state element differs.

* challenges of partition k: digest j = H_gen(comm_r_new, k·⌈count/per⌉ + j), each digest's
  little-endian bits cut into ``random_bits``-bit challenges (⌊254/random_bits⌋ a digest),
  the partition index above them;
* phi = H_gen(comm_d_new, comm_r_old); rho(c) = H_gen(phi, c >> (log2(nodes) − h));
  new label = old label + data·rho.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from snark.fields import fr_to_limbs, limbs_to_ints
from snark.filecoin.snap.shape import SnapShape
from snark.poseidon.neptune import PoseidonConstants, neptune_constants, poseidon_many

GEN_RANDOMNESS_TAG = 1 << 40
CAPACITY = 254


@lru_cache(maxsize=1)
def gen_randomness_constants() -> PoseidonConstants:
    """H_gen's constants for the circuit's gadget: the arity-2 tree's, the tag changed."""
    return dataclasses.replace(neptune_constants(2), domain_tag=GEN_RANDOMNESS_TAG)


def h_gen_limbs(a: Sequence[int], b: Sequence[int]) -> np.ndarray:
    """H_gen(a[i], b[i]) for every i, standard-form limbs ``(n, 4)``, in one native batch
    (a 32 GiB update's checks hash ~930 pairs; in Python that was over a second)."""
    pairs = np.stack([fr_to_limbs(a), fr_to_limbs(b)], axis=1)
    return poseidon_many(pairs, 2, tag=GEN_RANDOMNESS_TAG)


def h_gen(a: int, b: int) -> int:
    return limbs_to_ints(h_gen_limbs([a], [b]))[0]


def challenges_per_digest(shape: SnapShape) -> int:
    return CAPACITY // shape.random_bits


def digests_per_partition(shape: SnapShape) -> int:
    return -(-shape.challenges // challenges_per_digest(shape))


def challenges(shape: SnapShape, comm_r_new: int, k: int) -> np.ndarray:
    """Partition ``k``'s challenges (``Challenges::new``), int64."""
    bits, per = shape.random_bits, challenges_per_digest(shape)
    count = digests_per_partition(shape)
    first = k * count
    digests = limbs_to_ints(h_gen_limbs([comm_r_new] * count, range(first, first + count)))
    out: list[int] = []
    for digest in digests:
        for i in range(min(per, shape.challenges - len(out))):
            out.append((digest >> (i * bits)) & ((1 << bits) - 1) | k << bits)
    return np.asarray(out, dtype=np.int64)


def phi(comm_d_new: int, comm_r_old: int) -> int:
    return h_gen(comm_d_new, comm_r_old)


def high_bits(shape: SnapShape, nodes: np.ndarray, h: int | None = None) -> np.ndarray:
    return np.asarray(nodes, dtype=np.int64) >> (shape.challenge_bits - (h or shape.h))


def rho(phi_value: int, high: int) -> int:
    return h_gen(phi_value, int(high))


def rho_limbs(phi_value: int, highs: np.ndarray) -> np.ndarray:
    """rho of each of ``highs``, standard-form limbs ``(n, 4)``."""
    return h_gen_limbs([phi_value] * len(highs), [int(h) for h in highs])


def rhos(shape: SnapShape, phi_value: int, nodes: np.ndarray) -> np.ndarray:
    """rho of every node in ``nodes``, one hash per distinct high value (object ints)."""
    high = high_bits(shape, nodes)
    distinct, inverse = np.unique(high, return_inverse=True)
    values = np.empty(len(distinct), dtype=object)
    values[:] = limbs_to_ints(rho_limbs(phi_value, distinct))
    return values[inverse.reshape(high.shape)]
