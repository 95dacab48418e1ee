"""What proofq makes of each proof kind Curio sends: a proofq job, or a refusal at once.

One row per ``ProofKind`` (``Kind``), given by the proof type that serves it (its plug-in
record's ``curio_kinds``, ``snark.plugins``; Filecoin's four are
``client.cuzk.filecoin_kinds``): its names (cuzk's queue name and metric label, the prefix
of its circuit ids), the proofq proof type its jobs have, the function that turns a
``SubmitProofRequest`` into that type's job input, and the stem of the key a circuit of
each sector size is proved with (``client.cuzk.circuits``). Whatever the function cannot
accept is answered ``FAILED`` at once, in one line naming the field (``Refused``); the
producer's parse (``tasks.submission.accept``) and the worker's checks name anything found
later.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from client.cuzk import proving_pb2 as pb
from config.settings import Settings
from snark.errors import InvalidInput
from snark.plugins import load_attribute
from snark.registry import plugins

#: cuzk's priorities → proofq's bands; UNSPECIFIED takes the kind's default (cuzk's
#: ``Priority::default_for``).
PRIORITIES = {pb.LOW: "low", pb.NORMAL: "normal", pb.HIGH: "high", pb.CRITICAL: "critical"}


class Refused(ValueError):
    """A request proofq will not prove: the one-line answer names the field."""


@dataclass(frozen=True)
class JobRequest:
    """A request as a proofq job."""

    proof_type: str
    job_input: bytes
    priority: str


@dataclass(frozen=True)
class Kind:
    number: int
    queue: str            # cuzk's name of the kind (QueueStatus.proof_kind)
    metric: str           # cuzk's Prometheus label
    circuit: str          # its circuit ids: <circuit>-<size> (porep-32g, client.cuzk.circuits)
    default_priority: str
    proof_type: str         # the proofq type its jobs have
    translate: Callable[[pb.SubmitProofRequest, Settings], bytes]  # → the job's input
    key_stem: Callable[[int, str], str]  # (sector size, key kind) → its key's stem
    input_field: str = "vanilla_proof"  # where the job's input came from (error messages)

    def job(self, request: pb.SubmitProofRequest, settings: Settings) -> JobRequest:
        """The request as a job; ``Refused`` naming the field proofq will not take."""
        try:
            job_input = self.translate(request, settings)
        except InvalidInput as exc:
            raise Refused(str(exc)) from None
        return JobRequest(self.proof_type, job_input,
                          PRIORITIES.get(request.priority, self.default_priority))


@functools.cache
def kinds() -> dict[int, Kind]:
    """Every kind the installed proof types serve, by cuzk's number."""
    served: dict[int, Kind] = {}
    for record in plugins():
        if record.curio_kinds is not None:
            for kind in load_attribute(record.curio_kinds):
                served.setdefault(kind.number, kind)
    return dict(sorted(served.items()))


def kind_of_type(proof_type: str) -> Kind | None:
    """The kind a proofq type's jobs are reported under (None: not one of Curio's)."""
    return next((kind for kind in kinds().values() if kind.proof_type == proof_type), None)


def kind_of(request: pb.SubmitProofRequest) -> Kind:
    """The request's kind; ``ValueError`` for one no installed type serves (INVALID_ARGUMENT)."""
    kind = kinds().get(request.proof_kind)
    if kind is None:
        raise ValueError(f"proof_kind: {request.proof_kind} is not a proof kind (expected "
                         f"{', '.join(f'{n} {pb.ProofKind.Name(n)}' for n in kinds())})")
    return kind
