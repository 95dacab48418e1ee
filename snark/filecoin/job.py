"""A ``filecoin`` job's input: one sector's C1, and the key that proves it.

Accepted JSON (``parse_job``):

* the C1 itself, as Curio writes it (``{"SectorNum", "Phase1Out", "SectorSize"}``) or the
  raw ``SealCommitPhase1Output``: proved under the cluster's key for Filecoin
  (``PROOFQ_FILECOIN_KEY``: the official key unless a development cluster says otherwise);
* ``{"key": "official" | "development", "c1": <the C1>}``: the same, with the key named
  (``development``: proofq's own setup of the circuit, ``snark.filecoin.params``);
* ``{"key": …, "registered_proof": "StackedDrg32GiBV1_1", "path": "<relative path>"}``: a
  C1 kept on the storage every worker mounts (``PROOFQ_WITNESS_DIR``), for sectors whose
  C1 should not travel through Redis (a 32 GiB one is 51 MB: inline it fits the default
  64 MiB ``PROOFQ_MAX_INPUT_BYTES``; by path it costs Redis nothing).

The stored form is the envelope with the C1's text as it came (``FilecoinJob.to_json``):
a producer parses the C1 whole (about a second at 32 GiB), a worker again, once per process.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from snark.filecoin.c1 import FilecoinC1
from snark.filecoin.c1_schema import parse_c1
from snark.filecoin.errors import FilecoinError
from snark.filecoin.registered_proofs import RegisteredProof, registered_proof
from snark.job_input import load_json, resolve_shared, shared_relative_path, too_large

KEYS = ("official", "development")
#: Texts up to this size are parsed as JSON to tell an envelope from a C1; a larger one is a
#: C1 or the stored envelope (``_STORED``).
SMALL_TEXT = 1 << 20
_STORED = re.compile(rb'\{"key":("official"|"development"|null),"c1":')


@dataclass(frozen=True)
class FilecoinJob:
    key: str | None  # official, development, or None: the cluster's (PROOFQ_FILECOIN_KEY)
    proof: RegisteredProof
    c1_text: bytes | None = None  # inline: the C1 as given
    path: str | None = None       # on shared storage: relative to the shared directory
    c1: FilecoinC1 | None = field(default=None, compare=False)  # parsed (inline jobs)

    def to_json(self) -> str:
        if self.c1_text is not None:
            head = json.dumps({"key": self.key}, separators=(",", ":"))[:-1]
            return f'{head},"c1":{self.c1_text.decode()}}}'
        return json.dumps({"key": self.key, "registered_proof": self.proof.name,
                           "path": self.path}, separators=(",", ":"))

    def load(self, shared_dir: Path | None, max_bytes: int) -> FilecoinC1:
        """The C1: parsed already, or read from shared storage (and checked to be the
        registered proof the job names)."""
        if self.c1 is not None:
            return self.c1
        if self.path is None:
            raise FilecoinError("c1: the job has neither its C1 nor a path")
        if shared_dir is None:
            raise FilecoinError(f"path: {self.path} is on shared storage, but this worker has "
                                "no PROOFQ_WITNESS_DIR")
        where = resolve_shared(shared_dir, self.path, "path", FilecoinError)
        c1 = parse_c1(where.read_bytes(), max_bytes=max_bytes)
        if c1.proof.name != self.proof.name:
            raise FilecoinError(f"path: {self.path} holds a {c1.proof.name} C1, the job names "
                                f"{self.proof.name}")
        return c1


def filecoin_envelope(c1_text: bytes, key: str) -> bytes:
    """A C1 file's text as a job proved under ``key`` (the stored form, no JSON parse)."""
    return b'{"key":' + json.dumps(_key(key)).encode() + b',"c1":' + c1_text.strip() + b"}"


def _key(value) -> str | None:
    if value is not None and value not in KEYS:
        raise FilecoinError(f"key: expected one of {', '.join(KEYS)}, got {value!r}")
    return value


def parse_job(raw: str | bytes, *, max_bytes: int) -> FilecoinJob:
    """A job from its JSON text (see the module docstring); ``FilecoinError`` naming the
    field otherwise. A large text is read without a generic JSON parse: the stored form by
    its fixed head, anything else as a C1 (``parse_c1`` lifts its byte arrays in bulk)."""
    data = raw.encode() if isinstance(raw, str) else bytes(raw)
    if len(data) > max_bytes:
        raise FilecoinError(too_large("c1", len(data), max_bytes))
    stored = _STORED.match(data)
    if stored:
        body = data.rstrip()
        if not body.endswith(b"}"):
            raise FilecoinError("job: the stored envelope does not close")
        c1 = parse_c1(body[stored.end():-1], max_bytes=max_bytes)
        return FilecoinJob(json.loads(stored.group(1)), c1.proof, body[stored.end():-1], c1=c1)
    envelope = _envelope(data) if len(data) <= SMALL_TEXT else None
    if envelope is None:
        c1 = parse_c1(data, max_bytes=max_bytes)
        return FilecoinJob(None, c1.proof, data, c1=c1)
    key = _key(envelope.get("key"))
    if "path" in envelope:
        if "c1" in envelope or "registered_proof" not in envelope:
            raise FilecoinError('job: a C1 on shared storage is {"path", "registered_proof"} '
                                '(and "key"), without "c1"')
        path = shared_relative_path(envelope["path"], "path", FilecoinError)
        return FilecoinJob(key, registered_proof(envelope["registered_proof"]), path=path)
    if "c1" not in envelope or set(envelope) - {"key", "c1"}:
        raise FilecoinError('job: expected {"key", "c1"} or {"key", "registered_proof", '
                            f'"path"}}, got the fields {sorted(envelope)}')
    text = json.dumps(envelope["c1"], separators=(",", ":")).encode()
    c1 = parse_c1(text, max_bytes=max_bytes)
    return FilecoinJob(key, c1.proof, text, c1=c1)


def _envelope(data: bytes) -> dict | None:
    """The envelope's fields, or None where the text is a C1 (which has none of ``c1``,
    ``path`` and ``key``)."""
    doc = load_json(data, "job", FilecoinError)
    if isinstance(doc, dict) and set(doc) & {"c1", "path", "key"}:
        return doc
    return None
