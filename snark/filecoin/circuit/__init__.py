"""Filecoin's PoRep circuit, ``StackedCircuit``, exactly as rust-fil-proofs builds it.

``structure(shape)`` runs the circuit's synthesis on a blank partition (the R1CS does not
depend on values) and keeps the program for the process; ``fingerprint`` counts its
constraints, inputs, auxiliaries, non-zeros and densities from the templates;
``circuit_r1cs`` stamps A, B and C; ``witness`` evaluates one partition from its private
data by the shape's ``witness_plan`` (made once: a partition costs no synthesis).
The shape of a registered proof is ``StackedShape.of(proof)``.
"""

from __future__ import annotations

from functools import lru_cache

from snark.filecoin.circuit.stacked import PartitionData, StackedShape, synthesize
from snark.gadgets.assembly import Fingerprint, fingerprint, to_r1cs
from snark.gadgets.evaluation import Witness, WitnessPlan
from snark.gadgets.program import Program, TemplateBook
from snark.poseidon.neptune import neptune_constants
from snark.r1cs import R1CS

#: One book for the process: shapes share most of their templates (SHA-256 blocks, Poseidon).
_BOOK = TemplateBook()


@lru_cache(maxsize=4)
def structure(shape: StackedShape) -> Program:
    program = Program(_BOOK)
    synthesize(program, shape, PartitionData.blank(shape), neptune_constants)
    return program


def circuit_fingerprint(shape: StackedShape) -> Fingerprint:
    return fingerprint(structure(shape))


@lru_cache(maxsize=2)
def circuit_r1cs(shape: StackedShape) -> R1CS:
    return to_r1cs(structure(shape))


@lru_cache(maxsize=4)
def witness_plan(shape: StackedShape) -> WitnessPlan:
    """The shape's evaluation order, from its program on symbolic data (made once)."""
    program = Program(_BOOK, keep_data=True)
    synthesize(program, shape, PartitionData.symbolic(shape), neptune_constants)
    return WitnessPlan(program)


def witness(shape: StackedShape, data: PartitionData) -> Witness:
    """One partition's full assignment: the shape's plan run on the partition's values."""
    return witness_plan(shape).run(data.flatten())


__all__ = ["PartitionData", "StackedShape", "circuit_fingerprint", "circuit_r1cs", "structure",
           "witness"]
