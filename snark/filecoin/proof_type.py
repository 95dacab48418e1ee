"""``filecoin``'s producer half (``snark.proof_types.ProofType``): one sector's C1 as Curio
writes it, one unit of work per partition (1 for 2 KiB–512 MiB, 10 for 32 GiB and 64 GiB).
Its worker half is ``snark.filecoin.worker``; the input forms are ``snark.filecoin.job``'s.

The producer parses the whole C1 (the strict schema of ``snark.filecoin.c1_schema``: about a
second for a 32 GiB sector's 51 MB) and stores it as it came; the value checks (paths,
labels, challenges from the seed) run on a worker, before the fan-out.
"""

from __future__ import annotations

from snark.filecoin.errors import FilecoinError
from snark.filecoin.job import FilecoinJob, parse_job
from snark.filecoin.registered_proofs import key_stem
from snark.job_input import Admission, InputLimits, as_json_text


class FilecoinType:
    name = "filecoin"

    def parse(self, raw: object, limits: InputLimits) -> FilecoinJob:
        text = as_json_text(raw, FilecoinJob, FilecoinError, "c1")
        return parse_job(text, max_bytes=limits.max_input_bytes)

    def admit(self, raw: object, limits: InputLimits) -> Admission:
        job = self.parse(raw, limits)
        return Admission(canonical_json=job.to_json(), partitions=job.proof.partitions)

    def key_name(self, job_input: FilecoinJob) -> str:
        """The key's file stem (a job naming no key: under the official one's name, the
        lock its setup would take)."""
        return key_stem(job_input.proof, job_input.key or "official")
