"""A ``snap`` job's input: one SnapDeals update and the key that proves it.

Accepted JSON (``parse_job``): the update's JSON form (``update.parse_update``), proved under
the cluster's key for Filecoin (``PROOFQ_FILECOIN_KEY``), or ``{"key": "official" |
"development", "update": <the update>}``. The stored form is the latter (``SnapJob.to_json``).
``job_from_request`` is the gRPC front door's way in: Curio's request fields as they come.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from snark.filecoin.errors import FilecoinError
from snark.filecoin.job import KEYS
from snark.filecoin.snap.update import SnapUpdate, from_request, parse_update
from snark.job_input import load_json, too_large


@dataclass(frozen=True)
class SnapJob:
    key: str | None   # official, development, or None: the cluster's (PROOFQ_FILECOIN_KEY)
    update: SnapUpdate = field(compare=False)
    text: str = ""    # the update's JSON form

    def to_json(self) -> str:
        head = json.dumps({"key": self.key}, separators=(",", ":"))[:-1]
        return f'{head},"update":{self.text}}}'


def _key(value) -> str | None:
    if value is not None and value not in KEYS:
        raise FilecoinError(f"key: expected one of {', '.join(KEYS)}, got {value!r}")
    return value


def parse_job(raw: str | bytes, *, max_bytes: int) -> SnapJob:
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    if len(data) > max_bytes:
        raise FilecoinError(too_large("update", len(data), max_bytes))
    doc = load_json(data, "update", FilecoinError)
    if isinstance(doc, dict) and "update" in doc:
        if set(doc) - {"key", "update"}:
            raise FilecoinError(f'job: expected {{"key", "update"}}, got the fields '
                                f"{sorted(doc)}")
        text = json.dumps(doc["update"], separators=(",", ":"))
        return SnapJob(_key(doc.get("key")), parse_update(text, max_bytes=max_bytes), text)
    update = parse_update(data, max_bytes=max_bytes)
    return SnapJob(None, update, update.to_json())


def job_from_request(*, vanilla_proofs: list[bytes], comm_r_old: bytes, comm_r_new: bytes,
                     comm_d_new: bytes, registered_proof: int, sector_size: int,
                     key: str | None = None) -> SnapJob:
    """A job from the fields of Curio's ``SubmitProofRequest`` (``SNAP_DEALS_UPDATE``):
    ``FilecoinError`` naming the first bad field."""
    update = from_request(vanilla_proofs=vanilla_proofs, comm_r_old=comm_r_old,
                          comm_r_new=comm_r_new, comm_d_new=comm_d_new,
                          registered_proof=registered_proof, sector_size=sector_size)
    return SnapJob(_key(key), update, update.to_json())
