"""Filecoin's four Curio kinds (``client.cuzk.kinds.Kind``), named by the records of the
``filecoin``, ``snap``, ``window-post`` and ``winning-post`` proof types (``curio_kinds``).

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

A circuit's key (``key_stem``) is the one a Curio request of that kind and size is proved
with: for PoRep the registered proofs of one size (V1, V1_1, synthetic) share it, for
WindowPoSt it is the current version's (V1_1, proved as the api's V1_2).
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass

from client.cuzk import proving_pb2 as pb
from client.cuzk.kinds import Kind, Refused
from config.settings import Settings
from snark.filecoin.post.job import curio_request
from snark.filecoin.post.registered_proofs import WINDOW, WINNING, for_size
from snark.filecoin.registered_proofs import REGISTERED_PROOFS, by_number, key_stem
from snark.filecoin.snap.job import job_from_request
from snark.filecoin.snap.shape import SnapShape

_NODE_BYTES = 32

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


def porep_key(size: int, key_kind: str) -> str:
    """Every PoRep version of one size is proved with one key."""
    proof = next(p for p in REGISTERED_PROOFS.values() if p.sector_size == size)
    return key_stem(proof, key_kind)


def snap_key(size: int, key_kind: str) -> str:
    return key_stem(SnapShape(size // _NODE_BYTES), key_kind)


def window_key(size: int, key_kind: str) -> str:
    return key_stem(for_size(WINDOW, size), key_kind)


def winning_key(size: int, key_kind: str) -> str:
    return key_stem(for_size(WINNING, size), key_kind)


POREP = [Kind(pb.POREP_SEAL_COMMIT, "porep-c2", "porep_c2", "porep", "normal", "filecoin",
              porep_job, porep_key)]
SNAP = [Kind(pb.SNAP_DEALS_UPDATE, "snap-update", "snap_update", "snap", "normal", "snap",
             snap_job, snap_key, "vanilla_proofs")]
WINDOW_POST = [Kind(pb.WINDOW_POST_PARTITION, "window-post", "window_post", "wpost", "high",
                    "window-post", post_job, window_key, "vanilla_proofs")]
WINNING_POST = [Kind(pb.WINNING_POST, "winning-post", "winning_post", "winning", "critical",
                     "winning-post", post_job, winning_key, "vanilla_proofs")]
