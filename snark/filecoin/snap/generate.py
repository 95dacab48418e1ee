"""Test updates: new data encoded into a test sector as rust-fil-proofs encodes it, and the
vanilla proofs Curio would send (not for production sectors).

A sector key is what an update starts from: comm_c and the old replica (tree R_last's
leaves, the sealed CC sector). ``encode`` is ``EmptySectorUpdate::encode_into``: tree D
over the new data (comm_d_new), phi = H_gen(comm_d_new, comm_r_old), every replica node
``old + data·rho(its high bits)``, tree R over the result (comm_r_new = Poseidon2(comm_c,
root)). ``generate_update`` then opens each partition's challenges
(``EmptySectorUpdate::prove_inner``) and writes the partitions in bincode.

Whole sectors (every node hashed) stop at 512 MiB. Above, ``generate_sparse_update`` gives
the old replica and the data as runs of equal nodes (``run_length_trees``), each run inside
one run of rho (``nodes >> h`` nodes of one high value), so the new replica is runs too and
the three trees cost their runs, not their nodes: a 32 GiB update in seconds. Its trees are
whole trees over the expanded runs, so everything derived from them (comm_r_new, hence the
challenges) is what a whole sector with those nodes gives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from snark.filecoin.c1 import MerklePath
from snark.filecoin.domain import DOMAIN_BYTES, from_int, from_limbs, to_int, to_limbs
from snark.filecoin.errors import FilecoinError
from snark.filecoin.run_length_trees import RunLengthTree, Runs
from snark.filecoin.seal import random_fields
from snark.filecoin.snap import randomness
from snark.filecoin.snap.bincode import encode_partition_proof
from snark.filecoin.snap.checks import comm_r
from snark.filecoin.snap.proofs import PartitionProof
from snark.filecoin.snap.shape import SnapShape
from snark.filecoin.snap.update import SnapUpdate
from snark.filecoin.trees import Hasher, WholeTree, poseidon_nodes, sha256_nodes

#: Whole sectors only: 8 MiB (2^18 nodes) takes seconds, 512 MiB (2^24) minutes (its
#: trees R hash 2 × 2.4 M Poseidon nodes; 32 GiB would be 64 times that).
MAX_WHOLE_NODES = 1 << 24
#: A sparse update's runs: 2^18 nodes (8 MiB), a whole subtree of both tree D and tree R
#: (8^6), or a run of rho where that is shorter. 4,096 runs at 32 GiB.
RUN_NODES = 1 << 18


class Tree(Protocol):
    """What an update needs of a tree: ``WholeTree`` and ``RunLengthTree``."""

    @property
    def root(self) -> np.ndarray: ...

    def nodes(self, level: int, positions: np.ndarray) -> np.ndarray: ...

    def open(self, nodes: np.ndarray, shape: str) -> MerklePath: ...


#: Builds a tree over leaf rows: ``(rows, arities, hasher)``.
Planter = Callable[[np.ndarray, list[int], Hasher], Tree]


@dataclass(frozen=True)
class SectorKey:
    comm_c: np.ndarray    # uint8 (32,)
    replica: np.ndarray   # uint8 (nodes, 32)


@dataclass(frozen=True)
class RunSectorKey:
    """A sector key whose old replica is runs of equal nodes (a sparse update's)."""

    comm_c: np.ndarray    # uint8 (32,)
    replica: Runs


def random_sector_key(shape: SnapShape, rng: np.random.Generator) -> SectorKey:
    return SectorKey(random_fields(rng, 1)[0], random_fields(rng, shape.nodes))


def run_starts(shape: SnapShape) -> np.ndarray:
    """Where a sparse update's runs start: every ``RUN_NODES`` nodes, or every run of rho
    where that is shorter."""
    step = min(RUN_NODES, shape.nodes >> shape.h)
    return np.arange(0, shape.nodes, step, dtype=np.int64)


def random_run_key(shape: SnapShape, rng: np.random.Generator) -> RunSectorKey:
    starts = run_starts(shape)
    return RunSectorKey(random_fields(rng, 1)[0],
                        Runs(starts, random_fields(rng, len(starts)), shape.nodes))


@dataclass(frozen=True)
class Encoded:
    comm_c: np.ndarray
    tree_d: Tree
    tree_r_old: Tree
    tree_r_new: Tree
    comm_r_old: bytes
    comm_r_new: bytes
    comm_d_new: bytes


def _encode(shape: SnapShape, comm_c: np.ndarray, old: np.ndarray, data: np.ndarray,
            positions: np.ndarray, plant: Planter) -> Encoded:
    """The encoding over rows of the old replica and the data that start at ``positions``
    (every node, or runs of equal nodes); ``plant`` builds a tree over such rows."""
    arities = shape.tree_arities()
    tree_d = plant(data, [2] * shape.challenge_bits, sha256_nodes)
    tree_r_old = plant(old, arities, poseidon_nodes)
    comm_c_int = to_int(comm_c)
    comm_r_old = comm_r(comm_c_int, to_int(tree_r_old.root))
    comm_d_new = tree_d.root.tobytes()
    phi = randomness.phi(to_int(comm_d_new), comm_r_old)
    from snark import native  # the native engine: not for producers' imports

    new = from_limbs(native.fr_add(to_limbs(old), native.fr_mul(
        to_limbs(data), rho_limbs(shape, phi, positions)))).reshape(-1, DOMAIN_BYTES)
    tree_r_new = plant(new, arities, poseidon_nodes)
    comm_r_new = comm_r(comm_c_int, to_int(tree_r_new.root))
    return Encoded(comm_c, tree_d, tree_r_old, tree_r_new, from_int(comm_r_old),
                   from_int(comm_r_new), comm_d_new)


def encode(shape: SnapShape, key: SectorKey, data: np.ndarray) -> Encoded:
    """A whole sector's encoding: every node hashed."""
    if shape.nodes > MAX_WHOLE_NODES:
        raise FilecoinError(f"sector_size: {shape.size_name} is too large for a whole test "
                            "sector (512 MiB at most)")
    return _encode(shape, key.comm_c, key.replica, data, np.arange(shape.nodes),
                   WholeTree.build)


def encode_runs(shape: SnapShape, key: RunSectorKey, data: Runs) -> Encoded:
    """The encoding of a sector whose old replica and data are runs, the same runs for both,
    each inside one run of rho."""
    runs = key.replica
    if runs.length != shape.nodes or data.length != shape.nodes \
            or not np.array_equal(runs.starts, data.starts):
        raise ValueError(f"the replica and the data must be the same runs of {shape.nodes} "
                         "nodes")
    crossing = np.flatnonzero(randomness.high_bits(shape, runs.starts)
                              != randomness.high_bits(shape, runs.ends - 1))
    if crossing.size:
        raise ValueError(f"run {crossing[0]} crosses a boundary of rho's runs "
                         f"({shape.nodes >> shape.h} nodes)")

    def plant(rows: np.ndarray, arities: list[int], hasher: Hasher) -> Tree:
        return RunLengthTree(Runs(runs.starts, rows, shape.nodes), arities, hasher)

    return _encode(shape, key.comm_c, runs.values, data.values, runs.starts, plant)


def rho_limbs(shape: SnapShape, phi: int, positions: np.ndarray) -> np.ndarray:
    """rho at each of ``positions`` as standard-form limbs ``(n, 4)``: one hash per distinct
    high value."""
    distinct, inverse = np.unique(randomness.high_bits(shape, positions), return_inverse=True)
    return randomness.rho_limbs(phi, distinct)[inverse.reshape(-1)]


def partition_proof(shape: SnapShape, encoded: Encoded, k: int) -> PartitionProof:
    nodes = randomness.challenges(shape, to_int(encoded.comm_r_new), k)
    tree = shape.tree.name
    apex = np.arange(k * shape.apex_leaves, (k + 1) * shape.apex_leaves)
    return PartitionProof(
        encoded.comm_c.copy(), encoded.tree_d.nodes(shape.below_apex, apex).copy(),
        encoded.tree_r_old.open(nodes, tree), encoded.tree_d.open(nodes, "Single"),
        encoded.tree_r_new.open(nodes, tree))


def update_of(shape: SnapShape, encoded: Encoded) -> SnapUpdate:
    """Every partition's proof of an encoded sector, as Curio sends them."""
    partitions = tuple(partition_proof(shape, encoded, k) for k in range(shape.partitions))
    return SnapUpdate(shape, encoded.comm_r_old, encoded.comm_r_new, encoded.comm_d_new,
                      tuple(encode_partition_proof(p) for p in partitions), partitions)


def generate_update(shape: SnapShape, rng: np.random.Generator, *,
                    key: SectorKey | None = None, data: np.ndarray | None = None) -> SnapUpdate:
    """An update of a whole test sector (random sector key and fr32 data unless given)."""
    key = key if key is not None else random_sector_key(shape, rng)
    data = data if data is not None else random_fields(rng, shape.nodes)
    return update_of(shape, encode(shape, key, data))


def generate_sparse_update(shape: SnapShape, rng: np.random.Generator, *,
                           key: RunSectorKey | None = None, data: Runs | None = None
                           ) -> SnapUpdate:
    """An update of a test sector of runs (``run_starts`` with random values unless given;
    data given must be the key's runs)."""
    key = key if key is not None else random_run_key(shape, rng)
    runs = key.replica
    data = data if data is not None else Runs(runs.starts, random_fields(rng, len(runs)),
                                              shape.nodes)
    return update_of(shape, encode_runs(shape, key, data))


def generate_any_update(shape: SnapShape, rng: np.random.Generator) -> SnapUpdate:
    """A test update of any size: a whole sector up to 512 MiB, runs above (``is_sparse``)."""
    return (generate_sparse_update if is_sparse(shape) else generate_update)(shape, rng)


def is_sparse(shape: SnapShape) -> bool:
    return shape.nodes > MAX_WHOLE_NODES
