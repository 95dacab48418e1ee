"""The hash-derived values of a sealed sector (docs/ARCHITECTURE.md §5), shared by sealer
and verifiers.

- replica_id = H(ticket, comm_d): binds the replica to its data and to the chain's ticket.
- key_i = H(replica_id, i) and ρ_i = d_i + key_i: the replica encoding of node i.
- challenge j of partition p = low log2(nodes) bits of H(H(seed, replica_id), p·K + j):
  the seed arrives after comm_r is fixed, so the sealer cannot pick which nodes are opened.
"""

from __future__ import annotations

import numpy as np

from snark.fields import FR_MODULUS
from snark.poseidon.hashing import hash2, hash2_many


def replica_id_for(ticket: int, comm_d: int) -> int:
    return hash2(ticket, comm_d)


def replica_keys_at(replica_id: int, index: np.ndarray) -> np.ndarray:
    """key_i = H(replica_id, i) for the given node indices, as an object array of ints."""
    return hash2_many(replica_id, np.asarray(index).astype(object))


def encode_replica(data: np.ndarray, replica_id: int) -> np.ndarray:
    """ρ = d + key for every node (object arrays of ints)."""
    return (data + replica_keys_at(replica_id, np.arange(len(data)))) % FR_MODULUS


def challenge_indices(seed: int, replica_id: int, nodes: int, partitions: int,
                      challenges: int) -> list[list[int]]:
    """Challenge indices per partition, ``[p][j]``."""
    base = hash2(seed, replica_id)
    total = partitions * challenges
    digests = hash2_many(base, np.arange(total).astype(object))
    mask = nodes - 1
    flat = [int(h) & mask for h in digests]
    return [flat[p * challenges:(p + 1) * challenges] for p in range(partitions)]
