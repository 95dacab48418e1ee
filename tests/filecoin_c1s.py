"""C1s of any registered proof's shape filled with random values (for parsing tests: the values
satisfy the schema, not the checks), and chain randomness above r (tickets and seeds as lotus
and Curio draw them more often than not)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from snark.filecoin.c1 import (COLUMNS, ColumnProofs, EncodingProofs, FilecoinC1,
                               LabelingProofs, MerklePath, PathLevel, VanillaProofs)
from snark.filecoin import registered_proofs
from snark.filecoin.registered_proofs import LABEL_PARENTS, RegisteredProof


@pytest.fixture()
def small_big_proofs(monkeypatch):
    """32 GiB and 64 GiB proofs with one partition of two challenges: their trees' shapes
    (Sub, Top) at the cost of a few challenges."""
    for name, proof in list(registered_proofs.REGISTERED_PROOFS.items()):
        if proof.sector_size >= 1 << 35:
            monkeypatch.setitem(registered_proofs.REGISTERED_PROOFS, name, dataclasses.replace(
                proof, partitions=1, minimum_challenges=2))


def above_r(rng: np.random.Generator) -> bytes:
    """32 random bytes whose little-endian value is at least r (r's top byte is 0x73)."""
    value = rng.integers(0, 256, size=32, dtype=np.uint8)
    value[31] = rng.integers(0x74, 0x100)
    return value.tobytes()


def random_domains(rng: np.random.Generator, *shape: int) -> np.ndarray:
    values = rng.integers(0, 256, size=(*shape, 32), dtype=np.uint8)
    values[..., 31] &= 0x3F
    return values


def random_path(rng, lead: tuple[int, ...], shape: str, arities: tuple[int, ...]) -> MerklePath:
    levels = tuple(PathLevel(a, random_domains(rng, *lead, a - 1),
                             rng.integers(0, a, size=lead).astype(np.int64)) for a in arities)
    return MerklePath(shape, random_domains(rng, *lead), random_domains(rng, *lead), levels)


def random_c1(proof: RegisteredProof, rng: np.random.Generator, **extra) -> FilecoinC1:
    p, k, layers = proof.partitions, proof.challenges_per_partition, proof.layers
    lead, cols = (p, k), (p, k, COLUMNS)
    arities = proof.shape.level_arities(proof.nodes)
    nodes = lambda *shape: rng.integers(0, proof.nodes, size=shape).astype(np.int64)  # noqa: E731
    vanilla = VanillaProofs(
        comm_d=random_path(rng, lead, "Single", (2,) * (proof.nodes.bit_length() - 1)),
        comm_r_last=random_path(rng, lead, proof.shape.name, arities),
        columns=ColumnProofs(nodes(*cols), random_domains(rng, *cols, layers),
                             random_path(rng, cols, proof.shape.name, arities)),
        labeling=LabelingProofs(random_domains(rng, p, k, layers, LABEL_PARENTS),
                                np.broadcast_to(np.arange(1, layers + 1), (p, k, layers)).copy(),
                                nodes(p, k, layers)),
        encoding=EncodingProofs(random_domains(rng, p, k, LABEL_PARENTS),
                                np.full(lead, layers, dtype=np.int64), nodes(p, k)))
    commitments = {name: random_domains(rng).tobytes() for name in ("comm_d", "comm_r",
                                                                     "replica_id")}
    commitments |= {name: above_r(rng) for name in ("seed", "ticket")}
    return FilecoinC1(proof=proof, vanilla=vanilla, **commitments, **extra)
