"""``porep`` as a proof type (``snark.proof_types``): a C1 in, one proof per partition out.

Producers import this module to parse a C1, so everything that proves, verifies or hashes
(arkworks, the circuit, the key) is imported inside the methods that run on a worker.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from config.settings import get_settings
from snark.job_input import Admission, as_json_text
from snark.porep.c1 import C1, C1Error, parse_c1, parse_c1_hex

if TYPE_CHECKING:
    from snark.backend import ProverBackend
    from snark.keys import ProvingKey
    from snark.porep.staging import Work


class PorepType:
    name = "porep"

    def parse(self, raw: Any) -> C1:
        text = as_json_text(raw, C1, C1Error, "c1")
        return parse_c1(text, max_bytes=get_settings().max_c1_bytes)

    def admit(self, raw: Any) -> Admission:
        text = as_json_text(raw, C1, C1Error, "c1")
        c1 = parse_c1_hex(text, max_bytes=get_settings().max_c1_bytes)
        return Admission(canonical_json=c1.to_json(), partitions=c1.partitions)

    def check(self, job_input: C1) -> None:
        # replica_id and every challenge index from the seed (P·K hashes); the Merkle paths
        # and the replica encoding are checked per partition, in its witness.
        from snark.porep.vanilla import check_public_inputs

        check_public_inputs(job_input)

    def circuit_name(self, job_input: C1) -> str:
        return job_input.circuit_name

    def has_key(self, job_input: C1, params_dir: Path) -> bool:
        # Only look for the recorded directory: loading (and hashing) a large key here would
        # be wasted, the worker runtime loads it once per process anyway.
        from snark.porep.prove import has_recorded_key

        return has_recorded_key(job_input, params_dir)

    def make_key(self, job_input: C1, params_dir: Path, *, fixed_base: Any = None,
                 progress: Any = None) -> None:
        from snark.porep.prove import load_or_setup_key

        load_or_setup_key(job_input, params_dir, fixed_base=fixed_base, progress=progress)

    def key_ref(self, job_input: C1) -> tuple[int, int]:
        return job_input.sector_size, job_input.challenges

    def load_key(self, job_input: C1, params_dir: Path, *,
                 fixed_base: Any = None) -> ProvingKey:
        from snark.porep.prove import load_or_setup_key

        return load_or_setup_key(job_input, params_dir, fixed_base=fixed_base)

    def device_witness(self, backend: ProverBackend) -> bool:
        from snark.porep.staging import computes_witness

        return computes_witness(backend)

    def work(self, job_input: C1, partition: int, key: ProvingKey, *, on_device: bool) -> Work:
        from snark.porep.staging import partition_work

        return partition_work(job_input, partition, on_device=on_device)

    def public_inputs(self, job_input: C1, partition: int, key: ProvingKey,
                      work: Work) -> list[int]:
        from snark.porep.circuit import public_inputs

        return public_inputs(job_input, partition)

    def stage(self, key: ProvingKey, work: Work, backend: ProverBackend) -> Any:
        from snark.porep.staging import stage

        return stage(key, work, backend)

    def witness(self, key: ProvingKey, work: Work, staged: Any, backend: ProverBackend) -> Any:
        from snark.porep.staging import witness_handle

        return witness_handle(key, work, staged, backend)

    def part(self, proof: bytes, public: list[int]) -> bytes:
        return proof  # the C1 gives the public inputs back

    def assemble(self, job_input: C1, parts: list[bytes]) -> bytes:
        return b"".join(parts)

    def verify(self, job_input: C1, params_dir: Path, result: bytes) -> bool:
        from snark.porep.prove import load_verifying_key, verify_c1

        return verify_c1(job_input, load_verifying_key(job_input, params_dir), result, params_dir)
