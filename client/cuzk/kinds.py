"""What proofq makes of each proof kind Curio sends: a proofq job, or a refusal at once.

One row per ``ProofKind`` (``KINDS``): its names (cuzk's queue name and metric label, the
prefix of its circuit ids), the proofq proof type its jobs have, and the function that turns
a ``SubmitProofRequest`` into that type's job input. Whatever the function cannot accept is
answered ``FAILED`` at once, in one line naming the field (``Refused``); the producer's parse
(``tasks.submission.accept``) and the worker's checks name anything found later.

PoRep C2 (``porep_job``), as ``curio:lib/ffi/cuzk_funcs.go`` ``PoRepSnarkCuzk`` builds it:
``vanilla_proof`` is Curio's C1 wrapper ``{"SectorNum", "Phase1Out": base64(C1 JSON),
"SectorSize"}``, ``registered_proof`` is Go's number (``registry.by_number``: 0–4 V1, 5–9
V1_1, 10–14 V1_1 Synthetic PoRep; 15–19 NI-PoRep refused), ``miner_id`` and
``sector_number`` name the sector. The job is the wrapper with ``MinerId`` added
(``snark.filecoin.c1_schema``: the worker then checks replica_id against the prover id, the
miner's LEB128, and the sector id, as ``seal_commit_phase2`` does). Here only what costs no
parse of the C1 is checked (fields of the request against the wrapper's and the C1's
registered proof).

SnapDeals (``snap_job``, ``ProveUpdateCuzk``): ``vanilla_proofs`` one bincode partition proof
per partition, ``comm_r_old``/``comm_r_new``/``comm_d_new`` raw 32 bytes, ``registered_proof``
Go's RegisteredUpdateProof (0–4), ``sector_size`` (``snap.job.job_from_request``).

WindowPoSt / WinningPoSt (``post_job``, ``WindowPoStCuzk`` / ``WinningPoStCuzk``):
``vanilla_proofs`` one bincode sector proof each, ``randomness`` 32 bytes, ``miner_id``,
``partition_index``, ``registered_proof`` Go's RegisteredPoStProof (V1_1 is proved as V1_2,
``post.job.curio_request``); a partition too large for Redis travels by the cluster's
witness_dir.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

from client.cuzk import proving_pb2 as pb
from config.settings import Settings
from snark.filecoin.errors import FilecoinError
from snark.filecoin.post.job import curio_request
from snark.filecoin.registered_proofs import by_number
from snark.filecoin.snap.job import job_from_request

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
    input_field: str = "vanilla_proof"  # where the job's input came from (error messages)

    def job(self, request: pb.SubmitProofRequest, settings: Settings) -> JobRequest:
        """The request as a job; ``Refused`` naming the field proofq will not take."""
        try:
            job_input = self.translate(request, settings)
        except FilecoinError as exc:
            raise Refused(str(exc)) from None
        return JobRequest(self.proof_type, job_input,
                          PRIORITIES.get(request.priority, self.default_priority))


_NUMBER = rb'\s*:\s*(-?\d+)'
_PHASE1 = re.compile(rb'"Phase1Out"\s*:\s*"')
#: base64 characters read first for the C1's registered proof (its first field).
_HEAD_CHARS = 4096


@dataclass(frozen=True)
class _Wrapper:
    """Curio's wrapper cut around its ``Phase1Out`` string, without a JSON parse: the
    payload's bounds, and the text outside it (the other fields: a few dozen bytes)."""

    text: bytes
    start: int  # first base64 character
    end: int    # its closing quote

    @classmethod
    def cut(cls, text: bytes) -> "_Wrapper | None":
        found = _PHASE1.search(text)
        if found is None:
            return None
        end = text.find(b'"', found.end())
        return None if end < 0 else cls(text, found.end(), end)

    @property
    def outside(self) -> bytes:
        return self.text[:self.start] + self.text[self.end:]

    def number(self, name: str) -> int | None:
        """A number field outside the payload; None unless there exactly once."""
        found = re.findall(rb'"' + name.encode() + rb'"' + _NUMBER, self.outside)
        return int(found[0]) if len(found) == 1 else None

    def registered_proof(self) -> str | None:
        """The registered proof the wrapped C1 names, read from its base64 by the field's
        key: from the payload's head (serde writes the field first), else from all of it;
        None where it cannot be read so (the full parse then says why)."""
        payload = memoryview(self.text)[self.start:self.end]
        for part in (payload[:_HEAD_CHARS], payload):
            try:
                inner = binascii.a2b_base64(part[:len(part) // 4 * 4])
            except binascii.Error:
                return None
            name = re.search(rb'"registered_proof"\s*:\s*"([A-Za-z0-9_]+)"', inner)
            if name is not None:
                return name.group(1).decode()
        return None


def porep_job(request: pb.SubmitProofRequest, _settings: Settings | None = None) -> bytes:
    proof = by_number(request.registered_proof)
    name = proof.name
    if request.sector_size != proof.sector_size:
        raise Refused(f"sector_size: {request.sector_size} is not the sector size of {name} "
                      f"({proof.sector_size})")
    text = request.vanilla_proof
    opening = len(text) - len(text.lstrip())
    if opening == len(text):
        raise Refused("vanilla_proof: empty (PoRep C2 takes Curio's C1 wrapper JSON)")
    wrapper = _Wrapper.cut(text)
    if wrapper is None and _PHASE1.search(text) is not None:
        raise Refused("vanilla_proof: Phase1Out: the string does not end (a truncated C1 "
                      "wrapper?)")
    if text[opening:opening + 1] != b"{" or wrapper is None:
        raise Refused('vanilla_proof: not Curio\'s C1 wrapper {"SectorNum", "Phase1Out", '
                      '"SectorSize"}')
    if b'"MinerId"' in wrapper.outside:
        raise Refused("vanilla_proof: the wrapper has a MinerId field; the miner is the "
                      "request's miner_id")
    sector_num = wrapper.number("SectorNum")
    if sector_num is not None and sector_num != request.sector_number:
        raise Refused(f"sector_number: {request.sector_number}, but the C1 wrapper's "
                      f"SectorNum is {sector_num}")
    size = wrapper.number("SectorSize")
    if size is not None and size != request.sector_size:
        raise Refused(f"sector_size: {request.sector_size}, but the C1 wrapper's SectorSize "
                      f"is {size}")
    inner = wrapper.registered_proof()
    if inner is not None and inner != name:
        raise Refused(f"registered_proof: {request.registered_proof} is {name}, but the C1 is "
                      f"a {inner} one")
    return b'{"MinerId":%d,' % request.miner_id + memoryview(text)[opening + 1:]


def snap_job(request: pb.SubmitProofRequest, _settings: Settings) -> bytes:
    job = job_from_request(vanilla_proofs=list(request.vanilla_proofs),
                           comm_r_old=request.comm_r_old, comm_r_new=request.comm_r_new,
                           comm_d_new=request.comm_d_new,
                           registered_proof=request.registered_proof,
                           sector_size=request.sector_size)
    return job.to_json().encode()


def post_job(request: pb.SubmitProofRequest, settings: Settings) -> bytes:
    _, text = curio_request(request.proof_kind, request.registered_proof,
                            list(request.vanilla_proofs), request.randomness,
                            request.miner_id, request.partition_index,
                            sector_size=request.sector_size,
                            max_inline=settings.max_input_bytes,
                            witness_dir=settings.witness_dir)
    return text.encode()


KINDS: dict[int, Kind] = {kind.number: kind for kind in (
    Kind(pb.POREP_SEAL_COMMIT, "porep-c2", "porep_c2", "porep", "normal", "filecoin",
         porep_job),
    Kind(pb.SNAP_DEALS_UPDATE, "snap-update", "snap_update", "snap", "normal", "snap",
         snap_job, "vanilla_proofs"),
    Kind(pb.WINDOW_POST_PARTITION, "window-post", "window_post", "wpost", "high",
         "window-post", post_job, "vanilla_proofs"),
    Kind(pb.WINNING_POST, "winning-post", "winning_post", "winning", "critical",
         "winning-post", post_job, "vanilla_proofs"),
)}

#: proofq proof type → the kind its jobs are reported under.
KIND_OF_TYPE = {kind.proof_type: kind for kind in KINDS.values()}


def kind_of(request: pb.SubmitProofRequest) -> Kind:
    """The request's kind; ``ValueError`` for one cuzk does not define (INVALID_ARGUMENT)."""
    kind = KINDS.get(request.proof_kind)
    if kind is None:
        raise ValueError(f"proof_kind: {request.proof_kind} is not a proof kind (expected "
                         f"1-4: {', '.join(pb.ProofKind.Name(n) for n in KINDS)})")
    return kind

