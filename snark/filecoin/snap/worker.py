"""``snap``'s worker half (``snark.proof_types.ProofWorker``): the update's checks, the key
(official, or a development key set up here), one partition's witness (on the CPU, or its
private values for the device's tapes), and the update's proof: the partitions' 192-byte
proofs concatenated in partition order."""

from __future__ import annotations

from snark.backend import ProverBackend
from snark.filecoin.params import convert_key, resident_key_dir
from snark.filecoin.snap.checks import check_update
from snark.filecoin.snap.inputs import public_inputs
from snark.filecoin.snap.job import SnapJob
from snark.filecoin.snap.prove import partition_work, verify_update
from snark.groth16 import FixedBaseMul, SetupProgress
from snark.keys import ProvingKey, VerifyingKey
from snark.filecoin.settings import FilecoinSettings
from snark.plan_staging import PlanWork
from snark.proof_types import Storage


class SnapWorker:
    def __init__(self, storage: Storage, settings: FilecoinSettings) -> None:
        self.params_dir = storage.params_dir
        self.official_dir = settings.params_dir
        self.default_key = settings.key

    def check(self, job_input: SnapJob) -> None:
        check_update(job_input.update)

    def key_kind(self, job_input: SnapJob) -> str:
        return job_input.key or self.default_key

    def _key_dir(self, job_input: SnapJob):
        return resident_key_dir(job_input.update.shape, self.key_kind(job_input),
                                self.params_dir)

    def has_key(self, job_input: SnapJob) -> bool:
        return (self._key_dir(job_input) / "manifest.json").exists()

    def make_key(self, job_input: SnapJob, *, fixed_base: FixedBaseMul | None = None,
                 progress: SetupProgress | None = None) -> None:
        convert_key(job_input.update.shape, self.key_kind(job_input), self.params_dir,
                    self.official_dir, fixed_base=fixed_base, progress=progress)

    def load_key(self, job_input: SnapJob, *,
                 fixed_base: FixedBaseMul | None = None) -> ProvingKey:
        self.make_key(job_input, fixed_base=fixed_base)
        return ProvingKey.load(self._key_dir(job_input))

    def work(self, job_input: SnapJob, unit: int, key: ProvingKey,
             backend: ProverBackend) -> PlanWork:
        return partition_work(job_input.update, unit, backend)

    def public_inputs(self, job_input: SnapJob, unit: int, key: ProvingKey,
                      work: PlanWork) -> list[int]:
        return public_inputs(job_input.update, unit)

    def part(self, proof: bytes, public: list[int]) -> bytes:
        return proof  # the update gives the public inputs back

    def assemble(self, job_input: SnapJob, parts: list[bytes]) -> bytes:
        return b"".join(parts)

    def verify(self, job_input: SnapJob, result: bytes) -> bool:
        vk = VerifyingKey.load(self._key_dir(job_input))
        return verify_update(job_input.update, vk, result)
