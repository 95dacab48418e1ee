"""``groth16`` as a proof type (``snark.proof_types``): an imported snarkjs key and a batch
of circom witnesses in, one snarkjs proof per witness out.

Producers import this module to parse a job, so the curve, the prover and the key store
are imported inside the methods that run on a worker.

A unit of work is one witness. Its part (what the job stores) is the 192-byte proof followed
by its public signals (32 bytes each, big-endian), so assembly needs no witness again. The
job's result is JSON text, one entry per witness in order, each what snarkjs writes::

    {"key": "<key id>", "proofs": [{"proof": <proof.json>, "public": <public.json>}, …]}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from config.settings import get_settings
from snark.fields import FR_BYTES
from snark.job_input import Admission, as_json_text
from snark.snarkjs.job import Groth16Job, Groth16JobError, parse_job, read_witness

if TYPE_CHECKING:
    import numpy as np

    from snark.backend import ProverBackend
    from snark.keys import ProvingKey


class Groth16Type:
    name = "groth16"

    def parse(self, raw: Any) -> Groth16Job:
        text = as_json_text(raw, Groth16Job, Groth16JobError, "job")
        settings = get_settings()
        return parse_job(text, max_bytes=settings.max_c1_bytes,
                         max_inline=settings.max_inline_witness_bytes)

    def check(self, job_input: Groth16Job) -> None:
        """Read every inline witness (a wrong curve or a truncated file is refused here);
        witnesses on shared storage are read where they are proved."""
        for i, ref in enumerate(job_input.witnesses):
            if ref.wtns is not None:
                read_witness(job_input, i, None)

    def admit(self, raw: Any) -> Admission:
        job = self.parse(raw)
        return Admission(canonical_json=job.to_json(), partitions=len(job.witnesses))

    def circuit_name(self, job_input: Groth16Job) -> str:
        return job_input.key

    def has_key(self, job_input: Groth16Job, params_dir: Path) -> bool:
        return (Path(params_dir) / job_input.key / "manifest.json").exists()

    def make_key(self, job_input: Groth16Job, params_dir: Path, *, fixed_base: Any = None,
                 progress: Any = None) -> None:
        """A snarkjs key is imported, never made here."""
        from snark.keys import KeyFileError

        raise KeyFileError(f"key {job_input.key}: not in {params_dir}; import its zkey there "
                           f"first (proofq keys add circuit.zkey)")

    def key_ref(self, job_input: Groth16Job) -> str:
        return job_input.key

    def load_key(self, job_input: Groth16Job, params_dir: Path, *,
                 fixed_base: Any = None) -> ProvingKey:
        from snark.params import load_key

        if not self.has_key(job_input, params_dir):
            self.make_key(job_input, params_dir)
        return load_key(Path(params_dir), job_input.key)

    def device_witness(self, backend: ProverBackend) -> bool:
        return False  # the witness is given: there is nothing to compute

    def work(self, job_input: Groth16Job, partition: int, key: ProvingKey, *,
             on_device: bool) -> np.ndarray:
        if not 0 <= partition < len(job_input.witnesses):
            raise Groth16JobError(f"witnesses[{partition}]: the job has "
                                  f"{len(job_input.witnesses)} witnesses")
        from snark.snarkjs.witness import check_witness

        witness = read_witness(job_input, partition, get_settings().witness_dir)
        check_witness(key, witness, f"witnesses[{partition}]")
        return witness

    def public_inputs(self, job_input: Groth16Job, partition: int, key: ProvingKey,
                      work: np.ndarray) -> list[int]:
        from snark.snarkjs.witness import public_inputs

        return public_inputs(key, work)

    def stage(self, key: ProvingKey, work: np.ndarray, backend: ProverBackend) -> Any:
        from snark import groth16

        return groth16.stage(key, work, backend)

    def witness(self, key: ProvingKey, work: np.ndarray, staged: Any,
                backend: ProverBackend) -> Any:
        return staged

    def part(self, proof: bytes, public: list[int]) -> bytes:
        return proof + b"".join(v.to_bytes(FR_BYTES, "big") for v in public)

    def assemble(self, job_input: Groth16Job, parts: list[bytes]) -> bytes:
        from snark.proof import PROOF_BYTES, Proof
        from snark.snarkjs.json_formats import proof_to_json, public_to_json

        proofs = []
        for i, part in enumerate(parts):
            proof = Proof.from_bytes(part[:PROOF_BYTES], name=f"part {i}")
            public = [int.from_bytes(part[k:k + FR_BYTES], "big")
                      for k in range(PROOF_BYTES, len(part), FR_BYTES)]
            proofs.append({"proof": proof_to_json(proof), "public": public_to_json(public)})
        return json.dumps({"key": job_input.key, "proofs": proofs}).encode()

    def verify(self, job_input: Groth16Job, params_dir: Path, result: bytes) -> bool:
        """Every proof of the result against its public signals, with the key's vk (checked
        against its manifest)."""
        from snark import groth16
        from snark.keys import VerifyingKey
        from snark.snarkjs.json_formats import proof_from_json, public_from_json

        vk = VerifyingKey.load(Path(params_dir) / job_input.key)
        entries = json.loads(result)["proofs"]
        if len(entries) != len(job_input.witnesses):
            return False
        return all(groth16.verify(vk, public_from_json(e["public"], f"proofs[{i}].public"),
                                  proof_from_json(e["proof"], f"proofs[{i}].proof"))
                   for i, e in enumerate(entries))
