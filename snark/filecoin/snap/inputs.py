"""What one partition's circuit takes from an update: its private values and its public
inputs.

``partition_data`` reads ``circuit.SnapData`` from the partition's vanilla proof as
``EmptySectorUpdateCircuit``'s private inputs are made from it (roots from challenge 0's
openings, the partition path from challenge 0's tree D path above the apex leaves).
``public_inputs`` is ``EmptySectorUpdateCompound::generate_public_inputs``:
``[k | h_select << log2(partitions), comm_r_old, comm_d_new, comm_r_new]``, from the
request's fields alone.
"""

from __future__ import annotations

import numpy as np

from snark.filecoin.c1 import MerklePath
from snark.filecoin.circuit.inputs import field_ints
from snark.filecoin.domain import to_int
from snark.filecoin.snap.circuit import SnapData
from snark.filecoin.snap.update import SnapUpdate


def _siblings(path: MerklePath, levels: slice = slice(None)) -> np.ndarray:
    """``(K, Σ siblings)`` ints, level by level, sibling by sibling."""
    parts = [field_ints(level.siblings) for level in path.levels[levels]]
    count = len(path.leaf)
    return (np.concatenate(parts, axis=1) if parts
            else np.zeros((count, 0), dtype=object))


def partition_data(update: SnapUpdate, k: int) -> SnapData:
    shape, proof = update.shape, update.partitions[k]

    def one(value) -> np.ndarray:
        return np.asarray(value, dtype=object)
    top = _siblings(proof.d_new, slice(shape.random_bits, None))[0]
    return SnapData(
        k_and_h_select=one(shape.k_and_h_select(k)), comm_r_old=one(to_int(update.comm_r_old)),
        comm_d_new=one(to_int(update.comm_d_new)), comm_r_new=one(to_int(update.comm_r_new)),
        comm_c=one(to_int(proof.comm_c)), root_r_old=one(to_int(proof.r_old.root[0])),
        root_r_new=one(to_int(proof.r_new.root[0])),
        apex_leaves=field_ints(proof.apex_leaves), partition_path=top,
        leaf_r_old=field_ints(proof.r_old.leaf), leaf_d_new=field_ints(proof.d_new.leaf),
        path_r_old=_siblings(proof.r_old), path_r_new=_siblings(proof.r_new),
        path_d=_siblings(proof.d_new, slice(0, shape.below_apex)))


def public_inputs(update: SnapUpdate, k: int) -> list[int]:
    """The partition's public inputs without ONE."""
    return [update.shape.k_and_h_select(k), to_int(update.comm_r_old),
            to_int(update.comm_d_new), to_int(update.comm_r_new)]
