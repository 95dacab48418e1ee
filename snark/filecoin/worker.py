"""``filecoin``'s worker half (``snark.proof_types.ProofWorker``): the C1's checks, the key
(official, or a development key set up here), one partition's witness (on the CPU, or its
private data for the device's tapes), and the sector's proof: the partitions' 192-byte
proofs concatenated in partition order, as ``seal_commit_phase2`` returns it."""

from __future__ import annotations

import functools

from snark.backend import ProverBackend
from snark.filecoin.c1 import FilecoinC1
from snark.filecoin.checks import check_c1
from snark.filecoin.circuit.inputs import public_inputs
from snark.filecoin.job import FilecoinJob
from snark.filecoin.params import convert_key, resident_key_dir
from snark.filecoin.prove import statement, verify_c1
from snark.filecoin.staging import partition_work
from snark.groth16 import FixedBaseMul, SetupProgress
from snark.keys import ProvingKey, VerifyingKey
from snark.filecoin.settings import FilecoinSettings
from snark.plan_staging import PlanWork
from snark.proof_types import Storage

#: A C1 read from shared storage may be larger than what Redis carries (a 64 GiB one is
#: about 100 MB), but not without bound.
MAX_SHARED_C1_BYTES = 1 << 30


class FilecoinWorker:
    def __init__(self, storage: Storage, settings: FilecoinSettings) -> None:
        self.params_dir = storage.params_dir
        self.shared_dir = storage.shared_dir
        self.official_dir = settings.params_dir
        self.default_key = settings.key

    def c1(self, job: FilecoinJob) -> FilecoinC1:
        """The job's C1: parsed with the job, or read once from shared storage."""
        return job.c1 if job.c1 is not None else self._shared_c1(job)

    @functools.lru_cache(maxsize=4)  # noqa: B019 - one worker half per host storage
    def _shared_c1(self, job: FilecoinJob) -> FilecoinC1:
        return job.load(self.shared_dir, MAX_SHARED_C1_BYTES)

    def check(self, job_input: FilecoinJob) -> None:
        """Every check ``seal_commit_phase2`` makes of the vanilla proofs, and replica_id
        against prover_id and sector_id where the job names them."""
        c1 = self.c1(job_input)
        check_c1(c1, prover_id=c1.prover_id, sector_id=c1.sector_id)

    def has_key(self, job_input: FilecoinJob) -> bool:
        return (self._key_dir(job_input) / "manifest.json").exists()

    def key_kind(self, job_input: FilecoinJob) -> str:
        """The key the job is proved under: its own, else this cluster's."""
        return job_input.key or self.default_key

    def make_key(self, job_input: FilecoinJob, *, fixed_base: FixedBaseMul | None = None,
                 progress: SetupProgress | None = None) -> None:
        convert_key(job_input.proof, self.key_kind(job_input), self.params_dir,
                    self.official_dir, fixed_base=fixed_base, progress=progress)

    def load_key(self, job_input: FilecoinJob, *,
                 fixed_base: FixedBaseMul | None = None) -> ProvingKey:
        self.make_key(job_input, fixed_base=fixed_base)
        return ProvingKey.load(self._key_dir(job_input))

    def _key_dir(self, job_input: FilecoinJob):
        return resident_key_dir(job_input.proof, self.key_kind(job_input), self.params_dir)

    def work(self, job_input: FilecoinJob, unit: int, key: ProvingKey,
             backend: ProverBackend) -> PlanWork:
        return partition_work(self.c1(job_input), unit, backend)

    def public_inputs(self, job_input: FilecoinJob, unit: int, key: ProvingKey,
                      work: PlanWork) -> list[int]:
        return public_inputs(self.c1(job_input), unit)

    def part(self, proof: bytes, public: list[int]) -> bytes:
        return proof  # the C1 gives the public inputs back

    def assemble(self, job_input: FilecoinJob, parts: list[bytes]) -> bytes:
        return b"".join(parts)

    def verify(self, job_input: FilecoinJob, result: bytes) -> bool:
        vk = VerifyingKey.load(self._key_dir(job_input))
        return verify_c1(statement(self.c1(job_input))[0], vk, result)
