"""StackedCircuit's fingerprints: the figures rust-fil-proofs and cuzk record for its R1CS.

README §3 of shared/filecoin: the 8-node, 2-layer, 1-challenge test circuits of
``storage-proofs-porep/tests/stacked_circuit.rs`` (constraints as bellperson's test
constraint system counts them, without the input rows; 22 inputs with ONE), and the 32 GiB
partition as cuzk's recording constraint system measured it (rust-fil-proofs PR #1325,
curio ``extern/cuzk/cuzk-project.md``).
"""

from __future__ import annotations

import pytest

from snark.filecoin import registered_proof
from snark.filecoin.circuit import StackedShape, circuit_fingerprint
from snark.filecoin.registered_proofs import TreeShape


@pytest.mark.parametrize("nodes, tree, constraints", [
    (8, TreeShape(8, 0, 0), 1_199_620),
    (8, TreeShape(2, 0, 0), 1_206_212),
    (32, TreeShape(8, 4, 0), 1_296_576),
    (64, TreeShape(8, 4, 2), 1_346_982),
])
def test_test_circuits_match_rust_fil_proofs(nodes, tree, constraints):
    fp = circuit_fingerprint(StackedShape(nodes, 2, 1, tree))
    assert fp.constraints - fp.input_constraints == constraints
    assert fp.inputs == 22


@pytest.mark.slow
def test_32gib_partition_matches_cuzks_recording():
    """130 M constraints counted from the templates (about 1 GB of memory, not 25 GB)."""
    fp = circuit_fingerprint(StackedShape.of(registered_proof("StackedDrg32GiBV1_1")))
    assert fp.constraints - fp.input_constraints == 130_278_541
    assert fp.input_constraints == 328 and fp.inputs == 328
    assert fp.constraints == 130_278_869
    assert fp.aux == 130_169_893
    assert (fp.nnz_a, fp.nnz_b, fp.nnz_c) == (309_405_051, 130_327_340, 282_656_500)
    assert (fp.a_aux_density, fp.b_input_density, fp.b_aux_density) == (
        129_753_292, 1, 33_112_281)
    assert fp.domain_log2 == 27
