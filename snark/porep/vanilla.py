"""Native verification of a C1's vanilla proofs: the checks the circuit makes, and more.

Run before a job is accepted and before proving, so a bad C1 is refused with the field that
is wrong instead of surfacing as an unsatisfiable circuit. It also checks what the circuit
takes on trust as public inputs: replica_id = H(ticket, comm_d) and that every challenge
index is the one the seed derives. All challenges are checked together, one vectorised
hash per tree level.
"""

from __future__ import annotations

import numpy as np

from snark.fields import FR_MODULUS
from snark.poseidon.hashing import hash2_many
from snark.porep.c1 import C1, C1Error
from snark.porep.derive import challenge_indices, replica_id_for, replica_keys_at


def verify_vanilla(c1: C1) -> None:
    """Raise ``C1Error`` naming the first wrong field; return None if every check passes."""
    check_public_inputs(c1)

    where = [f"vanilla_proofs[{p}].challenges[{j}]"
             for p in range(c1.partitions) for j in range(c1.challenges)]
    flat = [ch for part in c1.vanilla_proofs for ch in part.challenges]
    index = np.array([ch.index for ch in flat], dtype=np.int64)
    data = np.array([ch.data_leaf for ch in flat], dtype=object)
    replica = np.array([ch.replica_leaf for ch in flat], dtype=object)

    for leaves, leaf_field, path_field, root_field in (
            (data, "data_leaf", "d_path", "comm_d"), (replica, "replica_leaf", "r_path", "comm_r")):
        roots = path_roots(leaves, index, [getattr(ch, path_field) for ch in flat])
        ok = np.asarray(roots == getattr(c1, root_field), dtype=bool)
        if len(ok) > 1 and not ok.any():
            raise C1Error(f"{root_field}: none of the {len(ok)} {path_field}s hashes to it "
                          f"(wrong {root_field})")
        _first_failure(ok, where, f"{leaf_field} with {path_field} does not hash to "
                       f"{root_field} (tampered leaf or sibling)")
    encoded = (data + replica_keys_at(c1.replica_id, index)) % FR_MODULUS
    _first_failure(np.asarray(encoded == replica, dtype=bool), where,
                   "replica_leaf is not data_leaf + H(replica_id, index)")


def check_public_inputs(c1: C1) -> None:
    """What a verifier recomputes: replica_id from the ticket, every index from the seed.

    Without this a prover could choose which nodes it opens.
    """
    if c1.replica_id != replica_id_for(c1.ticket, c1.comm_d):
        raise C1Error("replica_id: does not match H(ticket, comm_d) (wrong ticket, comm_d "
                      "or replica_id)")
    expected = challenge_indices(c1.seed, c1.replica_id, c1.nodes, c1.partitions, c1.challenges)
    for p, (part, row) in enumerate(zip(c1.vanilla_proofs, expected)):
        for j, (ch, want) in enumerate(zip(part.challenges, row)):
            if ch.index != want:
                raise C1Error(f"vanilla_proofs[{p}].challenges[{j}].index: {ch.index} is not "
                              f"the challenge derived from seed and replica_id ({want})")


def path_roots(leaves: np.ndarray, index: np.ndarray, paths: list[list[int]]) -> np.ndarray:
    """Roots of many Merkle paths at once; bit k of the index says the node is a right child."""
    node = leaves
    siblings = np.array(paths, dtype=object).reshape(len(leaves), -1)
    for level in range(siblings.shape[1]):
        right = ((index >> level) & 1).astype(bool)
        sibling = siblings[:, level]
        left, right_node = np.where(right, sibling, node), np.where(right, node, sibling)
        node = np.asarray(hash2_many(left, right_node), dtype=object)
    return node


def _first_failure(ok: np.ndarray, where: list[str], message: str) -> None:
    bad = np.flatnonzero(~ok)
    if bad.size:
        raise C1Error(f"{where[bad[0]]}: {message}")
