"""Binary Poseidon Merkle trees over Fr: native trees and paths, and the R1CS gadget.

Leaves are field elements themselves and an inner node is ``hash2(left, right)``. A path
lists the siblings from the leaf level upwards; bit k of the leaf index (least significant
first) says whether the node at level k is a right child (1) or a left child (0).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from snark.fields import FR_MODULUS
from snark.poseidon.hashing import hash2, hash2_many
from snark.poseidon.gadget import poseidon_hash2_gadget
from snark.poseidon.hashing import fr_words
from snark.r1cs import LC, ConstraintSystem, as_lc, lc_add


def _leaf_words(leaves: np.ndarray | Sequence[int]) -> np.ndarray:
    words = fr_words(leaves, "leaves")
    n = len(words)
    if n == 0 or n & (n - 1):
        raise ValueError(f"a Merkle tree needs a power-of-two number of leaves, got {n}")
    return words


class MerkleTree:
    """All levels of the tree, leaves first, each built with one batched hash per level."""

    def __init__(self, leaves: np.ndarray | Sequence[int]) -> None:
        """``leaves``: Fr limbs ``(n, 4)`` or ints; n must be a power of two."""
        level = _leaf_words(leaves)
        self.levels: list[np.ndarray] = [level]
        while len(level) > 1:
            level = hash2_many(level[0::2], level[1::2])
            self.levels.append(level)

    @property
    def depth(self) -> int:
        return len(self.levels) - 1

    @property
    def num_leaves(self) -> int:
        return len(self.levels[0])

    @property
    def root(self) -> int:
        return int(self.levels[-1][0])

    def leaf(self, index: int) -> int:
        self._check_index(index)
        return int(self.levels[0][index])

    def path(self, index: int) -> list[int]:
        """Siblings of the leaf at ``index``, from the leaf level up to below the root."""
        self._check_index(index)
        return [int(level[(index >> k) ^ 1]) for k, level in enumerate(self.levels[:-1])]

    def _check_index(self, index: int) -> None:
        if not 0 <= index < self.num_leaves:
            raise ValueError(f"leaf index {index} is out of range for {self.num_leaves} leaves")


def root_from_path(leaf: int, index: int, siblings: Sequence[int]) -> int:
    """The root that ``leaf`` at ``index`` with these siblings hashes up to."""
    if not 0 <= index < 1 << len(siblings):
        raise ValueError(f"leaf index {index} is out of range for a path of "
                         f"{len(siblings)} siblings")
    node = leaf
    for k, sibling in enumerate(siblings):
        node = hash2(sibling, node) if (index >> k) & 1 else hash2(node, sibling)
    return node


def verify_path(leaf: int, index: int, siblings: Sequence[int], root: int) -> bool:
    """Whether the path proves ``leaf`` at ``index`` under ``root``.

    A malformed path (index out of range, values that are not reduced field elements)
    raises ``ValueError``; a well-formed path that leads elsewhere returns False.
    """
    return root_from_path(leaf, index, siblings) == root


def conditional_swap_gadget(cs: ConstraintSystem, bit: int | LC, cur: int | LC,
                            sibling: int | LC) -> tuple[LC, LC]:
    """``(left, right)`` = ``(sibling, cur)`` if bit else ``(cur, sibling)``; 1 constraint.

    With ``t = bit·(sibling − cur)``: left = cur + t and right = sibling − t. ``bit`` must
    already be constrained boolean by the caller.
    """
    cur, sibling = as_lc(cur), as_lc(sibling)
    delta = lc_add(sibling, cur, scale=-1)
    t_value = cs.eval(bit) * cs.eval(delta) % FR_MODULUS
    t = cs.alloc(t_value)
    cs.enforce(bit, delta, t, "merkle swap")
    return lc_add(cur, {t: 1}), lc_add(sibling, {t: 1}, scale=-1)


def merkle_root_gadget(cs: ConstraintSystem, leaf: int | LC, index_bits: Sequence[int | LC],
                       siblings: Sequence[int | LC]) -> LC:
    """Constrain the root reached from ``leaf``; one swap and one hash (241 constraints)
    per level. ``index_bits`` are boolean variables, least significant first. Returns the
    root as a linear combination."""
    if len(index_bits) != len(siblings):
        raise ValueError(f"{len(index_bits)} index bits for a path of {len(siblings)} siblings")
    node = as_lc(leaf)
    for bit, sibling in zip(index_bits, siblings):
        left, right = conditional_swap_gadget(cs, bit, node, sibling)
        node = poseidon_hash2_gadget(cs, left, right)
    return node
