"""Prove and verify a SnapDeals update: one Groth16 proof per partition, 192·P bytes in
partition order (what ``generate_empty_sector_update_proof_with_vanilla`` returns).

Proving checks the update first (``checks``: what rust-fil-proofs verifies before proving),
builds each partition's witness (``circuit.witness``), refuses one whose public inputs are
not the derived ones, and verifies every partition proof before returning it. Verifying
derives the public inputs from the update's commitments alone.
"""

from __future__ import annotations

from snark import groth16
from snark.backend import ProverBackend
from snark.filecoin.errors import FilecoinError
from snark.filecoin.snap.checks import check_partition
from snark.filecoin.snap.circuit import witness
from snark.filecoin.snap.inputs import partition_data, public_inputs
from snark.filecoin.snap.update import SnapUpdate
from snark.filecoin.staging import check_public_inputs
from snark.keys import ProvingKey, VerifyingKey
from snark.proof import split_proofs


def partition_assignment(update: SnapUpdate, k: int):
    """Partition ``k``'s checked witness (the full assignment)."""
    check_partition(update, k)
    assignment = witness(update.shape, partition_data(update, k))
    check_public_inputs(k, assignment.public_inputs(), public_inputs(update, k))
    return assignment.assignment()


def prove_partition(update: SnapUpdate, k: int, key: ProvingKey,
                    backend: ProverBackend | None = None) -> bytes:
    proof = groth16.prove(key, partition_assignment(update, k), backend)
    if not groth16.verify(key.vk, public_inputs(update, k), proof):
        raise FilecoinError(f"partition {k}: the proof does not verify under the key's own "
                            "verifying key (a key for another circuit?)")
    return proof.to_bytes()


def prove_update(update: SnapUpdate, key: ProvingKey,
                 backend: ProverBackend | None = None) -> bytes:
    return b"".join(prove_partition(update, k, key, backend)
                    for k in range(update.shape.partitions))


def verify_update(update: SnapUpdate, vk: VerifyingKey, proof_bytes: bytes) -> bool:
    """Whether every partition's proof verifies (``ProofFormatError`` for bytes that are
    not ``partitions`` proofs)."""
    proofs = split_proofs(proof_bytes, update.shape.partitions)
    return all(groth16.verify(vk, public_inputs(update, k), proof)
               for k, proof in enumerate(proofs))
