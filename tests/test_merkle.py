"""Poseidon Merkle trees: native paths and the R1CS gadget, on random trees."""

from __future__ import annotations


import pytest

from snark.fields import FR_MODULUS, limbs_to_ints, random_fr
from snark.merkle import MerkleTree, merkle_root_gadget, root_from_path, verify_path
from snark.poseidon.hashing import hash2
from snark.r1cs import ONE, ConstraintSystem, UnsatisfiedConstraint

DEPTHS = range(1, 9)


def random_tree(depth: int, np_rng) -> MerkleTree:
    return MerkleTree(random_fr(1 << depth, np_rng))


def other_than(value: int, rng) -> int:
    return (value + 1 + rng.randrange(FR_MODULUS - 1)) % FR_MODULUS


def test_root_of_a_small_tree_is_the_nested_hash(rng):
    leaves = [rng.randrange(FR_MODULUS) for _ in range(4)]
    tree = MerkleTree(leaves)
    assert tree.depth == 2
    assert tree.root == hash2(hash2(leaves[0], leaves[1]), hash2(leaves[2], leaves[3]))


def test_limbs_and_ints_build_the_same_tree(np_rng):
    leaves = random_fr(8, np_rng)
    assert MerkleTree(leaves).root == MerkleTree(limbs_to_ints(leaves)).root


@pytest.mark.parametrize("depth", DEPTHS)
def test_paths_verify_and_tampering_fails(depth, rng, np_rng):
    tree = random_tree(depth, np_rng)
    index = rng.randrange(tree.num_leaves)
    leaf, path = tree.leaf(index), tree.path(index)
    assert len(path) == depth
    assert verify_path(leaf, index, path, tree.root)

    level = rng.randrange(depth)
    wrong_sibling = list(path)
    wrong_sibling[level] = other_than(path[level], rng)
    assert not verify_path(leaf, index, wrong_sibling, tree.root)
    assert not verify_path(other_than(leaf, rng), index, path, tree.root)
    assert not verify_path(leaf, index ^ (1 << level), path, tree.root)
    assert not verify_path(leaf, index, path, other_than(tree.root, rng))


def test_malformed_paths_raise(np_rng):
    tree = random_tree(3, np_rng)
    with pytest.raises(ValueError, match="out of range"):
        root_from_path(tree.leaf(0), 8, tree.path(0))
    with pytest.raises(ValueError, match="out of range"):
        tree.path(8)
    with pytest.raises(ValueError, match="reduced Fr element"):
        verify_path(FR_MODULUS, 0, tree.path(0), tree.root)


@pytest.mark.parametrize("leaves", [[], [1, 2, 3], [1, FR_MODULUS]])
def test_bad_leaves_are_rejected(leaves):
    with pytest.raises(ValueError):
        MerkleTree(leaves)


def synthesize_path(tree: MerkleTree, index: int, siblings: list[int],
                    check: bool = True) -> tuple[ConstraintSystem, dict[int, int]]:
    """Allocate leaf, boolean index bits and siblings; returns the cs and the root."""
    cs = ConstraintSystem(check=check)
    leaf = cs.alloc(tree.leaf(index))
    bits = []
    for k in range(tree.depth):
        bit = cs.alloc((index >> k) & 1)
        cs.enforce(bit, {ONE: 1, bit: -1}, {}, "boolean")
        bits.append(bit)
    sibling_vars = [cs.alloc(s) for s in siblings]
    return cs, merkle_root_gadget(cs, leaf, bits, sibling_vars)


@pytest.mark.parametrize("depth", DEPTHS)
def test_gadget_root_equals_native_root(depth, rng, np_rng):
    tree = random_tree(depth, np_rng)
    index = rng.randrange(tree.num_leaves)
    cs, root = synthesize_path(tree, index, tree.path(index))
    assert cs.eval(root) == tree.root
    assert len(cs.constraints) == depth * (1 + 1 + 240)  # boolean + swap + hash per level


def test_gadget_with_wrong_sibling_does_not_reach_the_root(rng, np_rng):
    tree = random_tree(4, np_rng)
    index = rng.randrange(tree.num_leaves)
    path = tree.path(index)
    level = rng.randrange(tree.depth)
    path[level] = other_than(path[level], rng)

    cs, root = synthesize_path(tree, index, path, check=False)
    assert cs.eval(root) != tree.root
    comm = cs.alloc_input(tree.root)
    cs.enforce(root, ONE, comm, "root")
    assert not cs.compile().is_satisfied(cs.witness())

    cs, root = synthesize_path(tree, index, tree.path(index), check=False)
    comm = cs.alloc_input(tree.root)
    cs.enforce(root, ONE, comm, "root")
    assert cs.compile().is_satisfied(cs.witness())


def test_gadget_rejects_mismatched_bits_and_siblings():
    cs = ConstraintSystem(check=True)
    with pytest.raises(ValueError, match="index bits"):
        merkle_root_gadget(cs, cs.alloc(1), [cs.alloc(0)], [])


def test_checked_synthesis_stops_at_a_wrong_root(rng, np_rng):
    tree = random_tree(2, np_rng)
    cs, root = synthesize_path(tree, 1, tree.path(1))
    comm = cs.alloc_input(other_than(tree.root, rng))
    with pytest.raises(UnsatisfiedConstraint, match="root"):
        cs.enforce(root, ONE, comm, "root")
