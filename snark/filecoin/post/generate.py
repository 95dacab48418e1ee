"""Test PoSt sectors and their vanilla proofs, as ``generate_single_vanilla_proof`` makes
them (fixtures for tests and benchmarks, never production sectors).

A PoSt reads a sector's tree R_last (the replica's Poseidon tree) and the root of its tree C,
nothing else of the sealing, so a test sector is random fr32 replica nodes with their whole
tree R_last (2 KiB, 8 MiB: ``whole_sector``) and a random comm_c; comm_r =
Poseidon2(comm_c, comm_r_last). ``sparse_proofs`` makes sectors of any size, 32 GiB and
64 GiB included, from what the challenges touch: the challenged leaves and their paths
through a tree whose other nodes are random (``snark.filecoin.trees.SparseTree``), so a full
2,349-sector partition can be built.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.filecoin.c1 import MerklePath, PathLevel
from snark.filecoin.domain import DOMAIN_BYTES
from snark.filecoin.post.challenges import sector_challenges
from snark.filecoin.post.checks import comm_r_of
from snark.filecoin.post.registered_proofs import PostProof
from snark.filecoin.post.vanilla import SectorProofs
from snark.filecoin.seal import random_fields
from snark.filecoin.trees import SparseTree, build_levels, open_paths, poseidon_nodes


@dataclass(frozen=True)
class TestSector:
    """A whole test sector: its id, comm_c and every level of its tree R_last."""

    sector_id: int
    comm_c: np.ndarray        # (32,)
    levels: list[np.ndarray]  # leaves first, root last

    @property
    def comm_r_last(self) -> np.ndarray:
        return self.levels[-1][0]

    def comm_r(self) -> bytes:
        return comm_r_of(self.comm_c[None], self.comm_r_last[None])[0].tobytes()


def whole_sector(proof: PostProof, rng: np.random.Generator, sector_id: int) -> TestSector:
    replica = random_fields(rng, proof.nodes)
    levels = build_levels(replica, proof.shape.level_arities(proof.nodes), poseidon_nodes)
    return TestSector(sector_id, random_fields(rng, 1)[0], levels)


def _stack(paths: list[MerklePath]) -> MerklePath:
    first = paths[0]
    return MerklePath(first.shape, np.stack([p.leaf for p in paths]),
                      np.stack([p.root for p in paths]), tuple(
                          PathLevel(level.arity, np.stack([p.levels[k].siblings for p in paths]),
                                    np.stack([p.levels[k].index for p in paths]))
                          for k, level in enumerate(first.levels)))


def _proofs(proof: PostProof, sector_ids: list[int], comm_c: np.ndarray,
            paths: list[MerklePath]) -> SectorProofs:
    stacked = _stack(paths)
    comm_r_last = stacked.root[:, 0]
    return SectorProofs(proof, list(sector_ids), comm_r_of(comm_c, comm_r_last), comm_c,
                        comm_r_last.copy(), stacked)


def vanilla_proofs(proof: PostProof, sectors: list[TestSector], randomness: bytes,
                   partition_index: int = 0) -> SectorProofs:
    """The vanilla proofs of whole ``sectors`` in this order, as partition
    ``partition_index`` challenges them."""
    arities = proof.shape.level_arities(proof.nodes)
    paths = [open_paths(sector.levels, arities,
                        sector_challenges(proof, randomness, sector.sector_id,
                                          partition_index * proof.sector_count + i),
                        proof.shape.name)
             for i, sector in enumerate(sectors)]
    return _proofs(proof, [s.sector_id for s in sectors],
                   np.stack([s.comm_c for s in sectors]), paths)


def sparse_proofs(proof: PostProof, rng: np.random.Generator, sector_ids: list[int],
                  randomness: bytes, partition_index: int = 0) -> SectorProofs:
    """Vanilla proofs of sparse test sectors of any size (see the module docstring)."""
    arities = proof.shape.level_arities(proof.nodes)
    fill = lambda count: random_fields(rng, count)  # noqa: E731
    paths = []
    for i, sector_id in enumerate(sector_ids):
        leaves = sector_challenges(proof, randomness, sector_id,
                                   partition_index * proof.sector_count + i)
        known = np.unique(leaves)
        tree = SparseTree(known, fill(len(known)), arities, poseidon_nodes, fill)
        paths.append(tree.open(leaves, proof.shape.name))
    comm_c = random_fields(rng, len(sector_ids)).reshape(-1, DOMAIN_BYTES)
    return _proofs(proof, sector_ids, comm_c, paths)
