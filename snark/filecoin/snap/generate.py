"""Test updates: new data encoded into a whole test sector as rust-fil-proofs encodes it, and
the vanilla proofs Curio would send (not for production sectors).

A sector key is what an update starts from: comm_c and the old replica (tree R_last's
leaves, the sealed CC sector). ``encode`` is ``EmptySectorUpdate::encode_into``: tree D
over the new data (comm_d_new), phi = H_gen(comm_d_new, comm_r_old), every replica node
``old + data·rho(its high bits)``, tree R over the result (comm_r_new = Poseidon2(comm_c,
root)). ``generate_update`` then opens each partition's challenges
(``EmptySectorUpdate::prove_inner``) and writes the partitions in bincode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.fields import fr_to_limbs
from snark.filecoin.domain import DOMAIN_BYTES, from_int, from_limbs, to_int, to_limbs
from snark.filecoin.errors import FilecoinError
from snark.filecoin.seal import random_fields
from snark.filecoin.snap import randomness
from snark.filecoin.snap.bincode import encode_partition_proof
from snark.filecoin.snap.checks import comm_r
from snark.filecoin.snap.proofs import PartitionProof
from snark.filecoin.snap.shape import SnapShape
from snark.filecoin.snap.update import SnapUpdate
from snark.filecoin.trees import build_levels, open_paths, poseidon_nodes, sha256_nodes

#: Whole sectors only: 8 MiB (2^18 nodes) takes seconds, 512 MiB (2^24) minutes (its
#: trees R hash 2 × 2.4 M Poseidon nodes; 32 GiB would be 64 times that).
MAX_WHOLE_NODES = 1 << 24


@dataclass(frozen=True)
class SectorKey:
    comm_c: np.ndarray    # uint8 (32,)
    replica: np.ndarray   # uint8 (nodes, 32)


def random_sector_key(shape: SnapShape, rng: np.random.Generator) -> SectorKey:
    return SectorKey(random_fields(rng, 1)[0], random_fields(rng, shape.nodes))


@dataclass(frozen=True)
class Encoded:
    tree_d: list[np.ndarray]
    tree_r_old: list[np.ndarray]
    tree_r_new: list[np.ndarray]
    comm_r_old: bytes
    comm_r_new: bytes
    comm_d_new: bytes


def encode(shape: SnapShape, key: SectorKey, data: np.ndarray) -> Encoded:
    if shape.nodes > MAX_WHOLE_NODES:
        raise FilecoinError(f"sector_size: {shape.size_name} is too large for a whole test "
                            "sector (512 MiB at most)")
    arities = shape.tree_arities()
    tree_d = build_levels(data, (2,) * shape.challenge_bits, sha256_nodes)
    tree_r_old = build_levels(key.replica, arities, poseidon_nodes)
    comm_c = to_int(key.comm_c)
    comm_r_old = comm_r(comm_c, to_int(tree_r_old[-1][0]))
    comm_d_new = tree_d[-1][0].tobytes()
    phi = randomness.phi(to_int(comm_d_new), comm_r_old)
    from snark import native  # the native engine: not for producers' imports

    new = from_limbs(native.fr_add(to_limbs(key.replica), native.fr_mul(
        to_limbs(data), rho_limbs(shape, phi)))).reshape(-1, DOMAIN_BYTES)
    tree_r_new = build_levels(new, arities, poseidon_nodes)
    comm_r_new = comm_r(comm_c, to_int(tree_r_new[-1][0]))
    return Encoded(tree_d, tree_r_old, tree_r_new, from_int(comm_r_old), from_int(comm_r_new),
                   comm_d_new)


def rho_limbs(shape: SnapShape, phi: int) -> np.ndarray:
    """rho of every node as standard-form limbs ``(nodes, 4)``: one hash per distinct high
    value, repeated over its run of nodes (nodes of one high value are contiguous)."""
    high = randomness.high_bits(shape, np.arange(shape.nodes))
    distinct, counts = np.unique(high, return_counts=True)
    values = fr_to_limbs([randomness.rho(phi, int(h)) for h in distinct])
    return np.repeat(values, counts, axis=0)


def partition_proof(shape: SnapShape, key: SectorKey, encoded: Encoded, k: int
                    ) -> PartitionProof:
    nodes = randomness.challenges(shape, to_int(encoded.comm_r_new), k)
    arities, tree = shape.tree_arities(), shape.tree.name
    apex_row = encoded.tree_d[shape.below_apex]
    apex = apex_row[k * shape.apex_leaves:(k + 1) * shape.apex_leaves].copy()
    return PartitionProof(
        key.comm_c.copy(), apex,
        open_paths(encoded.tree_r_old, arities, nodes, tree),
        open_paths(encoded.tree_d, (2,) * shape.challenge_bits, nodes, "Single"),
        open_paths(encoded.tree_r_new, arities, nodes, tree))


def generate_update(shape: SnapShape, rng: np.random.Generator, *,
                    key: SectorKey | None = None, data: np.ndarray | None = None) -> SnapUpdate:
    """An update of a whole test sector (random sector key and fr32 data unless given)."""
    key = key if key is not None else random_sector_key(shape, rng)
    data = data if data is not None else random_fields(rng, shape.nodes)
    encoded = encode(shape, key, data)
    partitions = tuple(partition_proof(shape, key, encoded, k)
                       for k in range(shape.partitions))
    return SnapUpdate(shape, encoded.comm_r_old, encoded.comm_r_new, encoded.comm_d_new,
                      tuple(encode_partition_proof(p) for p in partitions), partitions)
