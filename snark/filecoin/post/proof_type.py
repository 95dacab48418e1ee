"""``window-post`` and ``winning-post``'s producer half (``snark.proof_types.ProofType``): one
partition as Curio sends it (``job``), one unit of work. Its worker half is
``snark.filecoin.post.worker``."""

from __future__ import annotations

from snark.filecoin.errors import FilecoinError
from snark.filecoin.post.job import PostJob, parse_post_job
from snark.filecoin.registered_proofs import key_stem
from snark.job_input import Admission, InputLimits, as_json_text


class PostType:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.name = f"{kind}-post"

    def parse(self, raw: object, limits: InputLimits) -> PostJob:
        text = as_json_text(raw, PostJob, FilecoinError, "post job")
        return parse_post_job(text, self.kind, max_bytes=limits.max_input_bytes)

    def admit(self, raw: object, limits: InputLimits) -> Admission:
        return Admission(canonical_json=self.parse(raw, limits).to_json(), partitions=1)

    def key_name(self, job_input: PostJob) -> str:
        return key_stem(job_input.proof, job_input.key or "official")
