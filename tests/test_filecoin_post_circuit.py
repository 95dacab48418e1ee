"""FallbackPoStCircuit's fingerprints (known-answers-snap-post.json): the four test shapes
and the bench shape of ``storage-proofs-post/tests/fallback_circuit.rs``, the 32 GiB and
64 GiB WindowPoSt partitions of ``filecoin-proofs/src/constants.rs`` (counted from the
templates, as PoRep's large fingerprints are), and the figures the sheet derived (WinningPoSt
at every size, 370,590 at 32 GiB, is not published anywhere: derived from a rebuild whose
gadgets hit every published row)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snark.filecoin.post.circuit import PostShape, circuit_fingerprint
from snark.filecoin.post.registered_proofs import POST_PROOFS, for_size, post_proof
from snark.filecoin.registered_proofs import TreeShape

FINGERPRINTS = json.loads((Path(__file__).parent / "data" / "filecoin" /
                           "known-answers-snap-post.json").read_text())["fingerprints"]
SIZES = {"2KiB": 1 << 11, "8MiB": 1 << 23, "512MiB": 1 << 29, "32GiB": 1 << 35,
         "64GiB": 1 << 36}


def _published(name: str) -> dict:
    return next(row for row in FINGERPRINTS["published"] if row["circuit"] == name)


@pytest.mark.parametrize("name, shape", [
    ("FallbackPoSt test 8-0-0, 64 leaves, 3 sectors x 5", PostShape(64, TreeShape(8, 0, 0), 3, 5)),
    ("FallbackPoSt test 8-4-0, 256 leaves, 3 sectors x 5",
     PostShape(256, TreeShape(8, 4, 0), 3, 5)),
    ("FallbackPoSt test 8-4-2, 512 leaves, 3 sectors x 5",
     PostShape(512, TreeShape(8, 4, 2), 3, 5)),
    ("FallbackPoSt test 8-0-0, 64 leaves, 2 sectors x 5", PostShape(64, TreeShape(8, 0, 0), 2, 5)),
    ("FallbackPoSt bench 32GiB 8-0-0, 5 sectors x 10",
     PostShape(1 << 30, TreeShape(8, 0, 0), 5, 10)),
])
def test_rust_fil_proofs_test_and_bench_shapes(name, shape):
    row = _published(name)
    fp = circuit_fingerprint(shape)
    assert fp.constraints - fp.input_constraints == row["constraints"]
    assert fp.inputs == row.get("inputs", 1 + shape.sectors * (1 + shape.challenges))


def test_derived_winning_and_small_window_figures():
    derived = FINGERPRINTS["derived"]
    for size, constraints in derived["WinningPoSt"].items():
        if size == "inputs":
            continue
        fp = circuit_fingerprint(PostShape.of(for_size("winning", SIZES[size])))
        assert (fp.constraints - fp.input_constraints, fp.inputs) == (
            constraints, derived["WinningPoSt"]["inputs"])
    for size, constraints in derived["WindowPoSt small (2 sectors)"].items():
        if size == "inputs":
            continue
        for proof in POST_PROOFS.values():
            if proof.kind == "window" and proof.sector_size == SIZES[size]:
                fp = circuit_fingerprint(PostShape.of(proof))
                assert fp.constraints - fp.input_constraints == constraints
                assert fp.inputs == 23


def test_winning_32gib_detail_is_the_derived_one():
    detail = FINGERPRINTS["derived"]["WinningPoSt 32GiB detail"]
    fp = circuit_fingerprint(PostShape.of(post_proof(3)))
    assert fp.constraints - fp.input_constraints == 370_590 and fp.inputs == 133
    assert {k: getattr(fp, k) for k in detail} == detail


@pytest.mark.slow
@pytest.mark.parametrize("go_id, name", [(13, "WindowPoSt 32GiB"), (14, "WindowPoSt 64GiB")])
def test_window_post_partitions_match_rust_fil_proofs(go_id, name):
    """2,349 (2,300) sectors × 10 challenges counted from the templates (about 25 s each)."""
    row = _published(name)
    fp = circuit_fingerprint(PostShape.of(post_proof(go_id)))
    assert fp.constraints - fp.input_constraints == row["constraints"]
    assert fp.inputs == fp.input_constraints == row["inputs"]
    if go_id == 13:
        detail = FINGERPRINTS["derived"]["WindowPoSt 32GiB detail"]
        assert {k: getattr(fp, k) for k in detail} == detail
