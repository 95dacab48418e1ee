"""What one partition's circuit takes from a C1: its private values, and its public inputs.

``partition_data`` reads the values the circuit allocates (``stacked.PartitionData``) from a
``FilecoinC1``'s partition, as ``StackedCompound::circuit`` does: comm_c and comm_r_last from
the first challenge's openings, the challenged node from its first labelling proof.
``public_inputs`` is ``StackedCompound::generate_public_inputs``: it derives everything
from the commitments, the seed and the graph, and never reads the witness or the proofs'
own claims (``checks`` compares those to the derivation before a job is proved).
"""

from __future__ import annotations

import numpy as np

from snark.fields import limbs_to_ints
from snark.filecoin.c1 import DRG, EXP, FilecoinC1, MerklePath
from snark.filecoin.circuit.stacked import PartitionData
from snark.filecoin.challenges import porep_challenges
from snark.filecoin.domain import to_int, to_limbs
from snark.filecoin.graph import SdrGraph


def field_ints(values: np.ndarray) -> np.ndarray:
    """``uint8 (..., 32)`` field elements as an object array of ints of shape ``(...)``."""
    values = np.asarray(values, dtype=np.uint8)
    out = np.empty(values.shape[:-1], dtype=object)
    out.reshape(-1)[:] = limbs_to_ints(to_limbs(values).reshape(-1, 4))
    return out


def _path(path: MerklePath, column: int | None = None) -> list[dict]:
    levels = []
    for level in path.levels:
        index, siblings = level.index, level.siblings
        if column is not None:
            index, siblings = index[:, column], siblings[:, column]
        levels.append({"index": np.asarray(index, dtype=np.int64),
                       "siblings": field_ints(siblings)})
    return levels


def partition_data(c1: FilecoinC1, partition: int) -> PartitionData:
    proofs = c1.partition(partition)
    columns = proofs.columns
    first_drg, first_exp = DRG.start, EXP.start
    return PartitionData(
        replica_id=to_int(c1.replica_id), comm_d=to_int(c1.comm_d), comm_r=to_int(c1.comm_r),
        comm_r_last=to_int(proofs.comm_r_last.root[0]), comm_c=to_int(proofs.comm_c[0]),
        challenge=np.asarray(proofs.labeling.node[:, 0], dtype=np.int64),
        data_leaf=field_ints(proofs.comm_d.leaf),
        comm_d_path=_path(proofs.comm_d),
        drg_rows=field_ints(columns.rows[:, DRG]),
        drg_paths=[_path(columns.path, first_drg + i) for i in range(DRG.stop - DRG.start)],
        exp_rows=field_ints(columns.rows[:, EXP]),
        exp_paths=[_path(columns.path, first_exp + i) for i in range(columns.rows.shape[1]
                                                                      - first_exp)],
        comm_r_last_path=_path(proofs.comm_r_last),
        comm_c_path=_path(columns.path, 0))


def public_inputs(c1: FilecoinC1, partition: int) -> list[int]:
    """``StackedCompound::generate_public_inputs`` for one partition (without ONE):
    replica_id, comm_d, comm_r, then per challenge the challenge (its tree D path), its 6
    DRG and 8 expander parents (their tree C paths), and the challenge three more times (as
    the challenge, and its paths in tree R_last and tree C)."""
    proof = c1.proof
    challenges = porep_challenges(proof, c1.replica_id, c1.comm_r, c1.seed)[partition]
    parents = SdrGraph.of(proof).parents(challenges).astype(np.int64)
    per_challenge = np.concatenate([challenges[:, None], parents,
                                    np.repeat(challenges[:, None], 3, axis=1)], axis=1)
    return ([to_int(c1.replica_id), to_int(c1.comm_d), to_int(c1.comm_r)]
            + [int(v) for v in per_challenge.reshape(-1)])
