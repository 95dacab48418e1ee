"""``snap``'s producer half (``snark.proof_types.ProofType``): one SnapDeals update, one unit
of work per partition (1 for 2 KiB, 4 for 8 MiB, 16 from 512 MiB). Its worker half is
``snark.filecoin.snap.worker``; the input forms are ``snark.filecoin.snap.job``'s.

The producer decodes the whole update (every partition's bincode, strictly); the value
checks (openings, labels, commitments) run on a worker, before the fan-out.
"""

from __future__ import annotations

from snark.filecoin.errors import FilecoinError
from snark.filecoin.registered_proofs import key_stem
from snark.filecoin.snap.job import SnapJob, parse_job
from snark.job_input import Admission, InputLimits, as_json_text


class SnapType:
    name = "snap"

    def parse(self, raw: object, limits: InputLimits) -> SnapJob:
        text = as_json_text(raw, SnapJob, FilecoinError, "update")
        return parse_job(text, max_bytes=limits.max_input_bytes)

    def admit(self, raw: object, limits: InputLimits) -> Admission:
        job = self.parse(raw, limits)
        return Admission(canonical_json=job.to_json(), partitions=job.update.shape.partitions)

    def key_name(self, job_input: SnapJob) -> str:
        return key_stem(job_input.update.shape, job_input.key or "official")
