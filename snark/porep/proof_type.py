"""``porep`` as a proof type (``snark.proof_types``): a C1 in, one proof per partition out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from snark.backend import ProverBackend
from snark.keys import ProvingKey
from snark.params import key_dir
from snark.porep.c1 import C1, C1Error, parse_c1
from snark.porep.circuit import public_inputs
from snark.porep.prove import (circuit_id_for, load_or_setup_key, load_verifying_key,
                                verify_c1)
from snark.porep.staging import Work, computes_witness, partition_work, stage, witness_handle
from snark.porep.vanilla import verify_vanilla


class PorepType:
    name = "porep"

    def parse(self, raw: Any) -> C1:
        # Models and dicts go through JSON text too, so one size limit and one validation
        # apply to every way of handing in a C1 (a model may be built without validation).
        if isinstance(raw, C1):
            raw = raw.to_json()
        elif isinstance(raw, dict):
            raw = json.dumps(raw)
        elif not isinstance(raw, (str, bytes)):
            raise C1Error(f"c1: expected JSON text, bytes, a dict or a C1, "
                          f"got {type(raw).__name__}")
        return parse_c1(raw)

    def check(self, job_input: C1) -> None:
        verify_vanilla(job_input)

    def canonical_json(self, job_input: C1) -> str:
        return job_input.to_json()

    def partitions(self, job_input: C1) -> int:
        return job_input.partitions

    def circuit_id(self, job_input: C1) -> str:
        return circuit_id_for(job_input)

    def has_key(self, job_input: C1, params_dir: Path) -> bool:
        # Only look for the directory: loading (and hashing) a large key here would be
        # wasted, the worker runtime loads it once per process anyway.
        return key_dir(params_dir, circuit_id_for(job_input, params_dir)).exists()

    def make_key(self, job_input: C1, params_dir: Path) -> None:
        load_or_setup_key(job_input, params_dir)

    def key_ref(self, job_input: C1) -> tuple[int, int]:
        return job_input.sector_size, job_input.challenges

    def load_key(self, job_input: C1, params_dir: Path) -> ProvingKey:
        return load_or_setup_key(job_input, params_dir)

    def device_witness(self, backend: ProverBackend) -> bool:
        return computes_witness(backend)

    def work(self, job_input: C1, partition: int, key: ProvingKey, *, on_device: bool) -> Work:
        return partition_work(job_input, partition, on_device=on_device)

    def public_inputs(self, job_input: C1, partition: int, key: ProvingKey,
                      work: Work) -> list[int]:
        return public_inputs(job_input, partition)

    def stage(self, key: ProvingKey, work: Work, backend: ProverBackend) -> Any:
        return stage(key, work, backend)

    def witness(self, key: ProvingKey, work: Work, staged: Any, backend: ProverBackend) -> Any:
        return witness_handle(key, work, staged, backend)

    def part(self, proof: bytes, public: list[int]) -> bytes:
        return proof  # the C1 gives the public inputs back

    def assemble(self, job_input: C1, parts: list[bytes]) -> bytes:
        return b"".join(parts)

    def verify(self, job_input: C1, params_dir: Path, result: bytes) -> bool:
        return verify_c1(job_input, load_verifying_key(job_input, params_dir), result, params_dir)
