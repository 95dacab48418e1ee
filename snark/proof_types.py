"""What the pipeline needs to know about a kind of proof, and the kinds it knows.

The task graph (``tasks``) and the worker runtime (``workers``) are the same for every proof
type: validate the input, split it into units of work ("partitions" in the job state: porep's
partitions), prove each with Groth16, assemble, verify.  A ``ProofType`` supplies every
type-specific step, so neither room names a type: ``porep`` (DESIGN.md §5) and ``groth16``
(an imported snarkjs key and circom witnesses, ``snark.snarkjs.proof_type``).

A unit's witness moves through the worker's lock phases in three steps::

    work       synthesize (CPU, no lock): the checked witness, or only its compact inputs
               when the backend computes this type's witness itself (``device_witness``)
    stage      memory phase: the key resident, the work uploaded
    witness    compute phase: the handle ``groth16.compute`` reads (a device writes and
               checks the witness here); on failure the staged buffers are the caller's

Where each check runs: the producer parses (structure, sizes, canonical field elements:
milliseconds); the submit task, on a worker, runs ``check`` (the job as a whole); each unit's
witness checks that unit where it is built. Producers import this module for parsing only,
so the types load their proving and verification code lazily, on a worker.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from snark.job_input import Admission
from snark.porep.proof_type import PorepType
from snark.snarkjs.proof_type import Groth16Type

if TYPE_CHECKING:
    from snark.backend import ProverBackend
    from snark.keys import ProvingKey


class UnknownProofType(ValueError):
    """A proof type the pipeline has no implementation for."""


class ProofType(Protocol):
    name: str

    # -- the job's input --------------------------------------------------------------------
    def parse(self, raw: Any) -> Any:
        """Validated input from JSON text, bytes, a dict or the model.

        Raises a ``ValueError`` whose message names the field and the problem.
        """

    def check(self, job_input: Any) -> None:
        """Checks of the job's values as a whole (hashes), run by the submit task on a
        worker before the fan-out; a unit's own checks run with its witness."""

    def admit(self, raw: Any) -> Admission:
        """The producer's step: ``parse``'s structural checks and errors, at a producer's
        speed (many jobs, one process: no per-element Python work), giving what is stored.
        A unit of work is proved by one Groth16 proof."""

    # -- the key ----------------------------------------------------------------------------
    def circuit_name(self, job_input: Any) -> str:
        """Names the circuit without compiling it; jobs of one circuit share a key."""

    def has_key(self, job_input: Any, params_dir: Path) -> bool:
        """Whether the key is known to be there (cheap: no compile, no load)."""

    def make_key(self, job_input: Any, params_dir: Path, *, fixed_base: Any = None,
                 progress: Any = None) -> None:
        """Find or set up the proving key in params_dir (slow; once per circuit), with
        ``snark.groth16.setup``'s ``fixed_base`` and ``progress``."""

    def key_ref(self, job_input: Any) -> Hashable:
        """Names the job's key without touching the disk: a worker loads each key once and
        keeps it under ``(type name, key_ref)``."""

    def load_key(self, job_input: Any, params_dir: Path, *,
                 fixed_base: Any = None) -> ProvingKey:
        """The proving key from params_dir, made there first (with ``fixed_base``) if this
        type can make it."""

    # -- one unit of work -------------------------------------------------------------------
    def device_witness(self, backend: ProverBackend) -> bool:
        """Whether ``backend`` computes this type's witness itself from compact inputs."""

    def work(self, job_input: Any, partition: int, key: ProvingKey, *, on_device: bool) -> Any:
        """Synthesize: the checked witness limbs, or (``on_device``) its compact inputs."""

    def public_inputs(self, job_input: Any, partition: int, key: ProvingKey,
                      work: Any) -> list[int]: ...

    def stage(self, key: ProvingKey, work: Any, backend: ProverBackend) -> Any: ...

    def witness(self, key: ProvingKey, work: Any, staged: Any, backend: ProverBackend) -> Any:
        ...

    # -- the result -------------------------------------------------------------------------
    def part(self, proof: bytes, public: list[int]) -> bytes:
        """What the job stores of a proved unit: its 192-byte proof, and the public inputs
        too where the input alone does not give them back."""

    def assemble(self, job_input: Any, parts: list[bytes]) -> bytes:
        """The job's result from its units' parts, in unit order."""

    def verify(self, job_input: Any, params_dir: Path, result: bytes) -> bool: ...


PROOF_TYPES: dict[str, ProofType] = {kind.name: kind for kind in (PorepType(), Groth16Type())}


def proof_type(name: str) -> ProofType:
    try:
        return PROOF_TYPES[name]
    except KeyError:
        raise UnknownProofType(f"proof_type: unknown proof type {name!r} "
                               f"(known: {', '.join(PROOF_TYPES)})") from None
