"""A SnapDeals update as Curio sends it, and its JSON form.

Curio's ``ProveUpdateCuzk`` request carries ``vanilla_proofs`` (one bincode
``PartitionProof`` per partition, element k = partition k), ``comm_r_old``, ``comm_r_new``
and ``comm_d_new`` (32 raw bytes each, the field elements' little-endian encodings),
``registered_proof`` in Go's ``RegisteredUpdateProof`` numbering (0–4) and ``sector_size``.
``from_request`` takes those fields as they come (the gRPC front door calls it); the JSON
form (``to_json`` / ``parse_update``) holds the same fields, bytes in base64 as protobuf's
JSON mapping writes them, and is what the CLI writes and the Redis intake stores.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field

import numpy as np

from snark.filecoin.domain import DOMAIN_BYTES, canonical
from snark.filecoin.errors import FilecoinError
from snark.filecoin.snap.bincode import decode_partition_proof
from snark.filecoin.snap.proofs import PartitionProof
from snark.filecoin.snap.shape import SnapShape, update_proof_number, update_proof_shape
from snark.job_input import load_json, too_large

FIELDS = ("registered_proof", "sector_size", "comm_r_old", "comm_r_new", "comm_d_new",
          "vanilla_proofs")
COMMITMENTS = ("comm_r_old", "comm_r_new", "comm_d_new")
#: A partition proof's bincode is 561,768 bytes at 32 GiB and 575,528 at 64 GiB (86
#: challenges, measured on test updates); this bounds one.
MAX_PARTITION_BYTES = 4 << 20


@dataclass(frozen=True)
class SnapUpdate:
    shape: SnapShape
    comm_r_old: bytes
    comm_r_new: bytes
    comm_d_new: bytes
    vanilla_proofs: tuple[bytes, ...]
    partitions: tuple[PartitionProof, ...] = field(compare=False, repr=False)

    @property
    def registered_proof(self) -> int:
        return update_proof_number(self.shape)

    def to_json(self) -> str:
        def b64(raw: bytes) -> str:
            return base64.b64encode(raw).decode()
        doc = {"registered_proof": self.registered_proof, "sector_size": self.shape.sector_size,
               **{name: b64(getattr(self, name)) for name in COMMITMENTS},
               "vanilla_proofs": [b64(raw) for raw in self.vanilla_proofs]}
        return json.dumps(doc, separators=(",", ":"))


def _commitment(value: object, name: str) -> bytes:
    if not isinstance(value, (bytes, bytearray)) or len(value) != DOMAIN_BYTES:
        size = len(value) if isinstance(value, (bytes, bytearray)) else type(value).__name__
        raise FilecoinError(f"{name}: expected {DOMAIN_BYTES} raw bytes, got {size}")
    if not canonical(np.frombuffer(bytes(value), dtype=np.uint8)[None])[0]:
        raise FilecoinError(f"{name}: is not a reduced field element (>= r)")
    return bytes(value)


def from_request(*, vanilla_proofs: list[bytes], comm_r_old: bytes, comm_r_new: bytes,
                 comm_d_new: bytes, registered_proof: int, sector_size: int) -> SnapUpdate:
    """An update from the fields of Curio's request (``FilecoinError`` naming the first
    bad field)."""
    shape = update_proof_shape(registered_proof, sector_size)
    commitments = {name: _commitment(value, name) for name, value in
                   (("comm_r_old", comm_r_old), ("comm_r_new", comm_r_new),
                    ("comm_d_new", comm_d_new))}
    if not isinstance(vanilla_proofs, (list, tuple)):
        raise FilecoinError(f"vanilla_proofs: expected a list, got "
                            f"{type(vanilla_proofs).__name__}")
    if len(vanilla_proofs) != shape.partitions:
        raise FilecoinError(f"vanilla_proofs: has {len(vanilla_proofs)} partition proofs, a "
                            f"{shape.size_name} update has {shape.partitions}")
    raws = []
    for k, raw in enumerate(vanilla_proofs):
        if not isinstance(raw, (bytes, bytearray)):
            raise FilecoinError(f"vanilla_proofs[{k}]: expected bytes, got "
                                f"{type(raw).__name__}")
        if len(raw) > MAX_PARTITION_BYTES:
            raise FilecoinError(f"vanilla_proofs[{k}]: {len(raw)} bytes, a partition proof "
                                f"is at most {MAX_PARTITION_BYTES}")
        raws.append(bytes(raw))
    partitions = tuple(decode_partition_proof(raw, shape, f"vanilla_proofs[{k}]")
                       for k, raw in enumerate(raws))
    return SnapUpdate(shape, vanilla_proofs=tuple(raws), partitions=partitions, **commitments)


def _b64(value: object, name: str) -> bytes:
    if not isinstance(value, str):
        raise FilecoinError(f"{name}: expected base64 text, got {type(value).__name__}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise FilecoinError(f"{name}: is not base64") from None


def parse_update(raw: str | bytes, *, max_bytes: int = 64 << 20) -> SnapUpdate:
    """An update from its JSON form (see the module docstring)."""
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    if len(data) > max_bytes:
        raise FilecoinError(too_large("update", len(data), max_bytes))
    doc = load_json(data, "update", FilecoinError)
    if not isinstance(doc, dict):
        raise FilecoinError(f"update: expected a JSON object, got {type(doc).__name__}")
    missing, extra = [f for f in FIELDS if f not in doc], sorted(set(doc) - set(FIELDS))
    if missing or extra:
        raise FilecoinError(f"update: {'missing ' + ', '.join(missing) if missing else ''}"
                            f"{'; ' if missing and extra else ''}"
                            f"{'unknown ' + ', '.join(extra) if extra else ''}")
    for name in ("registered_proof", "sector_size"):
        if not isinstance(doc[name], int) or isinstance(doc[name], bool):
            raise FilecoinError(f"{name}: expected an integer, got {doc[name]!r}")
    proofs = doc["vanilla_proofs"]
    if not isinstance(proofs, list):
        raise FilecoinError(f"vanilla_proofs: expected a list, got {type(proofs).__name__}")
    return from_request(
        vanilla_proofs=[_b64(p, f"vanilla_proofs[{k}]") for k, p in enumerate(proofs)],
        registered_proof=doc["registered_proof"], sector_size=doc["sector_size"],
        **{name: _b64(doc[name], name) for name in COMMITMENTS})
