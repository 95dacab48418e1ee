"""What the pipeline needs to know about a kind of proof, and the kinds it knows.

The task graph is the same for every proof type: parse the input (the producer), check it
and make the key (the submit task), prove each partition, assemble, verify.  A
``ProofType`` supplies the type-specific steps; ``porep`` (DESIGN.md §5) is the one there is.

Where each check runs: the producer parses (structure, sizes, canonical field elements:
milliseconds); the submit task, on a worker, runs ``check`` (values of the job as a whole);
each partition's witness checks that partition's Merkle paths where it is built (the GPU
kernel or ``partition_witness(check=True)``).  The producer side of this module imports
the input model only: proving and verification code loads on a worker, when first used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from snark.porep.c1 import C1, C1Error, parse_c1


class UnknownProofType(ValueError):
    """A proof type the pipeline has no implementation for."""


class ProofType(Protocol):
    name: str

    def parse(self, raw: Any) -> Any:
        """Validated input from JSON text, bytes, a dict or the model.

        Raises a ``ValueError`` whose message names the field and the problem.
        """

    def check(self, job_input: Any) -> None:
        """Checks of the job's values as a whole (hashes), run by the submit task before
        the fan-out; the per-partition checks run with each partition's witness."""

    def canonical_json(self, job_input: Any) -> str:
        """One JSON text per input value: what is stored and what idempotency compares."""

    def partitions(self, job_input: Any) -> int: ...

    def circuit_name(self, job_input: Any) -> str:
        """Names the circuit without compiling it; jobs of one circuit share a key."""

    def has_key(self, job_input: Any, params_dir: Path) -> bool:
        """Whether the key is known to be there (cheap: no compile, no load)."""

    def make_key(self, job_input: Any, params_dir: Path, *, fixed_base: Any = None,
                 progress: Any = None) -> None:
        """Find or set up the proving key in params_dir (slow; once per circuit), with
        ``snark.groth16.setup``'s ``fixed_base`` and ``progress``."""

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
        # replica_id and every challenge index from the seed (P·K hashes); the Merkle paths
        # and the replica encoding are checked per partition, in its witness.
        from snark.porep.vanilla import check_public_inputs

        check_public_inputs(job_input)

    def canonical_json(self, job_input: C1) -> str:
        return job_input.to_json()

    def partitions(self, job_input: C1) -> int:
        return job_input.partitions

    def circuit_name(self, job_input: C1) -> str:
        return job_input.circuit_name

    def has_key(self, job_input: C1, params_dir: Path) -> bool:
        # Only look for the recorded directory: loading (and hashing) a large key here would
        # be wasted, the worker runtime loads it once per process anyway.
        from snark.porep.prove import has_recorded_key

        return has_recorded_key(job_input, params_dir)

    def make_key(self, job_input: C1, params_dir: Path, *, fixed_base: Any = None,
                 progress: Any = None) -> None:
        from snark.porep.prove import load_or_setup_key

        load_or_setup_key(job_input, params_dir, fixed_base=fixed_base, progress=progress)

    def verify(self, job_input: C1, params_dir: Path, proof: bytes) -> bool:
        from snark.porep.prove import load_verifying_key, verify_c1

        return verify_c1(job_input, load_verifying_key(job_input, params_dir), proof, params_dir)


PROOF_TYPES: dict[str, ProofType] = {kind.name: kind for kind in (PorepType(),)}


def proof_type(name: str) -> ProofType:
    try:
        return PROOF_TYPES[name]
    except KeyError:
        raise UnknownProofType(f"proof_type: unknown proof type {name!r} "
                               f"(known: {', '.join(PROOF_TYPES)})") from None
