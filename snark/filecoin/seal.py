"""Test sealers: real-format C1s for tests and benchmarks (not for production sectors).

``seal`` seals a whole sector of random (or given) fr32 data with SDR exactly as rust-fil-proofs
does: tree D, the labels of every layer, tree C over the columns, the replica and tree
R_last, comm_r; then the vanilla proofs of the challenges the seed derives (synthetic PoRep:
the seed's pick of the synthetic challenges, which comm_r fixes). It takes seconds at 2 KiB
and minutes at 8 MiB (Python Poseidon over every node). Synthetic PoRep has no sparse
sealer: its challenges depend on comm_r, so on every node.

``seal_sparse`` makes a C1 of any size, 32 GiB and 64 GiB included, without a sector: it
derives the challenges from a random replica_id and seed, and builds only what they touch —
the 15 columns of each challenge (parents' labels random, the challenge's labels computed
from them), the data and replica leaves, and their paths through trees whose other nodes are
random (``trees.SparseTree``). The C1 passes every check of ``checks`` (it names no prover_id
and sector_id, which would fix replica_id through comm_d).

Both assemble the vanilla proofs the same way (``_vanilla``) from four functions: the
labels of nodes, and the paths into tree D, tree C and tree R_last. Both draw the ticket and
the seed as the chain does (``chain_randomness``: 32 uniform bytes, above r more often than
not) unless given.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from snark.filecoin.c1 import (ColumnProofs, EncodingProofs, FilecoinC1, LabelingProofs,
                               MerklePath, VanillaProofs)
from snark.filecoin.challenges import interactive_challenges, porep_challenges, replica_id
from snark.filecoin.domain import DOMAIN_BYTES, TRIM_MASK, from_limbs, to_limbs
from snark.filecoin.errors import FilecoinError
from snark.filecoin.graph import SdrGraph
from snark.filecoin.registered_proofs import DRG_PARENTS, LABEL_PARENTS, RegisteredProof
from snark.filecoin.sdr import encode, label, layer_labels, repeated_parents
from snark.filecoin.trees import (SparseTree, build_levels, column_hashes, open_paths,
                                  poseidon_nodes, sha256_nodes)
from snark.poseidon.neptune import poseidon_many

Phase = Callable[[str], None]
Opener = Callable[[np.ndarray], MerklePath]


def random_fields(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` random 254-bit values (fr32 nodes, trimmed hashes) as ``(count, 32)``."""
    values = rng.integers(0, 256, size=(count, DOMAIN_BYTES), dtype=np.uint8)
    values[:, -1] &= TRIM_MASK
    return values


def chain_randomness(rng: np.random.Generator) -> bytes:
    """32 uniform bytes, as lotus and Curio take a ticket or a seed from the chain (never
    masked to a field element); never all zero (rust-fil-proofs refuses a zero seed)."""
    while True:
        value = rng.integers(0, 256, size=DOMAIN_BYTES, dtype=np.uint8).tobytes()
        if any(value):
            return value


def _comm_r(comm_c: np.ndarray, comm_r_last: np.ndarray) -> bytes:
    pair = to_limbs(np.stack([comm_c, comm_r_last]))[None]
    return from_limbs(poseidon_many(pair, 2)).tobytes()


def _label_parents(labels_of: Callable[[np.ndarray], np.ndarray], parents: np.ndarray,
                   layers: int) -> np.ndarray:
    """Each layer's 37 parent labels ``(..., layers, 37, 32)`` for parents ``(..., 14)``."""
    parent_labels = labels_of(parents)  # (..., 14, layers, 32)
    out = np.empty((*parents.shape[:-1], layers, LABEL_PARENTS, DOMAIN_BYTES), dtype=np.uint8)
    for layer in range(layers):
        sources = parent_labels[..., :DRG_PARENTS, layer, :]
        if layer:
            sources = np.concatenate([sources, parent_labels[..., DRG_PARENTS:, layer - 1, :]],
                                     axis=-2)
        out[..., layer, :, :] = sources[..., np.resize(np.arange(sources.shape[-2]),
                                                       LABEL_PARENTS), :]
    return out


def _vanilla(proof: RegisteredProof, challenges: np.ndarray, parents: np.ndarray,
             labels_of: Callable[[np.ndarray], np.ndarray], open_d: Opener, open_c: Opener,
             open_r: Opener) -> VanillaProofs:
    """The vanilla proofs of ``challenges (P, K)`` whose ``parents`` are ``(P, K, 14)``."""
    layers = proof.layers
    columns = np.concatenate([challenges[..., None], parents], axis=-1).astype(np.int64)
    labeling = _label_parents(labels_of, parents, layers)
    layer_index = np.broadcast_to(np.arange(1, layers + 1), (*challenges.shape, layers))
    return VanillaProofs(
        comm_d=open_d(challenges), comm_r_last=open_r(challenges),
        columns=ColumnProofs(columns, labels_of(columns), open_c(columns)),
        labeling=LabelingProofs(labeling, layer_index.astype(np.int64).copy(),
                                np.repeat(challenges[..., None], layers, axis=-1)),
        encoding=EncodingProofs(labeling[..., -1, :, :].copy(),
                                np.full(challenges.shape, layers, dtype=np.int64),
                                challenges.astype(np.int64).copy()))


def seal(proof: RegisteredProof, rng: np.random.Generator, *, data: bytes | None = None,
         prover_id: bytes | None = None, sector_id: int | None = None,
         ticket: bytes | None = None, seed: bytes | None = None,
         on_phase: Phase | None = None) -> FilecoinC1:
    """Seal a whole sector of ``data`` (random fr32 nodes by default) and return its C1."""
    phase = on_phase or (lambda name: None)
    nodes = proof.nodes
    if data is None:
        leaves = random_fields(rng, nodes)
    elif len(data) != proof.sector_size:
        raise FilecoinError(f"data: expected {proof.sector_size} bytes (the sector size of "
                            f"{proof.name}), got {len(data)}")
    else:
        leaves = np.frombuffer(data, dtype=np.uint8).reshape(nodes, DOMAIN_BYTES)
        bad = np.flatnonzero(leaves[:, -1] > TRIM_MASK)
        if bad.size:
            raise FilecoinError(f"data: node {bad[0]} is not fr32 (its top two bits are set)")
    prover_id = prover_id if prover_id is not None else random_fields(rng, 1)[0].tobytes()
    sector_id = sector_id if sector_id is not None else int(rng.integers(1 << 40))
    ticket = ticket if ticket is not None else chain_randomness(rng)
    seed = seed if seed is not None else chain_randomness(rng)

    phase("tree D (comm_d)")
    tree_d = build_levels(leaves, (2,) * (nodes.bit_length() - 1), sha256_nodes)
    comm_d = tree_d[-1][0].tobytes()
    replica = replica_id(prover_id, sector_id, ticket, comm_d, proof.porep_id)
    phase("SDR graph (parent cache)")
    graph_parents = SdrGraph.of(proof).parents()
    labels = layer_labels(SdrGraph.of(proof), replica, proof.layers, graph_parents,
                          on_layer=lambda layer: phase(f"labels, layer {layer}"))
    columns = np.ascontiguousarray(labels.transpose(1, 0, 2))  # (nodes, layers, 32)
    arities = proof.shape.level_arities(nodes)
    phase("tree C (column hashes)")
    tree_c = build_levels(column_hashes(columns), arities, poseidon_nodes)
    phase("tree R_last (replica)")
    tree_r = build_levels(encode(labels[-1], leaves), arities, poseidon_nodes)
    comm_r = _comm_r(tree_c[-1][0], tree_r[-1][0])

    phase("vanilla proofs")
    challenges = porep_challenges(proof, replica, comm_r, seed)
    shape = proof.shape.name
    vanilla = _vanilla(
        proof, challenges, graph_parents[challenges].astype(np.int64),
        labels_of=lambda at: columns[at],
        open_d=lambda at: open_paths(tree_d, (2,) * len(tree_d[1:]), at, "Single"),
        open_c=lambda at: open_paths(tree_c, arities, at, shape),
        open_r=lambda at: open_paths(tree_r, arities, at, shape))
    return FilecoinC1(proof=proof, comm_d=comm_d, comm_r=comm_r, replica_id=replica,
                      seed=seed, ticket=ticket, vanilla=vanilla, encoding="curio",
                      sector_num=sector_id, prover_id=prover_id, sector_id=sector_id)


def _sparse_labels(proof: RegisteredProof, replica: bytes, challenges: np.ndarray,
                   parents: np.ndarray, rng: np.random.Generator) -> dict[int, np.ndarray]:
    """Labels ``(layers, 32)`` of every touched node: random for parents, computed for the
    challenges from their parents (layer by layer, lower nodes first, so a challenge that is
    another's parent is computed before it is read)."""
    layers = proof.layers
    touched = np.unique(np.concatenate([challenges.reshape(-1), parents.reshape(-1)]))
    labels = {int(node): random_fields(rng, layers) for node in touched}
    order = np.argsort(challenges.reshape(-1), kind="stable")
    flat_challenges, flat_parents = challenges.reshape(-1)[order], parents.reshape(-1, 14)[order]
    for layer in range(layers):
        for node, row in zip(flat_challenges.tolist(), flat_parents.tolist()):
            drg = b"".join(labels[p][layer].tobytes() for p in row[:DRG_PARENTS])
            exp = b"".join(labels[p][layer - 1].tobytes() for p in row[DRG_PARENTS:]) \
                if layer else b""
            value = label(replica, layer + 1, node, repeated_parents(drg + exp))
            labels[node][layer] = np.frombuffer(value, dtype=np.uint8)
    return labels


def seal_sparse(proof: RegisteredProof, rng: np.random.Generator, *,
                ticket: bytes | None = None, seed: bytes | None = None,
                on_phase: Phase | None = None) -> FilecoinC1:
    """A C1 of ``proof`` built from what its challenges touch (see the module docstring)."""
    if proof.synthetic:
        raise FilecoinError(f"registered_proof: {proof.name} cannot be sealed sparsely (its "
                            f"challenges depend on comm_r, the root of the whole sector)")
    phase = on_phase or (lambda name: None)
    fields = lambda count: random_fields(rng, count)  # noqa: E731
    replica = fields(1)[0].tobytes()
    ticket = ticket if ticket is not None else chain_randomness(rng)
    seed = seed if seed is not None else chain_randomness(rng)
    challenges = interactive_challenges(replica, seed, proof.nodes, proof.partitions,
                                        proof.challenges_per_partition)
    parents = SdrGraph.of(proof).parents(challenges.reshape(-1)).astype(np.int64)
    parents = parents.reshape(*challenges.shape, -1)
    phase("labels of the challenged columns")
    labels = _sparse_labels(proof, replica, challenges, parents, rng)
    labels_of = lambda at: np.stack([labels[n] for n in at.reshape(-1).tolist()]).reshape(  # noqa: E731
        *at.shape, proof.layers, DOMAIN_BYTES)

    nodes = np.unique(challenges)
    arities, shape = proof.shape.level_arities(proof.nodes), proof.shape.name
    data = fields(len(nodes))
    phase("tree D paths")
    tree_d = SparseTree(nodes, data, (2,) * (proof.nodes.bit_length() - 1), sha256_nodes, fields)
    phase("tree R_last paths")
    keys = labels_of(nodes)[:, -1]
    tree_r = SparseTree(nodes, encode(keys, data), arities, poseidon_nodes, fields)
    phase("tree C paths")
    touched = np.array(sorted(labels), dtype=np.int64)
    tree_c = SparseTree(touched, column_hashes(labels_of(touched)), arities, poseidon_nodes,
                        fields)
    comm_r = _comm_r(tree_c.root, tree_r.root)
    vanilla = _vanilla(proof, challenges, parents, labels_of,
                       open_d=lambda at: tree_d.open(at, "Single"),
                       open_c=lambda at: tree_c.open(at, shape),
                       open_r=lambda at: tree_r.open(at, shape))
    return FilecoinC1(proof=proof, comm_d=tree_d.root.tobytes(), comm_r=comm_r,
                      replica_id=replica, seed=seed, ticket=ticket, vanilla=vanilla,
                      encoding="curio", sector_num=0)
