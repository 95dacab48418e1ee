"""What proofq makes of each proof kind Curio sends: a proofq job, or a refusal at once.

One row per ``ProofKind`` (``KINDS``): its names (cuzk's queue name and metric label, the
prefix of its circuit ids) and the function that turns a ``SubmitProofRequest`` into a job
of a proofq proof type, or none yet, so such a request is answered ``FAILED`` at once with a
message that says so. A new type (SnapDeals, WindowPoSt, WinningPoSt) plugs in by giving its
row a ``translate``.

PoRep C2 (``porep_job``), as ``curio:lib/ffi/cuzk_funcs.go`` ``PoRepSnarkCuzk`` builds it:
``vanilla_proof`` is Curio's C1 wrapper ``{"SectorNum", "Phase1Out": base64(C1 JSON),
"SectorSize"}``, ``registered_proof`` is Go's number (``go-state-types:abi/sector.go``:
0–4 V1, 5–9 V1_1, 10–14 V1_1 Synthetic PoRep, 15–19 V1_2 NI-PoRep, 2 KiB … 64 GiB in size
order), ``miner_id`` and ``sector_number`` name the sector. The job is the wrapper with
``MinerId`` added (``snark.filecoin.c1_schema``: the worker then checks replica_id against
the prover id, the miner's LEB128, and the sector id, as ``seal_commit_phase2`` does). Here
only what costs no parse of the C1 is checked (fields of the request against the wrapper's
and the C1's registered proof); the producer's parse (``tasks.submission.accept``) and the
worker's checks name anything else.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass

from client.cuzk import proving_pb2 as pb
from snark.filecoin.registry import REGISTERED_PROOFS, key_stem

#: Go's RegisteredSealProof numbers, in order (``go-state-types:abi/sector.go``).
_SIZES = ("2KiB", "8MiB", "512MiB", "32GiB", "64GiB")
GO_SEAL_PROOFS = tuple(f"StackedDrg{size}{suffix}" for suffix in (
    "V1", "V1_1", "V1_1_Feat_SyntheticPoRep", "V1_2_Feat_NonInteractivePoRep")
    for size in _SIZES)

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
    circuit: str          # circuit ids: <circuit>-<GiB>g (porep-32g)
    default_priority: str
    proof_type: str | None  # the proofq type its jobs have; None: not proved yet
    translate: Callable[[pb.SubmitProofRequest], bytes] | None  # → the job's input
    input_field: str = "vanilla_proof"  # where the job's input came from (error messages)

    def job(self, request: pb.SubmitProofRequest) -> JobRequest:
        if self.translate is None or self.proof_type is None:
            raise Refused(f"proof_kind: {pb.ProofKind.Name(self.number)} ({self.queue}) "
                          f"cannot be proved by proofq yet; route it to another prover")
        return JobRequest(self.proof_type, self.translate(request),
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
        end = -1 if found is None else text.find(b'"', found.end())
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


def seal_proof(number: int) -> str:
    """The registered seal proof Go calls ``number``, when proofq proves it."""
    if number >= len(GO_SEAL_PROOFS):
        raise Refused(f"registered_proof: {number} is not a registered seal proof (Go's "
                      f"numbers are 0-{len(GO_SEAL_PROOFS) - 1})")
    name = GO_SEAL_PROOFS[number]
    if name.endswith("_Feat_NonInteractivePoRep"):
        raise Refused(f"registered_proof: {number} ({name}) is NI-PoRep, which proofq does "
                      f"not prove")
    if name not in REGISTERED_PROOFS:
        raise Refused(f"registered_proof: {number} ({name}): synthetic PoRep not supported "
                      f"by this proofq")
    return name


def porep_job(request: pb.SubmitProofRequest) -> bytes:
    name = seal_proof(request.registered_proof)
    proof = REGISTERED_PROOFS[name]
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

KINDS: dict[int, Kind] = {kind.number: kind for kind in (
    Kind(pb.POREP_SEAL_COMMIT, "porep-c2", "porep_c2", "porep", "normal", "filecoin",
         porep_job),
    Kind(pb.SNAP_DEALS_UPDATE, "snap-update", "snap_update", "snap", "normal", None, None,
         "vanilla_proofs"),
    Kind(pb.WINDOW_POST_PARTITION, "window-post", "window_post", "wpost", "high", None, None,
         "vanilla_proofs"),
    Kind(pb.WINNING_POST, "winning-post", "winning_post", "winning", "critical", None, None,
         "vanilla_proofs"),
)}

#: proofq proof type → the kind its jobs are reported under.
KIND_OF_TYPE = {kind.proof_type: kind for kind in KINDS.values() if kind.proof_type}


def kind_of(request: pb.SubmitProofRequest) -> Kind:
    """The request's kind; ``ValueError`` for one cuzk does not define (INVALID_ARGUMENT)."""
    kind = KINDS.get(request.proof_kind)
    if kind is None:
        raise ValueError(f"proof_kind: {request.proof_kind} is not a proof kind (expected "
                         f"1-4: {', '.join(pb.ProofKind.Name(n) for n in KINDS)})")
    return kind


_SIZE_TAGS = {1 << 11: "2k", 1 << 23: "8m", 1 << 29: "512m", 1 << 35: "32g", 1 << 36: "64g"}


def porep_circuit_ids() -> dict[str, str]:
    """cuzk's circuit id (``porep-32g``; ``porep-2k`` … below a GiB) of each name a worker's
    card gives a PoRep key (``filecoin/<key file stem>``, official or development)."""
    return {f"filecoin/{key_stem(proof, key)}": f"porep-{_SIZE_TAGS[proof.sector_size]}"
            for proof in REGISTERED_PROOFS.values() for key in ("official", "development")}
