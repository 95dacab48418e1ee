"""``porep``'s worker half (``snark.proof_types.ProofWorker``): the C1's checks, the key of its
circuit shape, one partition's witness (on the CPU, or its compact inputs for a device),
and the job's proofs concatenated in partition order."""

from __future__ import annotations

from snark.backend import ProverBackend
from snark.groth16 import FixedBaseMul, SetupProgress
from snark.keys import ProvingKey
from snark.porep.c1 import C1
from snark.porep.circuit import public_inputs
from snark.porep.prove import (has_recorded_key, load_or_setup_key, load_verifying_key,
                               verify_c1)
from snark.porep.staging import PartitionWork, partition_work
from snark.porep.vanilla import check_public_inputs
from snark.proof_types import Storage


class PorepWorker:
    def __init__(self, storage: Storage) -> None:
        self.params_dir = storage.params_dir

    def check(self, job_input: C1) -> None:
        # replica_id and every challenge index from the seed (P·K hashes); the Merkle paths
        # and the replica encoding are checked per partition, in its witness.
        check_public_inputs(job_input)

    def has_key(self, job_input: C1) -> bool:
        # Only look for the recorded directory: loading (and hashing) a large key here would
        # be wasted, the worker runtime loads it once per process anyway.
        return has_recorded_key(job_input, self.params_dir)

    def make_key(self, job_input: C1, *, fixed_base: FixedBaseMul | None = None,
                 progress: SetupProgress | None = None) -> None:
        load_or_setup_key(job_input, self.params_dir, fixed_base=fixed_base, progress=progress)

    def load_key(self, job_input: C1, *, fixed_base: FixedBaseMul | None = None) -> ProvingKey:
        return load_or_setup_key(job_input, self.params_dir, fixed_base=fixed_base)

    def work(self, job_input: C1, unit: int, key: ProvingKey,
             backend: ProverBackend) -> PartitionWork:
        return partition_work(job_input, unit, backend)

    def public_inputs(self, job_input: C1, unit: int, key: ProvingKey,
                      work: PartitionWork) -> list[int]:
        return public_inputs(job_input, unit)

    def part(self, proof: bytes, public: list[int]) -> bytes:
        return proof  # the C1 gives the public inputs back

    def assemble(self, job_input: C1, parts: list[bytes]) -> bytes:
        return b"".join(parts)

    def verify(self, job_input: C1, result: bytes) -> bool:
        vk = load_verifying_key(job_input, self.params_dir)
        return verify_c1(job_input, vk, result, self.params_dir)
