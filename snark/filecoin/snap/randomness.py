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
from functools import lru_cache

import numpy as np

from snark.filecoin.snap.shape import SnapShape
from snark.poseidon.neptune import PoseidonConstants, hash_optimized_static, neptune_constants

GEN_RANDOMNESS_TAG = 1 << 40
CAPACITY = 254


@lru_cache(maxsize=1)
def gen_randomness_constants() -> PoseidonConstants:
    return dataclasses.replace(neptune_constants(2), domain_tag=GEN_RANDOMNESS_TAG)


def h_gen(a: int, b: int) -> int:
    return hash_optimized_static([a, b], gen_randomness_constants())


def challenges_per_digest(shape: SnapShape) -> int:
    return CAPACITY // shape.random_bits


def digests_per_partition(shape: SnapShape) -> int:
    return -(-shape.challenges // challenges_per_digest(shape))


def challenges(shape: SnapShape, comm_r_new: int, k: int) -> np.ndarray:
    """Partition ``k``'s challenges (``Challenges::new``), int64."""
    bits, per = shape.random_bits, challenges_per_digest(shape)
    first = k * digests_per_partition(shape)
    out: list[int] = []
    for j in range(digests_per_partition(shape)):
        digest = h_gen(comm_r_new, first + j)
        for i in range(min(per, shape.challenges - len(out))):
            out.append((digest >> (i * bits)) & ((1 << bits) - 1) | k << bits)
    return np.asarray(out, dtype=np.int64)


def phi(comm_d_new: int, comm_r_old: int) -> int:
    return h_gen(comm_d_new, comm_r_old)


def high_bits(shape: SnapShape, nodes: np.ndarray, h: int | None = None) -> np.ndarray:
    return np.asarray(nodes, dtype=np.int64) >> (shape.challenge_bits - (h or shape.h))


def rho(phi_value: int, high: int) -> int:
    return h_gen(phi_value, int(high))


def rhos(shape: SnapShape, phi_value: int, nodes: np.ndarray) -> np.ndarray:
    """rho of every node in ``nodes``, one hash per distinct high value (object ints)."""
    high = high_bits(shape, nodes)
    distinct, inverse = np.unique(high, return_inverse=True)
    values = np.empty(len(distinct), dtype=object)
    values[:] = [rho(phi_value, int(v)) for v in distinct]
    return values[inverse.reshape(high.shape)]
