"""The native sealer: sector data → replica, commitments and the vanilla proofs of a C1.

Bytes to field elements: the sector is cut into 32-byte nodes, each read little-endian with
its two top bits cleared, so every node is below 2^254 < r. Filecoin's fr32 padding keeps
all data bits by spreading 254 bits over 256; this sealer keeps it simpler and commits to the
masked values (the two top bits of every 32nd byte are not part of the replica).

Everything per node is vectorised (hash2_many over all nodes, Merkle levels at once), so a
multi-MiB sector seals in seconds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from snark.fields import limbs_to_ints, limbs_to_object, random_fr
from snark.merkle import MerkleTree
from snark.porep.c1 import (C1, NODE_BYTES, C1Error, ChallengeProof, PartitionProof,
                            check_sector_size)
from snark.porep.derive import challenge_indices, encode_replica, replica_id_for

_TOP_BITS_MASK = 0x3F


def data_to_fr(data: bytes) -> np.ndarray:
    """32-byte little-endian nodes with the two top bits cleared, as an object array of ints."""
    nodes = np.frombuffer(data, dtype=np.uint8).reshape(-1, NODE_BYTES).copy()
    nodes[:, NODE_BYTES - 1] &= _TOP_BITS_MASK
    return limbs_to_object(nodes.view("<u8").astype(np.uint64))


def seal(sector_size: int, partitions: int, challenges: int, data: bytes | None = None,
         rng: np.random.Generator | None = None,
         on_phase: Callable[[str], None] | None = None) -> C1:
    """Seal ``data`` (random bytes unless given) and build the C1 for P × K challenges.

    ``on_phase(name)`` is told each step as it starts (a GiB sector takes minutes)."""
    phase = on_phase or (lambda name: None)
    check_sector_size(sector_size)
    for name, count in (("partitions", partitions), ("challenges", challenges)):
        if count < 1:
            raise C1Error(f"{name}: must be at least 1, got {count}")
    rng = rng or np.random.default_rng()
    if data is None:
        data = rng.bytes(sector_size)
    if len(data) != sector_size:
        raise C1Error(f"data: expected {sector_size} bytes (the sector size), got {len(data)}")
    ticket, seed = limbs_to_ints(random_fr(2, rng))

    phase("reading data")
    d = data_to_fr(data)
    phase("data tree (comm_d)")
    tree_d = MerkleTree(d)
    replica_id = replica_id_for(ticket, tree_d.root)
    phase("encoding the replica")
    rho = encode_replica(d, replica_id)
    phase("replica tree (comm_r)")
    tree_r = MerkleTree(rho)
    phase("vanilla proofs")

    # model_construct: these values are canonical by construction; validation (hex parsing)
    # is for C1s that arrive from outside.
    indices = challenge_indices(seed, replica_id, len(d), partitions, challenges)
    proofs = [PartitionProof.model_construct(challenges=[
        ChallengeProof.model_construct(index=i, data_leaf=int(d[i]), replica_leaf=int(rho[i]),
                                       d_path=tree_d.path(i), r_path=tree_r.path(i))
        for i in row]) for row in indices]
    return C1.model_construct(sector_size=sector_size, partitions=partitions,
                              challenges=challenges, comm_d=tree_d.root, comm_r=tree_r.root,
                              replica_id=replica_id, seed=seed, ticket=ticket,
                              vanilla_proofs=proofs)
