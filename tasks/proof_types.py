"""What the pipeline needs to know about a kind of proof, and the kinds it knows.

The task graph is the same for every proof type: validate the input, split it into
partitions, prove each, assemble, verify.  A ``ProofType`` supplies the type-specific
steps; ``porep`` (DESIGN.md §5) is the one there is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from snark.params import key_dir
from snark.porep.c1 import C1, C1Error, parse_c1
from snark.porep.prove import (circuit_id_for, load_or_setup_key, load_verifying_key,
                                verify_c1)
from snark.porep.vanilla import verify_vanilla


class UnknownProofType(ValueError):
    """A proof type the pipeline has no implementation for."""


class ProofType(Protocol):
    name: str

    def parse(self, raw: Any) -> Any:
        """Validated input from JSON text, bytes, a dict or the model.

        Raises a ``ValueError`` whose message names the field and the problem.
        """

    def check(self, job_input: Any) -> None:
        """Native checks of the input's values, before anything is enqueued."""

    def canonical_json(self, job_input: Any) -> str:
        """One JSON text per input value: what is stored and what idempotency compares."""

    def partitions(self, job_input: Any) -> int: ...

    def circuit_id(self, job_input: Any) -> str:
        """Names the proving key; jobs with the same circuit share it."""

    def has_key(self, job_input: Any, params_dir: Path) -> bool: ...

    def make_key(self, job_input: Any, params_dir: Path) -> None:
        """Set up the proving key and cache it in params_dir (slow; once per circuit)."""

    def verify(self, job_input: Any, params_dir: Path, proof: bytes) -> bool: ...


class PorepType:
    name = "porep"

    def parse(self, raw: Any) -> C1:
        # Models and dicts go through JSON text too, so one size limit and one validation
        # apply to every way of handing in a C1 (a model may be built without validation).
        if isinstance(raw, C1):
            raw = raw.to_json()
        elif isinstance(raw, dict):
            raw = json.dumps(raw)
        elif not isinstance(raw, (str, bytes)):
            raise C1Error(f"c1: expected JSON text, bytes, a dict or a C1, "
                          f"got {type(raw).__name__}")
        return parse_c1(raw)

    def check(self, job_input: C1) -> None:
        verify_vanilla(job_input)

    def canonical_json(self, job_input: C1) -> str:
        return job_input.to_json()

    def partitions(self, job_input: C1) -> int:
        return job_input.partitions

    def circuit_id(self, job_input: C1) -> str:
        return circuit_id_for(job_input)

    def has_key(self, job_input: C1, params_dir: Path) -> bool:
        # Only look for the directory: loading (and hashing) a large key here would be
        # wasted, the worker runtime loads it once per process anyway.
        return key_dir(params_dir, circuit_id_for(job_input, params_dir)).exists()

    def make_key(self, job_input: C1, params_dir: Path) -> None:
        load_or_setup_key(job_input, params_dir)

    def verify(self, job_input: C1, params_dir: Path, proof: bytes) -> bool:
        return verify_c1(job_input, load_verifying_key(job_input, params_dir), proof, params_dir)


PROOF_TYPES: dict[str, ProofType] = {kind.name: kind for kind in (PorepType(),)}


def proof_type(name: str) -> ProofType:
    try:
        return PROOF_TYPES[name]
    except KeyError:
        raise UnknownProofType(f"proof_type: unknown proof type {name!r} "
                               f"(known: {', '.join(PROOF_TYPES)})") from None
