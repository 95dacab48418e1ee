"""``circom``'s producer half (``snark.proof_types.ProofType``): a batch of circom witnesses
for one imported snarkjs key, one unit of work per witness. It was called ``groth16``
before, a name it still answers to (``snark.registry``). Its worker half is
``snark.snarkjs.worker``."""

from __future__ import annotations

from snark.job_input import Admission, InputLimits, as_json_text
from snark.snarkjs.job import CircomJob, CircomJobError, parse_job


class CircomType:
    name = "circom"

    def parse(self, raw: object, limits: InputLimits) -> CircomJob:
        text = as_json_text(raw, CircomJob, CircomJobError, "job")
        return parse_job(text, max_bytes=limits.max_input_bytes,
                         max_inline=limits.max_inline_witness_bytes)

    def admit(self, raw: object, limits: InputLimits) -> Admission:
        job = self.parse(raw, limits)
        return Admission(canonical_json=job.to_json(), partitions=len(job.witnesses))

    def key_name(self, job_input: CircomJob) -> str:
        return job_input.key
