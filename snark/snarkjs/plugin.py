"""``circom`` as a plug-in (``snark.plugins``): a batch of circom witnesses proved with an
imported snarkjs key, one unit per witness, delivered as snarkjs's proof and public files.
Its commands (``proofq keys``, ``prove --zkey``, ``verify --vk``) are
``client.commands.snarkjs``'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from snark.job_input import InputLimits
from snark.plugins import Delivered, InputForms, ProofTypePlugin, ReadFile
from snark.proof_types import Storage
from snark.snarkjs.proof_type import CircomType


def _claim(head: bytes) -> int:
    return 2 if head.lstrip().startswith(b"{") and b'"witnesses"' in head else 0


def _needs_key(head: bytes) -> str | None:
    if head[:4] != b"wtns":
        return None
    return ("a circom witness; prove witnesses with --type circom --key KEY_ID (proofq keys "
            "list shows the imported keys)")


def _with_key(key_id: str, files: tuple[str | bytes, ...], read: ReadFile,
              limits: InputLimits, storage: Storage) -> Any:
    """One proof per .wtns file (or its bytes); each travels inline or by its path under
    the witness dir."""
    from snark.snarkjs.job import job_from_files

    return job_from_files(key_id, files, max_inline=limits.max_inline_witness_bytes,
                          witness_dir=storage.shared_dir)


def _deliver(result: bytes, output: str | None) -> Delivered:
    """snarkjs's files: ``OUTPUT/proof-<i>.json`` and ``public-<i>.json`` per witness i, or
    the result JSON."""
    from snark.files import write_atomic

    proofs = json.loads(result)["proofs"]
    if output is not None:
        directory = Path(output)
        directory.mkdir(parents=True, exist_ok=True)
        for i, entry in enumerate(proofs):
            write_atomic(directory / f"proof-{i}.json", json.dumps(entry["proof"]).encode())
            write_atomic(directory / f"public-{i}.json", json.dumps(entry["public"]).encode())
    return Delivered({"output": output, "proofs": None if output else proofs}, result.decode(),
                     f"{output}/proof-*.json, public-*.json ({len(proofs)} proofs)")


PLUGIN = ProofTypePlugin(
    CircomType(), worker="snark.snarkjs.worker:CircomWorker", aliases=("groth16",),
    inputs=InputForms(claim=_claim, needs_key=_needs_key, with_key=_with_key,
                      several_files=True, deliver=_deliver),
    commands="client.commands.snarkjs:COMMANDS")
