"""What rust-fil-proofs checks of a SnapDeals update before proving it, and what the circuit
asserts while it synthesises (``EmptySectorUpdate::verify``, ``EmptySectorUpdateCircuit``).

Per partition k (its position in ``vanilla_proofs``):

* ``comm_r_old = Poseidon2(comm_c, root_r_old)`` and ``comm_r_new = Poseidon2(comm_c,
  root_r_new)``, the roots as challenge 0's openings claim them;
* challenge i's three openings are of the node challenge i of partition k names, into
  root_r_old, comm_d_new and root_r_new, and each hashes up to its root;
* its new label is ``old + data·rho(phi, high bits)``;
* its tree D path passes through the apex leaf its bits select, and shares its levels above
  the apex with challenge 0, whose path from the apex tree's root reaches comm_d_new.

A partition in another's place opens other nodes, and is refused at the first of them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np

from snark.filecoin.c1 import MerklePath
from snark.filecoin.domain import DOMAIN_BYTES, to_int
from snark.filecoin.errors import FilecoinError
from snark.filecoin.snap import randomness
from snark.filecoin.snap.proofs import PartitionProof
from snark.filecoin.snap.shape import SnapShape
from snark.filecoin.snap.update import SnapUpdate
from snark.filecoin.trees import path_roots, poseidon_nodes, sha256_nodes
from snark.fields import FR_MODULUS
from snark.poseidon.neptune import poseidon_hash


def comm_r(comm_c: int, root: int) -> int:
    return poseidon_hash([comm_c, root])


def _first(mask: np.ndarray) -> int | None:
    bad = np.flatnonzero(~np.asarray(mask, dtype=bool))
    return int(bad[0]) if bad.size else None


def _field_ints(values: np.ndarray) -> list[int]:
    return [to_int(v) for v in values.reshape(-1, DOMAIN_BYTES)]


def _check_opening(where: str, name: str, path: MerklePath, nodes: np.ndarray,
                   root: np.ndarray, hasher) -> None:
    bad = _first(path.node_index() == nodes)
    if bad is not None:
        raise FilecoinError(f"{where}.challenge_proofs[{bad}].{name}: opens node "
                            f"{int(path.node_index()[bad])}, the challenge is {int(nodes[bad])}")
    bad = _first((path.root == root).all(axis=-1))
    if bad is not None:
        raise FilecoinError(f"{where}.challenge_proofs[{bad}].{name}.root: is not the "
                            "partition's root")
    bad = _first((path_roots(path, hasher) == root).all(axis=-1))
    if bad is not None:
        raise FilecoinError(f"{where}.challenge_proofs[{bad}].{name}: its path does not hash "
                            "to its root")


def apex_root(apex_leaves: np.ndarray) -> np.ndarray:
    row = apex_leaves
    while len(row) > 1:
        row = sha256_nodes(row.reshape(-1, 2, DOMAIN_BYTES))
    return row[0]


def check_partition(update: SnapUpdate, k: int) -> None:
    """Partition ``k`` of ``update``; ``FilecoinError`` naming the first failure."""
    shape, proof = update.shape, update.partitions[k]
    where = f"vanilla_proofs[{k}]"
    comm_c = to_int(proof.comm_c)
    root_r_old, root_r_new = proof.r_old.root[0], proof.r_new.root[0]
    comm_r_old, comm_r_new = to_int(update.comm_r_old), to_int(update.comm_r_new)
    if comm_r(comm_c, to_int(root_r_old)) != comm_r_old:
        raise FilecoinError(f"{where}.challenge_proofs[0].proof_r_old.root: Poseidon(comm_c, "
                            "root) is not comm_r_old")
    if comm_r(comm_c, to_int(root_r_new)) != comm_r_new:
        raise FilecoinError(f"{where}.challenge_proofs[0].proof_r_new.root: Poseidon(comm_c, "
                            "root) is not comm_r_new")
    nodes = randomness.challenges(shape, comm_r_new, k)
    comm_d = np.frombuffer(update.comm_d_new, dtype=np.uint8)
    _check_opening(where, "proof_r_old", proof.r_old, nodes, root_r_old, poseidon_nodes)
    _check_opening(where, "proof_d_new", proof.d_new, nodes, comm_d, sha256_nodes)
    _check_opening(where, "proof_r_new", proof.r_new, nodes, root_r_new, poseidon_nodes)
    _check_labels(update, proof, nodes, where)
    _check_apex(shape, proof, nodes, comm_d, where)


def _check_labels(update: SnapUpdate, proof: PartitionProof, nodes: np.ndarray, where: str) -> None:
    phi = randomness.phi(to_int(update.comm_d_new), to_int(update.comm_r_old))
    rhos = randomness.rhos(update.shape, phi, nodes)
    old, data, new = (_field_ints(p.leaf) for p in (proof.r_old, proof.d_new, proof.r_new))
    for i, (o, d, n, rho) in enumerate(zip(old, data, new, rhos)):
        if (o + d * rho) % FR_MODULUS != n:
            raise FilecoinError(f"{where}.challenge_proofs[{i}].proof_r_new.leaf: is not the "
                                "old label + new data · rho")


def _check_apex(shape: SnapShape, proof: PartitionProof, nodes: np.ndarray,
                comm_d: np.ndarray, where: str) -> None:
    below = shape.below_apex
    node = proof.d_new.leaf
    levels = proof.d_new.levels
    for level in levels[:below]:  # the node at the apex level, per challenge
        node = sha256_nodes(_children(node, level))
    selected = proof.apex_leaves[(nodes >> below) & (shape.apex_leaves - 1)]
    bad = _first((node == selected).all(axis=-1))
    if bad is not None:
        raise FilecoinError(f"{where}.challenge_proofs[{bad}].proof_d_new: does not pass "
                            "through the apex leaf its node selects")
    top = levels[below + shape.apex_bits:]
    for level in top:
        same = (level.siblings == level.siblings[:1]).all(axis=(-1, -2))
        bad = _first(same)
        if bad is not None:
            raise FilecoinError(f"{where}.challenge_proofs[{bad}].proof_d_new: its partition "
                                "path is not challenge 0's")
    root = apex_root(proof.apex_leaves)[None]
    for level in top:
        root = sha256_nodes(_children(root, level, first=True))
    if not (root[0] == comm_d).all():
        raise FilecoinError(f"{where}.apex_leafs: the apex tree and its partition path do not "
                            "reach comm_d_new")


def _children(node: np.ndarray, level, first: bool = False) -> np.ndarray:
    """Binary children of each node's parent (``first``: challenge 0's level only)."""
    siblings = level.siblings[:1, 0] if first else level.siblings[:, 0]
    index = level.index[:1] if first else level.index
    left = np.where(index[:, None] == 0, node, siblings)
    right = np.where(index[:, None] == 0, siblings, node)
    return np.stack([left, right], axis=1)


def check_update(update: SnapUpdate) -> None:
    """Every partition; the first failing one in order raises. The partitions are checked
    in threads: their hashing is native or numpy, which lets go of the GIL, so a 32 GiB
    update's 16 take a core each (each native call's batch, one partition's challenges,
    is too small for the library's own threads)."""
    from snark.native.library import default_threads

    checks = partial(check_partition, update)
    with ThreadPoolExecutor(min(update.shape.partitions, default_threads())) as pool:
        for _ in pool.map(checks, range(update.shape.partitions)):  # raises in order
            pass
