"""A ``window-post`` / ``winning-post`` job: one partition as Curio's ``SubmitProofRequest``
carries it (curio ``extern/cuzk/cuzk-proto/proto/cuzk/v1/proving.proto``).

JSON (``parse_post_job``; ``post_job`` builds it from the request's fields, for the gRPC
door)::

    {"registered_proof": 13,            Go's RegisteredPoStProof number (V1_1 → api V1_2)
     "randomness": "<64 hex>",          32 bytes, masked by Curio (below r)
     "miner_id": 1000,                  the prover's actor id (not in the circuit)
     "partition_index": 0,              WindowPoSt's partition; 0 for WinningPoSt
     "vanilla_proofs": ["<base64>", …], one bincode FallbackPoStSectorProof per sector
     "key": null}                       official | development | null: the cluster's

Every field is checked when the job is parsed (producer and worker alike): the vanilla proofs
decoded strictly for the registered proof (``vanilla.decode``); the hashing checks run on a
worker (``checks.check_partition``).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field

from snark.filecoin.errors import FilecoinError
from snark.filecoin.job import KEYS
from snark.filecoin.post.checks import check_randomness
from snark.filecoin.post.registry import PostProof, post_proof
from snark.filecoin.post.vanilla import SectorProofs, decode
from snark.job_input import load_json, too_large

FIELDS = ("registered_proof", "randomness", "miner_id", "partition_index", "vanilla_proofs",
          "key")
U64 = 1 << 64


@dataclass(frozen=True)
class PostJob:
    kind: str                 # window or winning
    proof: PostProof
    randomness: bytes
    miner_id: int
    partition_index: int
    vanilla: tuple[bytes, ...]
    key: str | None
    sectors: SectorProofs = field(compare=False, repr=False)

    def to_json(self) -> str:
        return json.dumps({
            "registered_proof": self.proof.go_id, "randomness": self.randomness.hex(),
            "miner_id": self.miner_id, "partition_index": self.partition_index,
            "vanilla_proofs": [base64.b64encode(v).decode() for v in self.vanilla],
            "key": self.key}, separators=(",", ":"))


def _int(doc: dict, name: str, limit: int) -> int:
    value = doc.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < limit:
        raise FilecoinError(f"{name}: expected an integer from 0 below {limit}, got {value!r}")
    return value


def _elements(value) -> list[bytes]:
    if not isinstance(value, list):
        raise FilecoinError(f"vanilla_proofs: expected a list of base64 strings, got "
                            f"{type(value).__name__}")
    out = []
    for i, text in enumerate(value):
        if not isinstance(text, str):
            raise FilecoinError(f"vanilla_proofs[{i}]: expected a base64 string")
        try:
            out.append(base64.b64decode(text, validate=True))
        except (binascii.Error, ValueError):
            raise FilecoinError(f"vanilla_proofs[{i}]: is not base64") from None
    return out


def post_job(kind: str | None, registered_proof: int, vanilla_proofs: list[bytes],
             randomness: bytes, miner_id: int, partition_index: int,
             key: str | None = None) -> PostJob:
    """A job from a request's fields, checked (``FilecoinError`` naming the field); ``kind``
    None takes the registered proof's."""
    proof = post_proof(registered_proof, kind)
    kind = proof.kind
    if key is not None and key not in KEYS:
        raise FilecoinError(f"key: expected one of {', '.join(KEYS)}, got {key!r}")
    for name, value, limit in (("miner_id", miner_id, U64),
                               ("partition_index", partition_index, 1 << 32)):
        _int({name: value}, name, limit)
    elements = tuple(bytes(v) for v in vanilla_proofs)
    sectors = decode(list(elements), proof)
    job = PostJob(kind, proof, check_randomness(randomness), miner_id, partition_index,
                  elements, key, sectors)
    if kind == "winning" and (len(elements) != 1 or partition_index != 0):
        raise FilecoinError("vanilla_proofs: WinningPoSt is one sector's proof at partition 0, "
                            f"got {len(elements)} at partition {partition_index}")
    if len(elements) > proof.sector_count:
        raise FilecoinError(f"vanilla_proofs: {len(elements)} sectors, a {proof.name} "
                            f"partition holds at most {proof.sector_count}")
    return job


def parse_post_job(raw: str | bytes, kind: str | None, *, max_bytes: int) -> PostJob:
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    if len(data) > max_bytes:
        raise FilecoinError(too_large("post job", len(data), max_bytes))
    doc = load_json(data, "post job", FilecoinError)
    if not isinstance(doc, dict):
        raise FilecoinError("post job: expected a JSON object")
    unknown = sorted(set(doc) - set(FIELDS))
    missing = [name for name in FIELDS[:-1] if name not in doc]
    if unknown or missing:
        raise FilecoinError(f"post job: fields {unknown or missing} are "
                            f"{'unknown' if unknown else 'missing'} (expected {list(FIELDS)})")
    text = doc["randomness"]
    try:
        randomness = bytes.fromhex(text) if isinstance(text, str) else None
    except ValueError:
        randomness = None
    if randomness is None:
        raise FilecoinError("randomness: expected 64 hex digits")
    return post_job(kind, _int(doc, "registered_proof", 1 << 32),
                    _elements(doc["vanilla_proofs"]), randomness, _int(doc, "miner_id", U64),
                    _int(doc, "partition_index", 1 << 32), doc.get("key"))


def curio_request(proof_kind: int, registered_proof: int, vanilla_proofs: list[bytes],
                  randomness: bytes, miner_id: int, partition_index: int,
                  key: str | None = None) -> tuple[str, str]:
    """The gRPC door's call: a ``SubmitProofRequest``'s PoSt fields (``proof_kind`` 3
    WINDOW_POST_PARTITION or 4 WINNING_POST) → (proof type name, the job's JSON)."""
    kinds = {3: "window", 4: "winning"}
    if proof_kind not in kinds:
        raise FilecoinError(f"proof_kind: {proof_kind} is not a PoSt kind (3 "
                            "WINDOW_POST_PARTITION, 4 WINNING_POST)")
    job = post_job(kinds[proof_kind], registered_proof, vanilla_proofs, randomness, miner_id,
                   partition_index, key)
    return f"{job.kind}-post", job.to_json()
