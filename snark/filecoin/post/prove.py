"""Prove and verify one PoSt partition: a 192-byte Groth16 proof, as
``generate_single_window_post_with_vanilla`` / ``generate_winning_post_with_vanilla`` return it.

A partition is its vanilla proofs (checked first, as the api does), the randomness and the
partition index. The witness is built from the circuit sectors (a short partition padded),
on the CPU or by the plan's tapes on the device (``snark.plan_staging``), and refused if its
public inputs are not the ones a verifier derives from the request alone; every proof is
verified before it is returned.
"""

from __future__ import annotations

from dataclasses import dataclass

from snark import groth16
from snark.backend import ProverBackend
from snark.filecoin.errors import FilecoinError
from snark.filecoin.post.checks import check_partition, circuit_sectors
from snark.filecoin.post.circuit import FALLBACK_POST, PostData, PostShape, public_inputs
from snark.filecoin.post.vanilla import SectorProofs
from snark.keys import ProvingKey, VerifyingKey
from snark.plan_staging import PlanWork, plan_work
from snark.proof import split_proofs
from snark.unit_work import prove_work


@dataclass(frozen=True)
class Partition:
    """One PoSt partition as a request carries it."""

    sectors: SectorProofs
    randomness: bytes
    partition_index: int

    def check(self) -> None:
        check_partition(self.sectors, self.randomness, self.partition_index)

    def public_inputs(self) -> list[int]:
        return public_inputs(self.sectors.proof, self.randomness, self.sectors.sector_ids,
                             [c.tobytes() for c in self.sectors.comm_r], self.partition_index)

    def check_inputs(self, got: list[int]) -> None:
        """Refuses a witness whose public inputs are not the ones the request derives."""
        if got != self.public_inputs():
            raise FilecoinError("vanilla_proofs: the witness's public inputs are not the ones "
                                "the randomness derives (the proofs open other leaves)")

    def work(self, backend: ProverBackend) -> PlanWork:
        """The witness's work for ``backend`` (the circuit sectors' values)."""
        return plan_work(PostShape.of(self.sectors.proof), FALLBACK_POST.witness_plan,
                         PostData.of(circuit_sectors(self.sectors)).flatten(),
                         self.check_inputs, backend)


def prove_partition(partition: Partition, key: ProvingKey,
                    backend: ProverBackend | None = None) -> bytes:
    partition.check()
    backend = backend or groth16.default_backend()
    proof = prove_work(key, partition.work(backend), backend)
    if not groth16.verify(key.vk, partition.public_inputs(), proof):
        raise FilecoinError("the proof does not verify (the vanilla proofs do not satisfy the "
                            "circuit)")
    return proof.to_bytes()


def verify_partition(partition: Partition, vk: VerifyingKey, proof_bytes: bytes) -> bool:
    """Whether ``proof_bytes`` (192 bytes) proves the partition (``ProofFormatError`` for
    other bytes)."""
    (proof,) = split_proofs(proof_bytes, 1)
    return groth16.verify(vk, partition.public_inputs(), proof)
