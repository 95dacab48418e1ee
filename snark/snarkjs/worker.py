"""``circom``'s worker half (``snark.proof_types.ProofWorker``): an imported snarkjs key, one
proof per circom witness, snarkjs's files out.

A unit of work is one witness. Its part (what the job stores) is the 192-byte proof followed
by its public signals (32 bytes each, big-endian), so assembly needs no witness again. The
job's result is JSON text, one entry per witness in order, each what snarkjs writes::

    {"key": "<key id>", "proofs": [{"proof": <proof.json>, "public": <public.json>}, …]}
"""

from __future__ import annotations

import json

from snark import groth16
from snark.backend import ProverBackend
from snark.fields import FR_BYTES
from snark.groth16 import FixedBaseMul, SetupProgress
from snark.keys import KeyFileError, ProvingKey, VerifyingKey
from snark.params import load_key
from snark.proof import PROOF_BYTES, Proof
from snark.proof_types import Storage
from snark.snarkjs.job import CircomJob, CircomJobError, read_witness
from snark.snarkjs.json_formats import (proof_from_json, proof_to_json, public_from_json,
                                        public_to_json)
from snark.snarkjs.witness import check_witness, public_inputs
from snark.unit_work import HostWitness


class CircomWorker:
    def __init__(self, storage: Storage) -> None:
        self.params_dir = storage.params_dir
        self.witness_dir = storage.shared_dir

    def check(self, job_input: CircomJob) -> None:
        """Read every inline witness (a wrong curve or a truncated file is refused here);
        witnesses on shared storage are read where they are proved."""
        for i, ref in enumerate(job_input.witnesses):
            if ref.wtns is not None:
                read_witness(job_input, i, None)

    def has_key(self, job_input: CircomJob) -> bool:
        return (self.params_dir / job_input.key / "manifest.json").exists()

    def make_key(self, job_input: CircomJob, *, fixed_base: FixedBaseMul | None = None,
                 progress: SetupProgress | None = None) -> None:
        """A snarkjs key is imported, never made here."""
        raise KeyFileError(f"key {job_input.key}: not in {self.params_dir}; import its zkey "
                           f"there first (proofq keys add circuit.zkey)")

    def load_key(self, job_input: CircomJob, *,
                 fixed_base: FixedBaseMul | None = None) -> ProvingKey:
        if not self.has_key(job_input):
            self.make_key(job_input)
        return load_key(self.params_dir, job_input.key)

    def work(self, job_input: CircomJob, unit: int, key: ProvingKey,
             backend: ProverBackend) -> HostWitness:
        """The witness is given: read and checked against the key, never computed."""
        if not 0 <= unit < len(job_input.witnesses):
            raise CircomJobError(f"witnesses[{unit}]: the job has "
                                 f"{len(job_input.witnesses)} witnesses")
        witness = read_witness(job_input, unit, self.witness_dir)
        check_witness(key, witness, f"witnesses[{unit}]")
        return HostWitness(witness)

    def public_inputs(self, job_input: CircomJob, unit: int, key: ProvingKey,
                      work: HostWitness) -> list[int]:
        return public_inputs(key, work.witness)

    def part(self, proof: bytes, public: list[int]) -> bytes:
        return proof + b"".join(v.to_bytes(FR_BYTES, "big") for v in public)

    def assemble(self, job_input: CircomJob, parts: list[bytes]) -> bytes:
        proofs = []
        for i, part in enumerate(parts):
            proof = Proof.from_bytes(part[:PROOF_BYTES], name=f"part {i}")
            public = [int.from_bytes(part[k:k + FR_BYTES], "big")
                      for k in range(PROOF_BYTES, len(part), FR_BYTES)]
            proofs.append({"proof": proof_to_json(proof), "public": public_to_json(public)})
        return json.dumps({"key": job_input.key, "proofs": proofs}).encode()

    def verify(self, job_input: CircomJob, result: bytes) -> bool:
        """Every proof of the result against its public signals, with the key's vk (checked
        against its manifest)."""
        vk = VerifyingKey.load(self.params_dir / job_input.key)
        entries = json.loads(result)["proofs"]
        if len(entries) != len(job_input.witnesses):
            return False
        return all(groth16.verify(vk, public_from_json(e["public"], f"proofs[{i}].public"),
                                  proof_from_json(e["proof"], f"proofs[{i}].proof"))
                   for i, e in enumerate(entries))
