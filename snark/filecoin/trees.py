"""SDR's Merkle trees, their paths, and roots recomputed from paths.

* Tree D is binary over the data nodes, a node SHA-256(left ‖ right) trimmed
  (``rust-fil-proofs:filecoin-hashers/src/sha256.rs``).
* Trees C and R_last are neptune Poseidon trees: a node is the Poseidon hash of its children,
  of the level's arity (``filecoin-hashers/src/poseidon.rs`` ``multi_node``). Their
  ``Single``/``Sub``/``Top`` shapes are mixed-radix trees over consecutive nodes: base levels
  of arity 8, then one sub-tree level, then one top-tree level
  (``storage-proofs-core/src/merkle/proof.rs``), so one builder serves all three.
* Tree C's leaves are column hashes: Poseidon of a node's labels in layers 1 … L (arity L:
  2 or 11, ``storage-proofs-porep/src/stacked/vanilla/hash.rs``); tree R_last's leaves are
  the replica nodes.

A path element lists the siblings in order with the node taken out; ``index`` is where it
goes back (``InclusionPath::root``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from snark.filecoin.c1 import MerklePath, PathLevel
from snark.filecoin.domain import DOMAIN_BYTES, TRIM_MASK, from_limbs, to_limbs
from snark.poseidon.neptune import poseidon_many

#: ``(n, arity, 32)`` children → ``(n, 32)`` parents.
Hasher = Callable[[np.ndarray], np.ndarray]


def sha256_nodes(children: np.ndarray) -> np.ndarray:
    """SHA-256 of each row of children, trimmed (tree D's node hash)."""
    flat = np.ascontiguousarray(children, dtype=np.uint8).reshape(len(children), -1)
    out = np.frombuffer(b"".join([hashlib.sha256(row.data).digest() for row in flat]),
                        dtype=np.uint8).reshape(-1, DOMAIN_BYTES).copy()
    out[:, -1] &= TRIM_MASK
    return out


def poseidon_nodes(children: np.ndarray) -> np.ndarray:
    """Neptune's Poseidon of each row of children (trees C and R_last, column hashes)."""
    arity = children.shape[1]
    return from_limbs(poseidon_many(to_limbs(children), arity)).reshape(-1, DOMAIN_BYTES)


def column_hashes(rows: np.ndarray) -> np.ndarray:
    """Tree C leaves from columns ``(..., layers, 32)`` → ``(..., 32)``."""
    flat = rows.reshape(-1, *rows.shape[-2:])
    return poseidon_nodes(flat).reshape(*rows.shape[:-2], DOMAIN_BYTES)


def build_levels(leaves: np.ndarray, arities: Sequence[int], hasher: Hasher,
                 on_level: Callable[[int], None] | None = None) -> list[np.ndarray]:
    """Every level of the tree, leaves first, root last (``(1, 32)``)."""
    levels = [np.ascontiguousarray(leaves, dtype=np.uint8)]
    for k, arity in enumerate(arities):
        if on_level:
            on_level(k)
        below = levels[-1]
        if len(below) % arity:
            raise ValueError(f"level {k} has {len(below)} nodes, not a multiple of {arity}")
        levels.append(hasher(below.reshape(-1, arity, DOMAIN_BYTES)))
    return levels


#: A tree's nodes by level (0: the leaves) and position: ``(level, positions)`` →
#: ``(*positions.shape, 32)``. Whole, sparse and run-length trees open paths through it.
NodeLookup = Callable[[int, np.ndarray], np.ndarray]


def open_nodes(lookup: NodeLookup, arities: Sequence[int], nodes: np.ndarray,
               shape: str) -> MerklePath:
    """Paths of the leaves ``nodes`` (any shape of int array) through the tree ``lookup``
    reads."""
    nodes = np.asarray(nodes, dtype=np.int64)
    position = nodes.reshape(-1)
    out = []
    for level, arity in enumerate(arities):
        digit, group = position % arity, position // arity
        slots = np.arange(arity - 1)
        taken = group[:, None] * arity + slots + (slots >= digit[:, None])
        siblings = lookup(level, taken).reshape(*nodes.shape, arity - 1, DOMAIN_BYTES)
        out.append(PathLevel(arity, siblings, digit.reshape(nodes.shape)))
        position = group
    root = lookup(len(arities), np.zeros(1, dtype=np.int64))[0]
    roots = np.broadcast_to(root, (*nodes.shape, DOMAIN_BYTES)).copy()
    return MerklePath(shape, lookup(0, nodes), roots, tuple(out))


def open_paths(levels: list[np.ndarray], arities: Sequence[int], nodes: np.ndarray,
               shape: str) -> MerklePath:
    """Paths of the leaves ``nodes`` through a built tree (``build_levels``)."""
    return open_nodes(lambda level, at: levels[level][at], arities, nodes, shape)


@dataclass(frozen=True)
class WholeTree:
    """Every node of a tree (``build_levels``), with the ``root``, ``nodes`` and ``open`` that
    sparse and run-length trees have."""

    levels: list[np.ndarray]
    arities: tuple[int, ...]

    @classmethod
    def build(cls, leaves: np.ndarray, arities: Sequence[int], hasher: Hasher) -> "WholeTree":
        return cls(build_levels(leaves, arities, hasher), tuple(arities))

    @property
    def root(self) -> np.ndarray:
        return self.levels[-1][0]

    def nodes(self, level: int, positions: np.ndarray) -> np.ndarray:
        return self.levels[level][positions]

    def open(self, nodes: np.ndarray, shape: str) -> MerklePath:
        return open_nodes(self.nodes, self.arities, nodes, shape)


def with_node(node: np.ndarray, level: PathLevel) -> np.ndarray:
    """The children of each path node's parent: siblings with the node put back at its index
    (``(n, 32)`` node, level with ``(n, arity-1, 32)`` siblings → ``(n, arity, 32)``)."""
    n, arity = len(node), level.arity
    digit = level.index.reshape(n)
    siblings = level.siblings.reshape(n, arity - 1, DOMAIN_BYTES)
    slots = np.arange(arity)
    pick = np.clip(slots - (slots > digit[:, None]), 0, max(arity - 2, 0))
    children = siblings[np.arange(n)[:, None], pick]
    children[slots == digit[:, None]] = node
    return children


def path_roots(path: MerklePath, hasher: Hasher) -> np.ndarray:
    """The root each path hashes to, ``(..., 32)``; equal children sets are hashed once
    (paths into one tree share their upper nodes)."""
    lead = path.leaf.shape[:-1]
    node = path.leaf.reshape(-1, DOMAIN_BYTES)
    for level in path.levels:
        children = with_node(node, level)
        rows = np.ascontiguousarray(children).reshape(len(children), -1)
        keys = rows.view(np.dtype((np.void, rows.shape[1]))).reshape(-1)
        unique, inverse = np.unique(keys, return_inverse=True)
        distinct = unique.view(np.uint8).reshape(len(unique), level.arity, DOMAIN_BYTES)
        node = hasher(distinct)[inverse.reshape(-1)]
    return node.reshape(*lead, DOMAIN_BYTES)


class SparseTree:
    """The part of a tree that paths to a few leaves touch, the rest of it made up.

    Only the known leaves' ancestors are computed; every other child of a node on their paths
    is drawn from ``filler`` (a stand-in for a subtree nobody opens). Paths opened here are
    valid paths into a tree with this root: what a sparse test sector needs."""

    def __init__(self, positions: np.ndarray, leaves: np.ndarray, arities: Sequence[int],
                 hasher: Hasher, filler: Callable[[int], np.ndarray]) -> None:
        positions = np.asarray(positions, dtype=np.int64)
        order = np.argsort(positions)
        positions, values = positions[order], np.asarray(leaves, dtype=np.uint8)[order]
        if len(np.unique(positions)) != len(positions):
            raise ValueError("a sparse tree's leaf positions must be distinct")
        self.arities = tuple(arities)
        self.known = positions
        #: per level: the groups of siblings on the paths and their children (G, arity, 32)
        self.groups: list[tuple[np.ndarray, np.ndarray]] = []
        for arity in self.arities:
            groups, slot = np.unique(positions // arity, return_inverse=True)
            children = filler(len(groups) * arity).reshape(len(groups), arity, DOMAIN_BYTES)
            children[slot.reshape(-1), positions % arity] = values
            self.groups.append((groups, children))
            positions, values = groups, hasher(children)
        self.root = values[0]

    def nodes(self, level: int, positions: np.ndarray) -> np.ndarray:
        """Nodes of the groups on the paths (a leaf's siblings, their parents' siblings, …)."""
        if level == len(self.arities):
            return np.broadcast_to(self.root, (*np.shape(positions), DOMAIN_BYTES))
        groups, children = self.groups[level]
        arity = self.arities[level]
        at = np.searchsorted(groups, positions // arity)
        return children[at, positions % arity]

    def open(self, nodes: np.ndarray, shape: str) -> MerklePath:
        known = self.known
        position = np.asarray(nodes, dtype=np.int64).reshape(-1)
        at = np.searchsorted(known, position)
        if not (known[np.minimum(at, len(known) - 1)] == position).all():
            raise ValueError("a sparse tree opens only the leaves it was built with")
        return open_nodes(self.nodes, self.arities, nodes, shape)
