"""``window-post`` / ``winning-post``'s worker half (``snark.proof_types.ProofWorker``): the
api's vanilla checks, the key (official, or a development key set up here), the partition's
witness (on the CPU, or its private values for the device's tapes), and the one 192-byte
proof."""

from __future__ import annotations

import functools

from snark.backend import ProverBackend
from snark.filecoin.params import convert_key, resident_key_dir
from snark.filecoin.post.job import PostJob
from snark.filecoin.post.prove import Partition, verify_partition
from snark.filecoin.post.vanilla import SectorProofs
from snark.groth16 import FixedBaseMul, SetupProgress
from snark.keys import ProvingKey, VerifyingKey
from snark.filecoin.settings import FilecoinSettings
from snark.plan_staging import PlanWork
from snark.proof_types import Storage


class PostWorker:
    def __init__(self, storage: Storage, settings: FilecoinSettings) -> None:
        self.params_dir = storage.params_dir
        self.shared_dir = storage.shared_dir
        self.official_dir = settings.params_dir
        self.default_key = settings.key

    def partition(self, job: PostJob) -> Partition:
        """The job's partition, its vanilla proofs decoded (read once from shared storage)."""
        return Partition(self._sectors(job), job.randomness, job.partition_index)

    @functools.lru_cache(maxsize=4)  # noqa: B019 - one worker half per host storage
    def _sectors(self, job: PostJob) -> SectorProofs:
        return job.load_sectors(self.shared_dir)

    def check(self, job_input: PostJob) -> None:
        self.partition(job_input).check()

    def key_kind(self, job_input: PostJob) -> str:
        return job_input.key or self.default_key

    def _key_dir(self, job_input: PostJob):
        return resident_key_dir(job_input.proof, self.key_kind(job_input), self.params_dir)

    def has_key(self, job_input: PostJob) -> bool:
        return (self._key_dir(job_input) / "manifest.json").exists()

    def make_key(self, job_input: PostJob, *, fixed_base: FixedBaseMul | None = None,
                 progress: SetupProgress | None = None) -> None:
        convert_key(job_input.proof, self.key_kind(job_input), self.params_dir,
                    self.official_dir, fixed_base=fixed_base, progress=progress)

    def load_key(self, job_input: PostJob, *,
                 fixed_base: FixedBaseMul | None = None) -> ProvingKey:
        self.make_key(job_input, fixed_base=fixed_base)
        return ProvingKey.load(self._key_dir(job_input))

    def work(self, job_input: PostJob, unit: int, key: ProvingKey,
             backend: ProverBackend) -> PlanWork:
        return self.partition(job_input).work(backend)

    def public_inputs(self, job_input: PostJob, unit: int, key: ProvingKey,
                      work: PlanWork) -> list[int]:
        return self.partition(job_input).public_inputs()

    def part(self, proof: bytes, public: list[int]) -> bytes:
        return proof  # the request gives the public inputs back

    def assemble(self, job_input: PostJob, parts: list[bytes]) -> bytes:
        (proof,) = parts
        return proof

    def verify(self, job_input: PostJob, result: bytes) -> bool:
        vk = VerifyingKey.load(self._key_dir(job_input))
        return verify_partition(self.partition(job_input), vk, result)
