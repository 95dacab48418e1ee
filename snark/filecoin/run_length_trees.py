"""Merkle trees over leaves given as runs of equal values: a 32 GiB test sector's trees for
the cost of its runs, not its nodes.

A level is run-length encoded (``Runs``: where each run starts, its value). A group of
``arity`` children wholly inside one run has the same children as every other such group of
that run, so one hash gives the parent of all of them: a run of the parent level. Only the
groups a run begins inside of (boundary groups) are hashed one by one. So every level stays
run-length encoded, and a tree costs about runs × levels hashes. Its nodes are the nodes of
the whole tree over the expanded leaves, so its paths (``open``, as ``trees.open_paths``
writes them) are valid paths into that tree: what a SnapDeals test update of a sector too
large to hash node by node needs, since its challenges come from the root of the whole tree
(unlike ``trees.SparseTree``, whose made-up nodes fit PoRep's challenges drawn before the
tree).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from snark.filecoin.c1 import MerklePath
from snark.filecoin.domain import DOMAIN_BYTES
from snark.filecoin.trees import Hasher, open_nodes


class Runs:
    """``length`` nodes as runs: run i holds ``values[i]`` from ``starts[i]`` up to the next
    start (the last up to ``length``)."""

    def __init__(self, starts: np.ndarray, values: np.ndarray, length: int) -> None:
        starts = np.asarray(starts, dtype=np.int64)
        if not len(starts) or starts[0] != 0 or (np.diff(starts) <= 0).any() \
                or starts[-1] >= length:
            raise ValueError(f"runs must start at 0 and rise strictly below {length}")
        values = np.ascontiguousarray(values, dtype=np.uint8)
        if values.shape != (len(starts), DOMAIN_BYTES):
            raise ValueError(f"{len(starts)} runs need values ({len(starts)}, {DOMAIN_BYTES}), "
                             f"got {values.shape}")
        self.starts, self.values, self.length = starts, values, length

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def ends(self) -> np.ndarray:
        return np.append(self.starts[1:], self.length)

    def at(self, positions: np.ndarray) -> np.ndarray:
        """The nodes at ``positions`` (any shape) → ``(*positions.shape, 32)``."""
        positions = np.asarray(positions, dtype=np.int64)
        if positions.size and (positions.min() < 0 or positions.max() >= self.length):
            raise ValueError(f"a position is outside the {self.length} nodes")
        return self.values[np.searchsorted(self.starts, positions, side="right") - 1]

    def expand(self) -> np.ndarray:
        """Every node, ``(length, 32)``."""
        return np.repeat(self.values, self.ends - self.starts, axis=0)


def parent_runs(children: Runs, arity: int, hasher: Hasher) -> Runs:
    """The level above ``children``: one hash per run for its inner groups, one per boundary
    group; one ``hasher`` call for the level."""
    if children.length % arity:
        raise ValueError(f"a level of {children.length} nodes is not a multiple of {arity}")
    starts = children.starts
    first, past = -(-starts // arity), children.ends // arity  # the groups inside each run
    inner = first < past
    boundary = np.unique(starts[starts % arity != 0] // arity)
    rows = np.concatenate([
        np.repeat(children.values[inner][:, None], arity, axis=1),
        children.at(boundary[:, None] * arity + np.arange(arity))])
    parent_starts = np.concatenate([first[inner], boundary])
    order = np.argsort(parent_starts)
    return Runs(parent_starts[order], hasher(rows)[order], children.length // arity)


class RunLengthTree:
    """Every level of the tree over ``leaves`` as runs, leaves first, the root's last."""

    def __init__(self, leaves: Runs, arities: Sequence[int], hasher: Hasher) -> None:
        self.arities = tuple(arities)
        self.levels = [leaves]
        for arity in self.arities:
            self.levels.append(parent_runs(self.levels[-1], arity, hasher))
        if self.levels[-1].length != 1:
            raise ValueError(f"arities {self.arities} do not reduce {leaves.length} leaves "
                             "to one root")

    @property
    def root(self) -> np.ndarray:
        return self.levels[-1].values[0]

    @property
    def hashes(self) -> int:
        """Hashes the tree took: one per run above the leaves."""
        return sum(len(level) for level in self.levels[1:])

    def nodes(self, level: int, positions: np.ndarray) -> np.ndarray:
        return self.levels[level].at(positions)

    def open(self, nodes: np.ndarray, shape: str) -> MerklePath:
        return open_nodes(self.nodes, self.arities, nodes, shape)
