"""A parsed C1 (``SealCommitPhase1Output``) as numpy arrays, challenge-major.

Curio hands a C2 prover ``{"SectorNum", "Phase1Out": base64(JSON), "SectorSize"}``; the JSON
is ``rust-filecoin-proofs-api:src/seal.rs`` ``SealCommitPhase1Output``: the registered proof,
the commitments, and one vanilla proof per challenge (``rust-fil-proofs:storage-proofs-porep/
src/stacked/vanilla/params.rs`` ``Proof``). ``parse_c1`` (``c1_schema``) reads either form;
this module is the result.

Every field element is its 32-byte little-endian representation: ``uint8 (..., 32)``, below
the modulus r; ``snark.filecoin.domain.to_limbs`` views any of them as Fr limbs ``(..., 4)``.
The ticket and the seed are not field elements but 32 raw bytes of chain randomness
(rust-fil-proofs types them ``[u8; 32]`` and only hashes them), any value, often above r.
Arrays of a ``VanillaProofs`` lead with the challenge axes: ``(partitions, challenges)`` on
``FilecoinC1.vanilla``, ``(challenges,)`` on ``FilecoinC1.partition(p)``. Column openings are
stacked in the order of the proof: c_x, the 6 DRG parents, the 8 expander parents.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from snark.filecoin.domain import DOMAIN_BYTES
from snark.filecoin.registered_proofs import DRG_PARENTS, LABEL_PARENTS, RegisteredProof

#: Column openings per challenge, stacked: c_x, then DRG parents, then expander parents.
C_X, DRG, EXP = slice(0, 1), slice(1, 1 + DRG_PARENTS), slice(1 + DRG_PARENTS, None)
COLUMNS = 15
#: The commitments of a C1, in the raw form's field order.
COMMITMENTS = ("comm_r", "comm_d", "replica_id", "seed", "ticket")
#: Those of them (and the optional prover_id) that are raw bytes, not field elements.
RAW_BYTES = ("seed", "ticket", "prover_id")


def map_arrays(value, fn):
    """``value`` (a nested dataclass of arrays) with every array replaced by ``fn(array)``,
    visited in field order."""
    if isinstance(value, np.ndarray):
        return fn(value)
    if isinstance(value, tuple):
        return tuple(map_arrays(v, fn) for v in value)
    if dataclasses.is_dataclass(value):
        return dataclasses.replace(value, **{f.name: map_arrays(getattr(value, f.name), fn)
                                             for f in dataclasses.fields(value)})
    return value


@dataclass(frozen=True)
class PathLevel:
    """One element of a Merkle path: the ``arity − 1`` sibling hashes and the node's
    position among its ``arity`` siblings (``index``, a digit 0 … arity−1)."""

    arity: int
    siblings: np.ndarray  # uint8 (..., arity - 1, 32)
    index: np.ndarray     # int64 (...)


@dataclass(frozen=True)
class MerklePath:
    """An inclusion proof: leaf, claimed root and the levels from the leaf up. ``shape`` is
    the serde variant it came in (``Single``, ``Sub`` or ``Top``); a ``Sub`` proof's last
    level is its sub-tree level, a ``Top`` proof's last two its sub and top levels."""

    shape: str
    leaf: np.ndarray   # uint8 (..., 32)
    root: np.ndarray   # uint8 (..., 32)
    levels: tuple[PathLevel, ...]

    def node_index(self) -> np.ndarray:
        """The leaf index the digits spell (least significant level first)."""
        index = np.zeros(self.leaf.shape[:-1], dtype=np.int64)
        weight = 1
        for level in self.levels:
            index = index + level.index * weight
            weight *= level.arity
        return index


@dataclass(frozen=True)
class ColumnProofs:
    """The 15 column openings of each challenge into tree C: c_x, 6 DRG and 8 expander
    parents (``C_X``, ``DRG``, ``EXP`` slice the second-to-leading axis)."""

    index: np.ndarray  # int64 (..., 15): column.index
    rows: np.ndarray   # uint8 (..., 15, layers, 32): the node's label in layers 1 … L
    path: MerklePath   # leading (..., 15)


@dataclass(frozen=True)
class LabelingProofs:
    """Per layer 1 … L: the 37 parent labels hashed into the challenge's label."""

    parents: np.ndarray      # uint8 (..., layers, 37, 32)
    layer_index: np.ndarray  # int64 (..., layers)
    node: np.ndarray         # int64 (..., layers)


@dataclass(frozen=True)
class EncodingProofs:
    """The last layer's parents again: the label that is the encoding key."""

    parents: np.ndarray      # uint8 (..., 37, 32)
    layer_index: np.ndarray  # int64 (...)
    node: np.ndarray         # int64 (...)


@dataclass(frozen=True)
class VanillaProofs:
    """The vanilla proofs of many challenges, one entry per challenge on the leading axes."""

    comm_d: MerklePath        # tree D (binary SHA-256): the data leaf
    comm_r_last: MerklePath   # tree R_last (Poseidon, the proof's shape): the replica leaf
    columns: ColumnProofs
    labeling: LabelingProofs
    encoding: EncodingProofs

    @property
    def nodes(self) -> np.ndarray:
        """The challenged nodes as c_x names them (``checks`` holds every other place that
        names them to this)."""
        return self.columns.index[..., 0]

    @property
    def comm_c(self) -> np.ndarray:
        """Tree C's root as c_x's opening claims it (uint8 (..., 32))."""
        return self.columns.path.root[..., 0, :]

    def __getitem__(self, key) -> "VanillaProofs":
        return map_arrays(self, lambda array: array[key])

    @classmethod
    def empty(cls, proof: RegisteredProof, lead: tuple[int, ...]) -> "VanillaProofs":
        """Zero-filled proofs of ``proof``'s shapes for challenges ``lead`` (e.g. (P, K))."""
        arities = proof.shape.level_arities(proof.nodes)
        layers, cols = proof.layers, (*lead, COLUMNS)

        def fields(*shape: int) -> np.ndarray:
            return np.zeros((*shape, DOMAIN_BYTES), dtype=np.uint8)

        def ints(*shape: int) -> np.ndarray:
            return np.zeros(shape, dtype=np.int64)

        def path(shape: str, arities: tuple[int, ...], lead: tuple[int, ...]) -> MerklePath:
            return MerklePath(shape, fields(*lead), fields(*lead), tuple(
                PathLevel(a, fields(*lead, a - 1), ints(*lead)) for a in arities))

        return cls(
            comm_d=path("Single", (2,) * (proof.nodes.bit_length() - 1), lead),
            comm_r_last=path(proof.shape.name, arities, lead),
            columns=ColumnProofs(ints(*cols), fields(*cols, layers),
                                 path(proof.shape.name, arities, cols)),
            labeling=LabelingProofs(fields(*lead, layers, LABEL_PARENTS), ints(*lead, layers),
                                    ints(*lead, layers)),
            encoding=EncodingProofs(fields(*lead, LABEL_PARENTS), ints(*lead), ints(*lead)))


@dataclass(frozen=True)
class FilecoinC1:
    """One sector's C1. ``vanilla`` leads with ``(partitions, challenges per partition)``.

    ``encoding`` is ``"curio"`` (the wrapper, whose ``SectorNum`` is ``sector_num``) or
    ``"raw"``. ``prover_id`` and ``sector_id`` are known when the job names them (the
    wrapper's optional ``MinerId`` with its ``SectorNum``, or the raw form's optional
    ``prover_id`` and ``sector_id``); then replica_id can be checked against them.
    """

    proof: RegisteredProof
    comm_d: bytes
    comm_r: bytes
    replica_id: bytes
    seed: bytes
    ticket: bytes
    vanilla: VanillaProofs
    encoding: str = "raw"
    sector_num: int | None = None
    prover_id: bytes | None = None
    sector_id: int | None = None

    def partition(self, p: int) -> VanillaProofs:
        """Partition ``p``'s vanilla proofs: arrays lead with the challenge axis."""
        if not 0 <= p < self.proof.partitions:
            raise IndexError(f"partition {p} of {self.proof.partitions}")
        return self.vanilla[p]
