"""Filecoin's PoRep circuit, ``StackedCircuit``, exactly as rust-fil-proofs builds it.

``structure(shape)`` runs the circuit's synthesis on a blank partition (the R1CS does not
depend on values) and keeps the program for the process; ``fingerprint`` counts its
constraints, inputs, auxiliaries, non-zeros and densities from the templates;
``circuit_r1cs`` stamps A, B and C; ``witness`` evaluates one partition from its private
data by the shape's ``witness_plan`` (made once: a partition costs no synthesis).
The shape of a registered proof is ``StackedShape.of(proof)``.
"""

from __future__ import annotations

from snark.filecoin.circuit.stacked import PartitionData, StackedShape, synthesize
from snark.gadgets.family import CircuitFamily
from snark.gadgets.program import TemplateBook
from snark.poseidon.neptune import neptune_constants

#: One book for the process: shapes share most of their templates (SHA-256 blocks, Poseidon),
#: and so do the other Filecoin circuits (``snark.filecoin.post.circuit``).
BOOK = TemplateBook()
STACKED = CircuitFamily(synthesize, PartitionData.blank, PartitionData.symbolic,
                        PartitionData.flatten, neptune_constants, BOOK)
structure = STACKED.structure
circuit_fingerprint = STACKED.fingerprint
circuit_r1cs = STACKED.r1cs
witness_plan = STACKED.witness_plan
witness = STACKED.witness

__all__ = ["BOOK", "PartitionData", "StackedShape", "circuit_fingerprint", "circuit_r1cs",
           "structure", "witness", "witness_plan"]
