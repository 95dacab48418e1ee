"""``porep``'s producer half (``snark.proof_types.ProofType``): a C1 in, one unit of work per
partition. Its worker half is ``snark.porep.worker``."""

from __future__ import annotations

from snark.job_input import Admission, InputLimits, as_json_text
from snark.porep.c1 import C1, C1Error, parse_c1, parse_c1_hex


class PorepType:
    name = "porep-demo"

    def parse(self, raw: object, limits: InputLimits) -> C1:
        text = as_json_text(raw, C1, C1Error, "c1")
        return parse_c1(text, max_bytes=limits.max_input_bytes)

    def admit(self, raw: object, limits: InputLimits) -> Admission:
        text = as_json_text(raw, C1, C1Error, "c1")
        c1 = parse_c1_hex(text, max_bytes=limits.max_input_bytes)
        return Admission(canonical_json=c1.to_json(), partitions=c1.partitions)

    def key_name(self, job_input: C1) -> str:
        return job_input.circuit_name
