"""Run-length trees and sparse SnapDeals test updates (``snark.filecoin.run_length_trees``,
``generate.generate_sparse_update``): a run-length tree is the whole tree over its expanded
leaves, level by level and path by path, for every arity pattern tree D and tree R use; a
sparse update is the whole-sector update of its expanded sector key and data, byte for byte;
and a 32 GiB update, the point of them, is made in seconds and passes every check, a tampered
sibling refused by name."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

from snark.filecoin.errors import FilecoinError
from snark.filecoin.registered_proofs import TreeShape
from snark.filecoin.run_length_trees import RunLengthTree, Runs
from snark.filecoin.seal import random_fields
from snark.filecoin.snap import generate
from snark.filecoin.snap.checks import check_partition, check_update
from snark.filecoin.snap.shape import SnapShape
from snark.filecoin.trees import build_levels, open_paths, poseidon_nodes, sha256_nodes

#: (hasher, level arities): tree D's binary tree, and tree R's 8-0-0, 8-2-0, 8-4-0, 8-8-0
#: and 8-8-2 at small sizes.
PATTERNS = [pytest.param(sha256_nodes, (2,) * 7, id="binary"),
            *(pytest.param(poseidon_nodes, TreeShape(*shape).level_arities(nodes),
                           id="-".join(map(str, shape)))
              for shape, nodes in [((8, 0, 0), 512), ((8, 2, 0), 128), ((8, 4, 0), 256),
                                   ((8, 8, 0), 4096), ((8, 8, 2), 1024)])]


def same_path(got, expected) -> None:
    assert got.shape == expected.shape
    assert np.array_equal(got.leaf, expected.leaf) and np.array_equal(got.root, expected.root)
    assert len(got.levels) == len(expected.levels)
    for mine, theirs in zip(got.levels, expected.levels):
        assert mine.arity == theirs.arity
        assert np.array_equal(mine.siblings, theirs.siblings)
        assert np.array_equal(mine.index, theirs.index)


def random_starts(count: int, nodes: int, rng: np.random.Generator,
                  must: np.ndarray | None = None) -> np.ndarray:
    """``count`` random run starts (0 and ``must`` among them), not aligned to anything."""
    drawn = rng.choice(np.arange(1, nodes), size=count, replace=False)
    return np.union1d(np.concatenate([[0], drawn]), must if must is not None else [])


def same_as_whole(tree: RunLengthTree, leaves: np.ndarray, arities, hasher,
                  rng: np.random.Generator) -> list[np.ndarray]:
    whole = build_levels(leaves, arities, hasher)
    for level, expected in zip(tree.levels, whole):
        assert np.array_equal(level.expand(), expected)
    assert np.array_equal(tree.root, whole[-1][0])
    nodes = rng.integers(0, len(leaves), (3, 5))
    same_path(tree.open(nodes, "Single"), open_paths(whole, arities, nodes, "Single"))
    return whole


# -- run-length trees ------------------------------------------------------------------------
@pytest.mark.parametrize("hasher, arities", PATTERNS)
def test_runs_of_one_node_are_the_whole_tree(hasher, arities, np_rng):
    nodes = int(np.prod(arities))
    leaves = random_fields(np_rng, nodes)
    tree = RunLengthTree(Runs(np.arange(nodes), leaves, nodes), arities, hasher)
    whole = same_as_whole(tree, leaves, arities, hasher, np_rng)
    assert tree.hashes == sum(len(level) for level in whole[1:])


@pytest.mark.parametrize("hasher, arities", PATTERNS)
def test_longer_runs_give_the_whole_trees_nodes_and_paths(hasher, arities, np_rng):
    """Runs that begin anywhere: groups inside a run hashed once, boundary groups each."""
    nodes = int(np.prod(arities))
    starts = random_starts(int(np_rng.integers(1, nodes // 4)), nodes, np_rng)
    runs = Runs(starts, random_fields(np_rng, len(starts)), nodes)
    tree = RunLengthTree(runs, arities, hasher)
    same_as_whole(tree, runs.expand(), arities, hasher, np_rng)


def test_aligned_runs_cost_runs_times_levels(np_rng):
    """Runs of 2^s aligned in a binary tree of 2^m leaves: s hashes per run below, the
    2^(m-s)-leaf tree above them: runs·s + runs − 1."""
    m, s = 12, 5
    runs = 1 << (m - s)
    leaves = Runs(np.arange(0, 1 << m, 1 << s), random_fields(np_rng, runs), 1 << m)
    tree = RunLengthTree(leaves, (2,) * m, sha256_nodes)
    assert tree.hashes == runs * s + runs - 1
    assert np.array_equal(tree.root, build_levels(leaves.expand(), (2,) * m,
                                                  sha256_nodes)[-1][0])


def test_malformed_runs_are_refused(np_rng):
    values = random_fields(np_rng, 2)
    for starts, match in [([1, 3], "start at 0"), ([0, 0], "rise strictly"),
                          ([0, 8], "below 8")]:
        with pytest.raises(ValueError, match=match):
            Runs(np.array(starts), values, 8)
    with pytest.raises(ValueError, match="need values"):
        Runs(np.array([0]), values, 8)
    with pytest.raises(ValueError, match="do not reduce"):
        RunLengthTree(Runs(np.array([0, 3]), values, 8), (2, 2), sha256_nodes)
    with pytest.raises(ValueError, match="outside"):
        Runs(np.array([0, 3]), values, 8).at(np.array([8]))


# -- sparse updates ----------------------------------------------------------------------------
def rho_runs(shape: SnapShape) -> np.ndarray:
    return np.arange(0, shape.nodes, shape.nodes >> shape.h)


def same_as_whole_update(shape: SnapShape, key: generate.RunSectorKey,
                         data: Runs, np_rng: np.random.Generator):
    sparse = generate.generate_sparse_update(shape, np_rng, key=key, data=data)
    check_update(sparse)
    whole = generate.generate_update(
        shape, np_rng, key=generate.SectorKey(key.comm_c, key.replica.expand()),
        data=data.expand())
    assert (sparse.comm_r_old, sparse.comm_r_new, sparse.comm_d_new) == (
        whole.comm_r_old, whole.comm_r_new, whole.comm_d_new)
    assert sparse.vanilla_proofs == whole.vanilla_proofs
    return sparse


@pytest.mark.parametrize("nodes", [32, 64, 1024])  # 8-4-0 Sub, 8-0-0 Single, 8-8-2 Top
def test_a_sparse_update_is_the_whole_update_of_its_expanded_runs(nodes, np_rng):
    """Runs that begin anywhere inside rho's runs (h = 1 here: two of them)."""
    shape = SnapShape(nodes)
    starts = random_starts(nodes // 8, nodes, np_rng, must=rho_runs(shape))
    key = generate.RunSectorKey(random_fields(np_rng, 1)[0],
                                Runs(starts, random_fields(np_rng, len(starts)), nodes))
    data = Runs(starts, random_fields(np_rng, len(starts)), nodes)
    same_as_whole_update(shape, key, data, np_rng)


def test_runs_that_cross_rho_or_differ_are_refused(np_rng):
    shape = SnapShape(64)
    crossing = Runs(np.array([0, 40]), random_fields(np_rng, 2), 64)
    with pytest.raises(ValueError, match="run 0 crosses a boundary of rho's runs"):
        generate.encode_runs(shape, generate.RunSectorKey(random_fields(np_rng, 1)[0], crossing),
                             crossing)
    key = generate.random_run_key(shape, np_rng)
    other = Runs(np.array([0, 16, 32, 48]), random_fields(np_rng, 4), 64)
    with pytest.raises(ValueError, match="same runs"):
        generate.encode_runs(shape, key, other)


def test_a_sparse_8mib_update_is_the_whole_update_of_its_expanded_runs(np_rng):
    """The default runs at 8 MiB: one per run of rho (2^8 nodes, h = 10), 1,024 of them.
    (The whole 8 MiB sector to compare with takes a few seconds on two cores.)"""
    shape = SnapShape(1 << 18)
    key = generate.random_run_key(shape, np_rng)
    assert len(key.replica) == 1024
    data = Runs(key.replica.starts, random_fields(np_rng, 1024), shape.nodes)
    same_as_whole_update(shape, key, data, np_rng)


# -- 32 GiB ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def update_32gib(module_rng):
    shape = SnapShape.of_size(32 << 30)
    rng = np.random.default_rng(module_rng.getrandbits(64))
    started = time.perf_counter()
    key = generate.random_run_key(shape, rng)
    data = Runs(key.replica.starts, random_fields(rng, len(key.replica)), shape.nodes)
    encoded = generate.encode_runs(shape, key, data)
    encoded_s = time.perf_counter() - started
    update = generate.update_of(shape, encoded)
    total_s = time.perf_counter() - started
    hashes = {name: getattr(encoded, name).hashes
              for name in ("tree_d", "tree_r_old", "tree_r_new")}
    print(f"32 GiB sparse update: {len(key.replica)} runs, hashes {hashes}; encoded in "
          f"{encoded_s:.2f} s, with its {shape.partitions} partition proofs in {total_s:.2f} s")
    return update, total_s


def test_a_32gib_sparse_update_passes_every_check_in_seconds(update_32gib):
    update, seconds = update_32gib
    shape = update.shape
    assert (shape.nodes, shape.tree.display, shape.h) == (1 << 30, "8-8-0", 10)
    assert (len(update.vanilla_proofs), update.partitions[0].challenges) == (16, 86)
    started = time.perf_counter()
    check_update(update)
    print(f"checked in {time.perf_counter() - started:.2f} s")
    assert seconds < 60  # about 2 s on two cores: 4,096 runs, 128 k hashes in all


def test_a_tampered_sibling_of_a_32gib_update_is_refused_by_name(update_32gib, rng):
    update, _ = update_32gib
    k = rng.randrange(update.shape.partitions)
    proof = update.partitions[k]
    name = rng.choice(["r_old", "d_new", "r_new"])
    path = getattr(proof, name)
    i, level = rng.randrange(proof.challenges), rng.randrange(len(path.levels))
    print(f"tampering partition {k}, challenge {i}, proof_{name} level {level}")
    siblings = path.levels[level].siblings.copy()
    siblings[i, 0, 0] ^= 1
    levels = list(path.levels)
    levels[level] = dataclasses.replace(levels[level], siblings=siblings)
    partitions = list(update.partitions)
    partitions[k] = dataclasses.replace(
        proof, **{name: dataclasses.replace(path, levels=tuple(levels))})
    tampered = dataclasses.replace(update, partitions=tuple(partitions))
    with pytest.raises(FilecoinError, match=rf"^vanilla_proofs\[{k}\]\.challenge_proofs\[{i}\]"
                                            rf"\.proof_{name}: its path does not hash to its "
                                            "root"):
        check_partition(tampered, k)
