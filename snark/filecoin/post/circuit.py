"""``FallbackPoStCircuit`` (WindowPoSt and WinningPoSt) exactly as rust-fil-proofs builds it.

Per sector (``storage-proofs-post/src/fallback/circuit.rs`` ``Sector::synthesize``): alloc
comm_r_last, comm_c, comm_r; comm_r made an input; ``comm_r·1 = Poseidon2(comm_c,
comm_r_last)``; then per challenge a ``PoRCircuit`` with a private root: the leaf allocated,
its path to comm_r_last (the levels of PoRep's ``enforce_inclusion``), the path's index bits
packed into one input. bellperson may synthesize chunks of sectors in parallel and join them
(``synthesize_extendable``): the same R1CS.

Public inputs (``FallbackPoStCompound::generate_public_inputs``, ONE left out): per circuit
sector its comm_r, then each challenged leaf's index; a short partition's last sector's
inputs repeated. The gadgets are PoRep's (``snark.filecoin.circuit``), stamped in bulk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.filecoin.c1 import PathLevel, map_arrays
from snark.filecoin.circuit import BOOK
from snark.filecoin.circuit.inputs import field_ints
from snark.filecoin.circuit.por import enforce_equal, enforce_inclusion, level_data
from snark.filecoin.circuit.poseidon import poseidon_hash
from snark.filecoin.circuit.stacked import alloc_value, make_input
from snark.filecoin.domain import to_int
from snark.filecoin.post.challenges import circuit_challenges
from snark.filecoin.post.registered_proofs import WINNING, PostProof
from snark.filecoin.post.vanilla import SectorProofs
from snark.filecoin.registered_proofs import TreeShape
from snark.gadgets.family import CircuitFamily, flat_values, numbered
from snark.poseidon.neptune import neptune_constants


@dataclass(frozen=True)
class PostShape:
    """What fixes the circuit: sector nodes, tree shape, sectors and challenges a sector."""

    nodes: int
    tree: TreeShape
    sectors: int
    challenges: int

    @classmethod
    def of(cls, proof: PostProof) -> "PostShape":
        return cls(proof.nodes, proof.shape, proof.sector_count, proof.challenge_count)

    @property
    def arities(self) -> tuple[int, ...]:
        return self.tree.level_arities(self.nodes)

    @property
    def name(self) -> str:
        return (f"fallback-post-{self.nodes}n-{self.sectors}s-{self.challenges}c-"
                f"{self.tree.display}")


@dataclass(frozen=True)
class PostData:
    """A partition's private values: per circuit sector its roots, per challenge the leaf
    and its path (``index (S, C)`` and ``siblings (S, C, arity − 1)`` per level); ints mod r
    in object arrays."""

    comm_r: np.ndarray        # (S,)
    comm_c: np.ndarray        # (S,)
    comm_r_last: np.ndarray   # (S,)
    leaf: np.ndarray          # (S, C)
    path: tuple[PathLevel, ...]

    @classmethod
    def blank(cls, shape: PostShape) -> "PostData":
        s, c = shape.sectors, shape.challenges
        zeros = lambda *dims: np.zeros(dims, dtype=object)  # noqa: E731
        return cls(zeros(s), zeros(s), zeros(s), zeros(s, c), tuple(
            PathLevel(a, zeros(s, c, a - 1), np.zeros((s, c), np.int64))
            for a in shape.arities))

    @classmethod
    def of(cls, sectors: SectorProofs) -> "PostData":
        """From the circuit sectors (``checks.circuit_sectors``)."""
        p = sectors.paths
        return cls(field_ints(sectors.comm_r), field_ints(sectors.comm_c),
                   field_ints(sectors.comm_r_last), field_ints(p.leaf), tuple(
                       PathLevel(level.arity, field_ints(level.siblings),
                                 np.asarray(level.index, np.int64)) for level in p.levels))

    def _replace(self, convert) -> "PostData":
        return map_arrays(self, convert)

    def flatten(self) -> np.ndarray:
        """Every value, in field order, as one object array (what a plan reads by index)."""
        return flat_values(self._replace)

    @classmethod
    def symbolic(cls, shape: PostShape) -> "PostData":
        """The blank data with every value replaced by its position in ``flatten``."""
        return numbered(cls.blank(shape)._replace)


def _value(v) -> dict:
    return {"value": np.asarray(v, dtype=object)}


def synthesize(cs, shape: PostShape, data: PostData, constants_for) -> None:
    poseidon = {a: constants_for(a) for a in {2, *shape.arities}}
    arities = list(shape.arities)
    for s in range(shape.sectors):
        comm_r_last = alloc_value(cs, data=_value(data.comm_r_last[s]))
        comm_c = alloc_value(cs, data=_value(data.comm_c[s]))
        comm_r = alloc_value(cs, data=_value(data.comm_r[s]))
        make_input(cs, comm_r)
        enforce_equal(cs, comm_r, poseidon_hash(cs, [comm_c, comm_r_last],
                                                constants=poseidon[2]))
        for n in range(shape.challenges):
            leaf = alloc_value(cs, data=_value(data.leaf[s, n]))
            path = [level_data(level.index[s, n], level.siblings[s, n]) for level in data.path]
            enforce_inclusion(cs, leaf, comm_r_last, path, arities, poseidon.get)


FALLBACK_POST = CircuitFamily(synthesize, PostData.blank, PostData.symbolic, PostData.flatten,
                              neptune_constants, BOOK)
structure = FALLBACK_POST.structure
circuit_fingerprint = FALLBACK_POST.fingerprint
circuit_r1cs = FALLBACK_POST.r1cs
witness = FALLBACK_POST.witness


def public_inputs(proof: PostProof, randomness: bytes, sector_ids: list[int],
                  comm_rs: list[bytes], partition_index: int) -> list[int]:
    """``generate_public_inputs`` of one partition (without ONE) from the request alone:
    the sectors' ids and comm_r, the randomness and the partition index."""
    leaves = circuit_challenges(proof, randomness, sector_ids, partition_index)
    comm_r = [to_int(c) for c in comm_rs]
    if proof.kind == WINNING:  # its one sector is every circuit sector
        comm_r *= proof.sector_count
    comm_r += comm_r[-1:] * (proof.sector_count - len(comm_r))
    out: list[int] = []
    for value, row in zip(comm_r, leaves.tolist()):
        out += [value, *row]
    return out
