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

or, for a partition too large for Redis (a full 32 GiB WindowPoSt partition is 58.6 MB of
bincode, 78 MB as base64), ``"vanilla_proofs_path": "<relative path>"`` in place of
``vanilla_proofs``: a file on the storage every worker mounts (``PROOFQ_WITNESS_DIR``)
holding bincode ``Vec<FallbackPoStSectorProof>`` (u64 count, then the elements); the worker
reads and decodes it (``load_sectors``).

Every field is checked when the job is parsed (producer and worker alike): the vanilla proofs
decoded strictly for the registered proof (``vanilla.decode``); the hashing checks run on a
worker (``checks.check_partition``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from snark.filecoin.errors import FilecoinError
from snark.filecoin.job import KEYS
from snark.filecoin.post.checks import check_count, check_randomness
from snark.filecoin.post.registered_proofs import PostProof, post_proof
from snark.filecoin.post.vanilla import SectorProofs, decode, record_dtype
from snark.files import write_atomic
from snark.job_input import load_json, resolve_shared, shared_relative_path, too_large

FIELDS = ("registered_proof", "randomness", "miner_id", "partition_index", "vanilla_proofs",
          "key")
PATH_FIELD = "vanilla_proofs_path"
#: Where ``curio_request`` puts partitions too large to travel inline, in the witness dir.
SHARED_SUBDIR = "post-vanilla"
U64 = 1 << 64


@dataclass(frozen=True)
class PostJob:
    kind: str                 # window or winning
    proof: PostProof
    randomness: bytes
    miner_id: int
    partition_index: int
    vanilla: tuple[bytes, ...] | None  # inline elements, or None: ``path``
    key: str | None
    sectors: SectorProofs | None = field(compare=False, repr=False)  # decoded (inline)
    path: str | None = None  # on shared storage, relative to the witness dir

    def to_json(self) -> str:
        proofs = ({"vanilla_proofs": [base64.b64encode(v).decode() for v in self.vanilla]}
                  if self.vanilla is not None else {PATH_FIELD: self.path})
        return json.dumps({
            "registered_proof": self.proof.go_id, "randomness": self.randomness.hex(),
            "miner_id": self.miner_id, "partition_index": self.partition_index, **proofs,
            "key": self.key}, separators=(",", ":"))

    def load_sectors(self, shared_dir: Path | None) -> SectorProofs:
        """The decoded vanilla proofs: inline, or read from shared storage."""
        if self.sectors is not None:
            return self.sectors
        if self.path is None:
            raise FilecoinError(f"vanilla_proofs: the job has neither its proofs nor a "
                                f"{PATH_FIELD}")
        where = resolve_shared(shared_dir, self.path, PATH_FIELD, FilecoinError)
        limit = 8 + self.proof.sector_count * record_dtype(self.proof).itemsize
        with open(where, "rb") as fh:
            data = fh.read(limit + 1)
        sectors = decode(split_vec(data, self.proof), self.proof)
        check_count(self.proof, len(sectors), self.partition_index)
        return sectors


def vec_bytes(elements: list[bytes]) -> bytes:
    """bincode ``Vec<FallbackPoStSectorProof>`` of the elements."""
    return len(elements).to_bytes(8, "little") + b"".join(elements)


def split_vec(data: bytes, proof: PostProof) -> list[bytes]:
    """The elements of a bincode ``Vec<FallbackPoStSectorProof>`` of ``proof``."""
    size = record_dtype(proof).itemsize
    count = int.from_bytes(data[:8], "little") if len(data) >= 8 else -1
    if not 1 <= count <= proof.sector_count or len(data) != 8 + count * size:
        raise FilecoinError(f"{PATH_FIELD}: is {len(data)} bytes with a count of {count}, "
                            f"expected a u64 count from 1 to {proof.sector_count} and that "
                            f"many {size}-byte {proof.name} sector proofs")
    return [data[8 + i * size:8 + (i + 1) * size] for i in range(count)]


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


def post_job(kind: str | None, registered_proof: int, vanilla_proofs: list[bytes] | str,
             randomness: bytes, miner_id: int, partition_index: int,
             key: str | None = None) -> PostJob:
    """A job from a request's fields, checked (``FilecoinError`` naming the field); ``kind``
    None takes the registered proof's; ``vanilla_proofs`` a str is a path on shared storage."""
    proof = post_proof(registered_proof, kind)
    kind = proof.kind
    if key is not None and key not in KEYS:
        raise FilecoinError(f"key: expected one of {', '.join(KEYS)}, got {key!r}")
    for name, value, limit in (("miner_id", miner_id, U64),
                               ("partition_index", partition_index, 1 << 32)):
        _int({name: value}, name, limit)
    randomness = check_randomness(randomness)
    if isinstance(vanilla_proofs, str):  # on shared storage: read by the worker
        path = shared_relative_path(vanilla_proofs, PATH_FIELD, FilecoinError)
        return PostJob(kind, proof, randomness, miner_id, partition_index, None, key, None,
                       path)
    elements = tuple(bytes(v) for v in vanilla_proofs)
    sectors = decode(list(elements), proof)
    check_count(proof, len(elements), partition_index)
    return PostJob(kind, proof, randomness, miner_id, partition_index, elements, key, sectors)


def parse_post_job(raw: str | bytes, kind: str | None, *, max_bytes: int) -> PostJob:
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    if len(data) > max_bytes:
        raise FilecoinError(too_large("post job", len(data), max_bytes))
    doc = load_json(data, "post job", FilecoinError)
    if not isinstance(doc, dict):
        raise FilecoinError("post job: expected a JSON object")
    proofs_field = PATH_FIELD if PATH_FIELD in doc else "vanilla_proofs"
    unknown = sorted(set(doc) - set(FIELDS) - {PATH_FIELD})
    if PATH_FIELD in doc and "vanilla_proofs" in doc:
        unknown = ["vanilla_proofs"]
    missing = [name for name in FIELDS[:-1] if name not in doc and name != "vanilla_proofs"]
    missing += [] if proofs_field in doc else ["vanilla_proofs"]
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
    proofs = doc[PATH_FIELD] if proofs_field == PATH_FIELD else _elements(doc["vanilla_proofs"])
    if proofs_field == PATH_FIELD and not isinstance(proofs, str):
        raise FilecoinError(f"{PATH_FIELD}: expected a relative path")
    return post_job(kind, _int(doc, "registered_proof", 1 << 32),
                    proofs, randomness, _int(doc, "miner_id", U64),
                    _int(doc, "partition_index", 1 << 32), doc.get("key"))


def curio_request(proof_kind: int, registered_proof: int, vanilla_proofs: list[bytes],
                  randomness: bytes, miner_id: int, partition_index: int,
                  key: str | None = None, *, sector_size: int | None = None,
                  max_inline: int | None = None,
                  witness_dir: Path | None = None) -> tuple[str, str]:
    """The gRPC door's call: a ``SubmitProofRequest``'s PoSt fields (``proof_kind`` 3
    WINDOW_POST_PARTITION or 4 WINNING_POST) → (proof type name, the job's JSON), checked
    here (``sector_size``, where the request gives it, against the registered proof). A job
    whose JSON is longer than ``max_inline`` (the door's ``PROOFQ_MAX_INPUT_BYTES``) has its
    vanilla proofs written once to ``witness_dir`` (``post-vanilla/<sha256>.bin``) and names
    them by path."""
    kinds = {3: "window", 4: "winning"}
    if proof_kind not in kinds:
        raise FilecoinError(f"proof_kind: {proof_kind} is not a PoSt kind (3 "
                            "WINDOW_POST_PARTITION, 4 WINNING_POST)")
    job = post_job(kinds[proof_kind], registered_proof, vanilla_proofs, randomness, miner_id,
                   partition_index, key)
    if sector_size is not None and sector_size != job.proof.sector_size:
        raise FilecoinError(f"sector_size: {sector_size} is not the size of {job.proof.name} "
                            f"({job.proof.sector_size})")
    text = job.to_json()
    if max_inline is not None and len(text) > max_inline:
        if witness_dir is None:
            raise FilecoinError(f"vanilla_proofs: the job is {len(text)} bytes, above "
                                f"max_input_bytes ({max_inline}), and there is no witness_dir "
                                "(PROOFQ_WITNESS_DIR) to put its vanilla proofs on")
        data = vec_bytes(vanilla_proofs)
        relative = f"{SHARED_SUBDIR}/{hashlib.sha256(data).hexdigest()}.bin"
        target = Path(witness_dir) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            write_atomic(target, data)
        text = post_job(job.kind, registered_proof, relative, randomness, miner_id,
                        partition_index, key).to_json()
    return f"{job.kind}-post", text
