"""The proof-type registry: names and former names, one worker half per type and host."""

from __future__ import annotations

import pytest

from snark.porep.proof_type import PorepType
from snark.proof_types import Storage
from snark.registry import (UnknownProofType, aliases, names, proof_type,
                            proof_type_for_new_job, register, worker_half)


def test_built_in_types_and_the_former_name():
    assert {"porep-demo", "circom", "groth16"} <= set(names())
    assert proof_type("groth16") is proof_type("circom")
    assert aliases(proof_type("circom")) == ("groth16",)
    with pytest.raises(UnknownProofType, match=r"proof_type: unknown proof type 'winning' "
                                               r"\(known: .*circom.*groth16.*porep"):
        proof_type("winning")


def test_the_demos_retired_name_runs_stored_jobs_only():
    """Jobs stored as 'porep' before the rename still find their type; a new job under that
    name is refused with a pointer, so nobody takes the demo circuit for Filecoin's."""
    demo = proof_type("porep-demo")
    assert proof_type("porep") is demo and "porep" in aliases(demo)
    assert "porep" not in names() and proof_type_for_new_job("porep-demo") is demo
    with pytest.raises(UnknownProofType, match=r"'porep' is retired: .*'porep-demo'.*'filecoin'"):
        proof_type_for_new_job("porep")


def test_a_name_belongs_to_one_type(tmp_path):
    class Impostor(PorepType):
        pass

    with pytest.raises(ValueError, match="'porep-demo' is registered already"):
        register(Impostor(), worker="somewhere.else:Worker")
    with pytest.raises(ValueError, match="not 'module:attribute'"):
        register(Impostor(), worker="no_colon")
    register(proof_type("porep-demo"), worker="snark.porep.worker:PorepWorker")  # the same again


def test_one_worker_half_per_type_and_storage(tmp_path):
    porep = proof_type("porep-demo")
    here, there = Storage(tmp_path / "a"), Storage(tmp_path / "b", tmp_path / "shared")
    assert worker_half(porep, here) is worker_half(porep, Storage(tmp_path / "a"))
    assert worker_half(porep, there) is not worker_half(porep, here)
    assert worker_half(porep, there).params_dir == tmp_path / "b"
