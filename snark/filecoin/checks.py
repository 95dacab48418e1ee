"""The checks a C2 prover makes of a C1 before proving, vectorised over all challenges.

What each proof must show (``rust-fil-proofs:storage-proofs-porep/src/stacked/vanilla/
params.rs`` ``Proof::verify`` and ``ReplicaColumnProof::verify``, ``labeling_proof.rs``,
``encoding_proof.rs``, ``proof.rs``), what a verifier derives itself, and what
``seal_commit_phase2`` refuses before it proves (``filecoin-proofs/src/api/seal.rs``,
``storage-proofs-porep/src/stacked/circuit/proof.rs`` ``StackedCompound::circuit``):

0. comm_d, comm_r and the seed are not 32 zero bytes;
1. replica_id = H(prover_id, sector_id, ticket, comm_d, porep_id), when the job names them;
2. the challenged nodes are the ones the seed derives (with comm_r for synthetic PoRep), and
   every part of a proof names them: c_x's column, the three paths' leaf indices, the
   labeling and encoding proofs' nodes;
3. the DRG and expander columns are the node's parents in the graph, each path at its column;
4. every proof names one comm_c and one comm_r_last (C2's "inconsistent comm_cs" and
   "inconsistent comm_r_lasts", over the whole sector here); every path hashes to its root:
   tree D's to comm_d, the 15 columns' to comm_c, the replica's to comm_r_last; each column
   leaf is the hash of its rows;
5. comm_r = Poseidon(comm_c, comm_r_last);
6. each layer's labeling proof hashes the parents' rows of the columns (the same layer for
   DRG parents, the layer below for expander parents) to c_x's row of that layer;
7. the encoding: the replica leaf is the last layer's label (the key) plus the data leaf.

The first failure raises ``FilecoinError`` naming the field: partition and challenge
(``vanilla_proofs.<tag>[p][k]``), then the path inside the proof.
"""

from __future__ import annotations

import hashlib

import numpy as np

from snark.filecoin.c1 import COLUMNS, FilecoinC1, MerklePath
from snark.filecoin.challenges import porep_challenges, replica_id
from snark.filecoin.domain import DOMAIN_BYTES, TRIM_MASK, from_limbs, to_limbs
from snark.filecoin.errors import FilecoinError
from snark.filecoin.graph import SdrGraph
from snark.filecoin.registered_proofs import DRG_PARENTS, LABEL_PARENTS
from snark.filecoin.sdr import encode, label_head
from snark.filecoin.trees import column_hashes, path_roots, poseidon_nodes, sha256_nodes
from snark.poseidon.neptune import poseidon_many


def column_name(slot: int) -> str:
    """The field of column opening ``slot`` (0 c_x, 1–6 DRG, 7–14 expander)."""
    if slot == 0:
        return "replica_column_proofs.c_x"
    if slot <= DRG_PARENTS:
        return f"replica_column_proofs.drg_parents[{slot - 1}]"
    return f"replica_column_proofs.exp_parents[{slot - 1 - DRG_PARENTS}]"


class _Report:
    """Names failures: ``where(p, k)`` is a proof's path, ``fail`` raises at the first
    ``False`` of a mask over (partition, challenge, …)."""

    def __init__(self, c1: FilecoinC1) -> None:
        self.tag = c1.proof.vanilla_tag

    def where(self, p: int, k: int) -> str:
        return f"vanilla_proofs.{self.tag}[{p}][{k}]"

    def fail(self, ok: np.ndarray, describe) -> None:
        """``describe(index) -> (field, problem)``, index the first failing position."""
        bad = np.argwhere(~np.asarray(ok, dtype=bool))
        if len(bad):
            index = tuple(int(i) for i in bad[0])
            field, problem = describe(index)
            raise FilecoinError(f"{self.where(*index[:2])}.{field}: {problem}")


#: What rust-fil-proofs says of a value of 32 zero bytes (``api/seal.rs``: C2 refuses all
#: three, ``verify_seal`` the commitments).
_ZERO = {"comm_d": "Invalid all zero commitment (comm_d)",
         "comm_r": "Invalid all zero commitment (comm_r)",
         "seed": "Invalid porep challenge seed"}


def check_not_zero(c1: FilecoinC1, names: tuple[str, ...]) -> None:
    """``FilecoinError`` for the first of ``names`` that is 32 zero bytes."""
    for name in names:
        if not any(getattr(c1, name)):
            raise FilecoinError(f"{name}: is 32 zero bytes (rust-fil-proofs refuses it: "
                                f"\"{_ZERO[name]}\")")


def check_c1(c1: FilecoinC1, *, prover_id: bytes | None = None,
             sector_id: int | None = None) -> None:
    """Every check above; ``prover_id``/``sector_id`` default to the ones the job names."""
    prover_id = prover_id if prover_id is not None else c1.prover_id
    sector_id = sector_id if sector_id is not None else c1.sector_id
    check_not_zero(c1, ("comm_d", "comm_r", "seed"))
    if prover_id is not None and sector_id is not None:
        want = replica_id(prover_id, sector_id, c1.ticket, c1.comm_d, c1.proof.porep_id)
        if want != c1.replica_id:
            raise FilecoinError("replica_id: is not the hash of prover_id, sector_id, ticket, "
                                "comm_d and porep_id (wrong ticket, comm_d or ids)")
    report = _Report(c1)
    challenges = _check_nodes(c1, report)
    _check_parents(c1, report, challenges)
    comm_c, comm_r_last = _check_consistency(c1, report)
    _check_paths(c1, report)
    expected = from_limbs(poseidon_many(to_limbs(np.stack([comm_c, comm_r_last]))[None], 2))
    if expected.tobytes() != c1.comm_r:
        raise FilecoinError("comm_r: is not Poseidon(comm_c, comm_r_last) of the proofs "
                            "(wrong comm_r, or comm_c and comm_r_last of another sector)")
    _check_labels(c1, report)
    _check_encoding(c1, report)


def _check_nodes(c1: FilecoinC1, report: _Report) -> np.ndarray:
    proof, v = c1.proof, c1.vanilla
    challenges = porep_challenges(proof, c1.replica_id, c1.comm_r, c1.seed)
    report.fail(v.nodes == challenges, lambda i: (
        "replica_column_proofs.c_x.column.index",
        f"{v.nodes[i]} is not challenge {i[1]} of partition {i[0]} as seed and replica_id "
        f"derive it ({challenges[i]}): wrong seed, replica_id or proof"))
    shape = proof.shape.name
    for field, named in (
            ("comm_d_proofs.data.Single.path", v.comm_d.node_index()),
            (f"comm_r_last_proof.data.{shape}", v.comm_r_last.node_index()),
            (f"replica_column_proofs.c_x.inclusion_proof.data.{shape}",
             v.columns.path.node_index()[..., 0]),
            ("encoding_proof.node", v.encoding.node)):
        report.fail(named == challenges, lambda i, f=field, n=named: (
            f, f"names node {n[i]}, the challenge is {challenges[i]}"))
    report.fail(v.labeling.node == challenges[..., None], lambda i: (
        f"labeling_proofs[{i[2]}].node",
        f"names node {v.labeling.node[i]}, the challenge is {challenges[i[:2]]}"))
    layers = np.arange(1, proof.layers + 1)
    report.fail(v.labeling.layer_index == layers, lambda i: (
        f"labeling_proofs[{i[2]}].layer_index",
        f"is {v.labeling.layer_index[i]}, expected {i[2] + 1}"))
    report.fail(v.encoding.layer_index == proof.layers, lambda i: (
        "encoding_proof.layer_index", f"is {v.encoding.layer_index[i]}, expected the last "
                                      f"layer ({proof.layers})"))
    return challenges


def _check_parents(c1: FilecoinC1, report: _Report, challenges: np.ndarray) -> None:
    v = c1.vanilla
    parents = SdrGraph.of(c1.proof).parents(challenges.reshape(-1)).astype(np.int64)
    parents = parents.reshape(*challenges.shape, COLUMNS - 1)
    report.fail(v.columns.index[..., 1:] == parents, lambda i: (
        f"{column_name(i[2] + 1)}.column.index",
        f"{v.columns.index[i[:2] + (i[2] + 1,)]} is not the node's "
        f"{'DRG' if i[2] < DRG_PARENTS else 'expander'} parent "
        f"{i[2] % DRG_PARENTS if i[2] < DRG_PARENTS else i[2] - DRG_PARENTS} "
        f"({parents[i]})"))
    at = v.columns.path.node_index()
    report.fail(at == v.columns.index, lambda i: (
        f"{column_name(i[2])}.inclusion_proof", f"opens node {at[i]}, its column is "
                                                f"{v.columns.index[i]}"))


def _check_path(report: _Report, path: MerklePath, roots: np.ndarray, field) -> None:
    same = (roots == path.root).all(axis=-1)
    report.fail(same, lambda i: (field(i), "does not hash to its root (a sibling or the leaf "
                                           "is wrong)"))


def _check_consistency(c1: FilecoinC1, report: _Report) -> tuple[np.ndarray, np.ndarray]:
    """One comm_c and one comm_r_last in every proof (``StackedCompound::circuit`` refuses
    a partition otherwise); returns them."""
    v, shape = c1.vanilla, c1.proof.shape.name
    comm_r_last = v.comm_r_last.root[0, 0]
    report.fail((v.comm_r_last.root == comm_r_last).all(axis=-1), lambda i: (
        f"comm_r_last_proof.data.{shape}.root", "differs from the first proof's comm_r_last "
                                                "(inconsistent comm_r_lasts)"))
    comm_c = v.columns.path.root[0, 0, 0]
    report.fail((v.columns.path.root == comm_c).all(axis=-1), lambda i: (
        f"{column_name(i[2])}.inclusion_proof.data.{shape}.root",
        "differs from comm_c of the first proof's c_x (inconsistent comm_cs)"))
    return comm_c, comm_r_last


def _check_paths(c1: FilecoinC1, report: _Report) -> None:
    """Tree D, tree C and tree R_last paths."""
    v, shape = c1.vanilla, c1.proof.shape.name
    comm_d = np.frombuffer(c1.comm_d, dtype=np.uint8)
    _check_path(report, v.comm_d, path_roots(v.comm_d, sha256_nodes),
                lambda i: "comm_d_proofs.data.Single")
    report.fail((v.comm_d.root == comm_d).all(axis=-1), lambda i: (
        "comm_d_proofs.data.Single.root", "is not comm_d"))

    leaves = column_hashes(v.columns.rows)
    report.fail((leaves == v.columns.path.leaf).all(axis=-1), lambda i: (
        f"{column_name(i[2])}.column", "its rows do not hash to the leaf of its inclusion "
                                       "proof (a row or the leaf is wrong)"))
    _check_path(report, v.columns.path, path_roots(v.columns.path, poseidon_nodes),
                lambda i: f"{column_name(i[2])}.inclusion_proof.data.{shape}")
    _check_path(report, v.comm_r_last, path_roots(v.comm_r_last, poseidon_nodes),
                lambda i: f"comm_r_last_proof.data.{shape}")


def expected_label_parents(rows: np.ndarray) -> np.ndarray:
    """The 37 parent labels of each layer from the parents' columns: ``rows (..., 15, L, 32)``
    → ``(..., L, 37, 32)``."""
    layers = rows.shape[-2]
    out = np.empty((*rows.shape[:-3], layers, LABEL_PARENTS, DOMAIN_BYTES), dtype=np.uint8)
    for layer in range(layers):
        own = rows[..., 1:1 + DRG_PARENTS, layer, :]
        sources = own if layer == 0 else np.concatenate(
            [own, rows[..., 1 + DRG_PARENTS:, layer - 1, :]], axis=-2)
        repeat = np.resize(np.arange(sources.shape[-2]), LABEL_PARENTS)
        out[..., layer, :, :] = sources[..., repeat, :]
    return out


def _check_labels(c1: FilecoinC1, report: _Report) -> None:
    v = c1.vanilla
    parents = v.labeling.parents
    expected = expected_label_parents(v.columns.rows)
    report.fail((parents == expected).all(axis=-1), lambda i: (
        f"labeling_proofs[{i[2]}].parents[{i[3]}]",
        "is not the row of the parent's column it repeats (a labeling parent or a column row "
        "is wrong)"))
    labels = _labels(c1.replica_id, parents, v.labeling.layer_index, v.labeling.node)
    rows = v.columns.rows[..., 0, :, :]
    report.fail((labels == rows).all(axis=-1), lambda i: (
        f"replica_column_proofs.c_x.column.rows[{i[2]}]",
        f"is not the label of layer {i[2] + 1} its labeling proof hashes to"))


def _labels(replica: bytes, parents: np.ndarray, layers: np.ndarray,
            nodes: np.ndarray) -> np.ndarray:
    flat = parents.reshape(-1, LABEL_PARENTS * DOMAIN_BYTES)
    out = bytearray()
    for row, layer, node in zip(flat, layers.reshape(-1).tolist(), nodes.reshape(-1).tolist()):
        out += hashlib.sha256(label_head(replica, layer, node) + row.tobytes()).digest()
    labels = np.frombuffer(bytes(out), dtype=np.uint8).reshape(*parents.shape[:-2],
                                                                DOMAIN_BYTES).copy()
    labels[..., -1] &= TRIM_MASK
    return labels


def _check_encoding(c1: FilecoinC1, report: _Report) -> None:
    v = c1.vanilla
    last = v.labeling.parents[..., -1, :, :]
    report.fail((v.encoding.parents == last).all(axis=(-1, -2)), lambda i: (
        "encoding_proof.parents", "are not the last labeling proof's parents"))
    key = v.columns.rows[..., 0, -1, :]
    replica = encode(key, v.comm_d.leaf)
    shape = c1.proof.shape.name
    report.fail((replica == v.comm_r_last.leaf).all(axis=-1), lambda i: (
        f"comm_r_last_proof.data.{shape}.leaf",
        "is not the last layer's label plus the data leaf (comm_d_proofs' leaf): the "
        "encoding does not hold"))
