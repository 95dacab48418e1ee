"""The proof-type seam (docs/ARCHITECTURE.md §5): what the pipeline needs to know about a
kind of proof, in two halves.

The task graph (``tasks``) and the worker runtime (``workers``) are the same for every proof
type: admit the input, check it, split it into units of work ("partitions" in the job
state), prove each with Groth16, assemble, verify. A type supplies every type-specific step
in two halves, registered together (``snark.registry``) under its name:

- ``ProofType[In]``, the **producer half**: parse and admit an input (``In``, the parsed
  input) within the limits the caller passes, and name its key. Producers (the API, the
  CLI, the intake) import it, so it imports nothing that proves, hashes or touches a GPU.
- ``ProofWorker[In, W]``, the **worker half**: the job's checks, its key, each unit's work
  (``W``) and public inputs, what the job stores of a unit, assembly and verification. It is
  imported on a worker only, once, by the registry; it is made for the ``Storage`` of the
  host it runs on.

A unit's work moves through the worker's lock phases (``snark.unit_work.UnitWork``)::

    work      synthesize (CPU, no lock): the checked witness, or only its compact inputs
              when the backend has this type's device steps (``ProverBackend.extension``)
    stage     memory phase: the key resident, the work uploaded
    handle    compute phase: the handle ``groth16.compute`` reads (a device writes and
              checks the witness here); on failure the staged buffers are the caller's

Where each check runs: the producer parses (structure, sizes, canonical field elements:
milliseconds); the submit task, on a worker, runs ``check`` (the job as a whole); each unit's
witness checks that unit where it is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from snark.job_input import Admission, InputLimits

if TYPE_CHECKING:
    from config.settings import Settings
    from snark.backend import ProverBackend
    from snark.groth16 import FixedBaseMul, SetupProgress
    from snark.keys import ProvingKey
    from snark.unit_work import UnitWork

#: A type's parsed job input.
In = TypeVar("In")
#: A worker's job input: only taken, never given back, so any wider input type serves.
WorkerIn = TypeVar("WorkerIn", contravariant=True)
#: What a type's synthesize step leaves of one unit.
W = TypeVar("W", bound="UnitWork")


@dataclass(frozen=True)
class Storage:
    """Where a worker finds what a job names: proving keys (``params_dir``) and inputs too
    large for Redis (``shared_dir``: storage every worker mounts, each host at its own
    mount point; inputs name paths relative to it)."""

    params_dir: Path
    shared_dir: Path | None = None

    @classmethod
    def of(cls, settings: Settings) -> "Storage":
        return cls(Path(settings.params_dir), settings.witness_dir)


class ProofType(Protocol[In]):
    """The producer half of a proof type."""

    #: The type's name in job state, on the CLI (``--type``) and in intake requests.
    name: str

    def parse(self, raw: object, limits: InputLimits) -> In:
        """The validated input from JSON text, bytes, a dict or the model; a ``ValueError``
        whose message names the field and the problem."""

    def admit(self, raw: object, limits: InputLimits) -> Admission:
        """The producer's step: ``parse``'s checks and errors at a producer's speed (many
        jobs, one process: no per-element Python work), giving what is stored."""

    def key_name(self, job_input: In) -> str:
        """Names the job's proving key without touching the disk: jobs of one name share a
        key (one setup at a time, one load per worker process)."""


class ProofWorker(Protocol[WorkerIn, W]):
    """The worker half of a proof type, for one host's ``Storage``."""

    # -- the job --------------------------------------------------------------------------
    def check(self, job_input: WorkerIn) -> None:
        """Checks of the job's values as a whole (hashes), run by the submit task before the
        fan-out; a unit's own checks run with its witness."""

    # -- the key --------------------------------------------------------------------------
    def has_key(self, job_input: WorkerIn) -> bool:
        """Whether the key is known to be there (cheap: no compile, no load)."""

    def make_key(self, job_input: WorkerIn, *, fixed_base: FixedBaseMul | None = None,
                 progress: SetupProgress | None = None) -> None:
        """Find or make the proving key (slow; once per key), with ``snark.groth16.setup``'s
        ``fixed_base`` and ``progress``; a type whose keys are imported says how."""

    def load_key(self, job_input: WorkerIn, *,
                 fixed_base: FixedBaseMul | None = None) -> ProvingKey:
        """The proving key, made first (with ``fixed_base``) if this type can make it."""

    # -- one unit of work -----------------------------------------------------------------
    def work(self, job_input: WorkerIn, unit: int, key: ProvingKey, backend: ProverBackend) -> W:
        """Synthesize: the unit's checked witness, or, where ``backend`` has this type's
        device steps, only what they read."""

    def public_inputs(self, job_input: WorkerIn, unit: int, key: ProvingKey, work: W) -> list[int]:
        """The unit's public inputs, as its proof is verified against them."""

    # -- the result -----------------------------------------------------------------------
    def part(self, proof: bytes, public: list[int]) -> bytes:
        """What the job stores of a proved unit: its 192-byte proof, and the public inputs
        too where the input alone does not give them back."""

    def assemble(self, job_input: WorkerIn, parts: list[bytes]) -> bytes:
        """The job's result from its units' parts, in unit order."""

    def verify(self, job_input: WorkerIn, result: bytes) -> bool:
        """Whether the assembled result is valid, checked as a consumer would."""


#: A worker half as the pipeline holds it (its input and work types are the type's own).
AnyWorker = ProofWorker[Any, Any]
