"""Filecoin's ``StackedCircuit`` (one PoRep partition), synthesised as rust-fil-proofs does.

The call order is ``StackedCircuit::synthesize`` and, per challenge, ``Proof::synthesize``
of storage-proofs-porep's stacked circuit:

    replica_id (input, bits) · comm_d (input) · comm_r (input) · comm_r_last · comm_c ·
    comm_r = H(comm_c, comm_r_last)
    per challenge:
        data leaf, its path to comm_d (SHA-256)
        6 DRG then 8 expander parent columns: rows, column hash, path to comm_c
        the challenge as 64 bits, packed into an input
        per layer: the parents' bits, the label
        encoding (label of the last layer + data leaf), its path to comm_r_last
        the challenge's column hash (its labels), its path to comm_c

``synthesize`` runs on a ``Program`` (structure, or a witness with ``keep_data``) from a
``PartitionData``: the values the circuit allocates privately, per challenge. A blank one
(zeros) of a shape gives the structure, which does not depend on values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.filecoin.registered_proofs import RegisteredProof, TreeShape
from snark.filecoin.circuit.label import create_label, expand_parents
from snark.filecoin.circuit.por import (enforce_equal, enforce_inclusion, level_data,
                                        reverse_bit_numbering)
from snark.filecoin.circuit.poseidon import poseidon_hash
from snark.poseidon.neptune import PoseidonConstants
from snark.gadgets.blocks import block
from snark.gadgets.boolean import Boolean, alloc_bit, is_bit
from snark.gadgets.family import flat_values, numbered
from snark.gadgets.num import (AllocatedNum, add, alloc_num, inputize, pack_into_inputs,
                               to_bits_le)

DRG_DEGREE = 6
EXP_DEGREE = 8


@dataclass(frozen=True)
class StackedShape:
    """What fixes the circuit: sector nodes, layers, challenges per partition and the shape
    of trees C and R_last."""

    nodes: int
    layers: int
    challenges: int
    tree: TreeShape

    @classmethod
    def of(cls, proof: RegisteredProof) -> "StackedShape":
        return cls(proof.nodes, proof.layers, proof.challenges_per_partition, proof.shape)

    def tree_arities(self) -> list[int]:
        """Arities of a tree C / R_last path, leaf level first."""
        return list(self.tree.level_arities(self.nodes))

    @property
    def tree_d_depth(self) -> int:
        return self.nodes.bit_length() - 1

    @property
    def name(self) -> str:
        return f"stacked-{self.nodes}n-{self.layers}l-{self.challenges}c-{self.tree.display}"


def _path(depth: int, arities: list[int], k: int) -> list[dict]:
    return [{"index": np.zeros(k, np.int64), "siblings": np.zeros((k, a - 1), object)}
            for a in arities[:depth]]


@dataclass
class PartitionData:
    """The private values of one partition, challenges first (``K`` of them).

    A path is a list of levels, each ``{"index": (K,) ints, "siblings": (K, arity − 1)}``;
    rows of parent columns are ``(K, degree, layers)``; numbers are ints mod r (object
    arrays)."""

    replica_id: int
    comm_d: int
    comm_r: int
    comm_r_last: int
    comm_c: int
    challenge: np.ndarray
    data_leaf: np.ndarray
    comm_d_path: list[dict]
    drg_rows: np.ndarray
    drg_paths: list[list[dict]]
    exp_rows: np.ndarray
    exp_paths: list[list[dict]]
    comm_r_last_path: list[dict]
    comm_c_path: list[dict]

    @classmethod
    def blank(cls, shape: StackedShape) -> "PartitionData":
        k, arities = shape.challenges, shape.tree_arities()
        d = shape.tree_d_depth
        return cls(0, 0, 0, 0, 0, np.zeros(k, np.int64), np.zeros(k, object),
                   _path(d, [2] * d, k), np.zeros((k, DRG_DEGREE, shape.layers), object),
                   [_path(len(arities), arities, k) for _ in range(DRG_DEGREE)],
                   np.zeros((k, EXP_DEGREE, shape.layers), object),
                   [_path(len(arities), arities, k) for _ in range(EXP_DEGREE)],
                   _path(len(arities), arities, k), _path(len(arities), arities, k))

    def _replace(self, convert) -> "PartitionData":
        """A copy with every value array passed through ``convert``, in one fixed order
        (the five commitments first, as 0-d arrays)."""
        def path(levels):
            return [{"index": convert(level["index"]), "siblings": convert(level["siblings"])}
                    for level in levels]

        heads = [convert(np.asarray(v, dtype=object)) for v in
                 (self.replica_id, self.comm_d, self.comm_r, self.comm_r_last, self.comm_c)]
        return PartitionData(*heads, convert(self.challenge), convert(self.data_leaf),
                             path(self.comm_d_path), convert(self.drg_rows),
                             [path(p) for p in self.drg_paths], convert(self.exp_rows),
                             [path(p) for p in self.exp_paths], path(self.comm_r_last_path),
                             path(self.comm_c_path))

    def flatten(self) -> np.ndarray:
        """Every value in ``_replace``'s order, as one object array: what a witness plan
        made from ``symbolic`` data reads by index."""
        return flat_values(self._replace)

    @classmethod
    def symbolic(cls, shape: StackedShape) -> "PartitionData":
        """The blank data of ``shape`` with every value replaced by its position in
        ``flatten`` (same shapes and dtypes, so the same templates)."""
        return numbered(cls.blank(shape)._replace)


def _value(v) -> dict:
    return {"value": np.asarray(int(v) if not isinstance(v, np.ndarray) else v, dtype=object)}


@block
def alloc_value(cs, *, data: dict) -> AllocatedNum:
    return alloc_num(cs, data["value"], ("data", "value", 0, None))


@block
def alloc_column(cs, *, data: dict) -> list[AllocatedNum]:
    rows = data["rows"]
    return [alloc_num(cs, rows[..., i], ("data", "rows", i, None)) for i in range(rows.shape[-1])]


@block
def make_input(cs, num: AllocatedNum) -> None:
    inputize(cs, num)


@block
def bits_of(cs, num: AllocatedNum) -> list[Boolean]:
    return to_bits_le(cs, num)


@block
def challenge_bits(cs, *, data: dict) -> list[Boolean]:
    """storage-proofs' ``UInt64::alloc`` then ``pack_into_input``."""
    node = np.asarray(data["value"]).astype(np.uint64)
    bits = [is_bit(alloc_bit(cs, (node >> np.uint64(i)) & np.uint64(1), ("data", "value", 0, i)))
            for i in range(64)]
    pack_into_inputs(cs, bits)
    return bits


@block
def encode(cs, key: AllocatedNum, value: AllocatedNum) -> AllocatedNum:
    return add(cs, key, value)


def _path_at(path: list[dict], k: int) -> list[dict]:
    return [level_data(level["index"][k], level["siblings"][k]) for level in path]


def synthesize(cs, shape: StackedShape, data: PartitionData, constants_for) -> None:
    """``constants_for(arity)``: neptune's circuit constants for that arity (2, 4, 8, 11)."""
    poseidon = {a: constants_for(a) for a in {2, shape.layers, *shape.tree_arities()}}

    def tree_constants(arity: int) -> PoseidonConstants:
        return poseidon[arity]

    replica_id = alloc_value(cs, data=_value(data.replica_id))
    make_input(cs, replica_id)
    replica_bits = reverse_bit_numbering(bits_of(cs, replica_id))
    comm_d = alloc_value(cs, data=_value(data.comm_d))
    make_input(cs, comm_d)
    comm_r = alloc_value(cs, data=_value(data.comm_r))
    make_input(cs, comm_r)
    comm_r_last = alloc_value(cs, data=_value(data.comm_r_last))
    comm_c = alloc_value(cs, data=_value(data.comm_c))
    enforce_equal(cs, comm_r, poseidon_hash(cs, [comm_c, comm_r_last], constants=poseidon[2]))

    arities = shape.tree_arities()
    for k in range(shape.challenges):
        _challenge(cs, shape, data, k, arities, poseidon, tree_constants, replica_bits,
                   comm_d, comm_c, comm_r_last)


def _column(cs, rows: np.ndarray, path: list[dict], arities, poseidon, tree_constants,
            comm_c) -> list[AllocatedNum]:
    column = alloc_column(cs, data={"rows": np.asarray(rows, dtype=object)})
    digest = poseidon_hash(cs, column, constants=poseidon[len(column)])
    enforce_inclusion(cs, digest, comm_c, path, arities, tree_constants)
    return column


def _challenge(cs, shape, data, k, arities, poseidon, tree_constants, replica_bits,
               comm_d, comm_c, comm_r_last) -> None:
    data_leaf = alloc_value(cs, data=_value(data.data_leaf[k]))
    enforce_inclusion(cs, data_leaf, comm_d, _path_at(data.comm_d_path, k),
                      [2] * shape.tree_d_depth, lambda arity: None)
    drg = [_column(cs, data.drg_rows[k, i], _path_at(data.drg_paths[i], k), arities,
                   poseidon, tree_constants, comm_c) for i in range(DRG_DEGREE)]
    exp = [_column(cs, data.exp_rows[k, i], _path_at(data.exp_paths[i], k), arities,
                   poseidon, tree_constants, comm_c) for i in range(EXP_DEGREE)]
    node = challenge_bits(cs, data=_value(data.challenge[k]))
    labels = []
    for layer in range(1, shape.layers + 1):
        parents = [reverse_bit_numbering(bits_of(cs, column[layer - 1])) for column in drg]
        if layer > 1:
            parents += [reverse_bit_numbering(bits_of(cs, column[layer - 2]))
                        for column in exp]
        labels.append(create_label(cs, replica_bits, expand_parents(parents, layer), layer,
                                   node))
    encoded = encode(cs, labels[-1], data_leaf)
    enforce_inclusion(cs, encoded, comm_r_last, _path_at(data.comm_r_last_path, k), arities,
                      tree_constants)
    column_hash = poseidon_hash(cs, labels, constants=poseidon[shape.layers])
    enforce_inclusion(cs, column_hash, comm_c, _path_at(data.comm_c_path, k), arities,
                      tree_constants)
