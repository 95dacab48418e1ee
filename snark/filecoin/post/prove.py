"""Prove and verify one PoSt partition: a 192-byte Groth16 proof, as
``generate_single_window_post_with_vanilla`` / ``generate_winning_post_with_vanilla`` return it.

A partition is its vanilla proofs (checked first, as the api does), the randomness and the
partition index. The witness is built from the circuit sectors (a short partition padded)
and refused if its public inputs are not the ones a verifier derives from the request alone;
every proof is verified before it is returned.
"""

from __future__ import annotations

from dataclasses import dataclass

from snark import groth16
from snark.backend import ProverBackend
from snark.filecoin.errors import FilecoinError
from snark.filecoin.post.checks import check_partition, circuit_sectors
from snark.filecoin.post.circuit import PostData, PostShape, public_inputs, witness
from snark.filecoin.post.vanilla import SectorProofs
from snark.gadgets.evaluation import Witness
from snark.keys import ProvingKey, VerifyingKey
from snark.proof import split_proofs


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

    def witness(self) -> Witness:
        """The checked witness (public inputs compared with the derived ones)."""
        assignment = witness(PostShape.of(self.sectors.proof),
                             PostData.of(circuit_sectors(self.sectors)))
        if assignment.public_inputs() != self.public_inputs():
            raise FilecoinError("vanilla_proofs: the witness's public inputs are not the ones "
                                "the randomness derives (the proofs open other leaves)")
        return assignment


def prove_partition(partition: Partition, key: ProvingKey,
                    backend: ProverBackend | None = None) -> bytes:
    partition.check()
    proof = groth16.prove(key, partition.witness().assignment(), backend)
    if not groth16.verify(key.vk, partition.public_inputs(), proof):
        raise FilecoinError("the proof does not verify (the vanilla proofs do not satisfy the "
                            "circuit)")
    return proof.to_bytes()


def verify_partition(partition: Partition, vk: VerifyingKey, proof_bytes: bytes) -> bool:
    """Whether ``proof_bytes`` (192 bytes) proves the partition (``ProofFormatError`` for
    other bytes)."""
    (proof,) = split_proofs(proof_bytes, 1)
    return groth16.verify(vk, partition.public_inputs(), proof)
