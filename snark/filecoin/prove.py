"""Prove and verify a Filecoin C1: one Groth16 proof per partition, 192·P bytes in order.

This is what ``seal_commit_phase2`` returns (rust-fil-proofs concatenates the partitions'
proofs in partition order, each in bellperson's compressed encoding). Proving builds each
partition's witness from the C1 (``circuit.witness``) and refuses a C1 whose witness's
public inputs differ from the ones the verifier derives (``circuit.inputs.public_inputs``);
every partition proof is verified before it is returned. Verification derives the public
inputs from the C1 as ``verify_seal`` does (``statement``): replica_id from the prover and
sector ids where they are known, the challenges from it and the seed.
"""

from __future__ import annotations

from snark import groth16
from snark.backend import ProverBackend
import dataclasses

from snark.filecoin.c1 import FilecoinC1
from snark.filecoin.challenges import replica_id
from snark.filecoin.checks import check_not_zero
from snark.filecoin.circuit import StackedShape, witness
from snark.filecoin.circuit.inputs import partition_data, public_inputs
from snark.filecoin.errors import FilecoinError
from snark.keys import ProvingKey, VerifyingKey
from snark.proof import Proof, split_proofs


def prove_partition(c1: FilecoinC1, partition: int, key: ProvingKey,
                    backend: ProverBackend | None = None) -> bytes:
    shape = StackedShape.of(c1.proof)
    assignment = witness(shape, partition_data(c1, partition))
    expected = public_inputs(c1, partition)
    if assignment.public_inputs() != expected:
        raise FilecoinError(f"partition {partition}: the C1's proofs do not open the challenges "
                            "the seed derives (its witness has other public inputs)")
    proof = groth16.prove(key, assignment.assignment(), backend)
    if not groth16.verify(key.vk, expected, proof):
        raise FilecoinError(f"partition {partition}: the proof does not verify (the C1 does "
                            "not satisfy the circuit: run `proofq filecoin check`)")
    return proof.to_bytes()


def prove_c1(c1: FilecoinC1, key: ProvingKey, backend: ProverBackend | None = None) -> bytes:
    return b"".join(prove_partition(c1, p, key, backend) for p in range(c1.proof.partitions))


def statement(c1: FilecoinC1, prover_id: bytes | None = None,
              sector_id: int | None = None) -> tuple[FilecoinC1, bool]:
    """The C1 whose public inputs ``verify_seal`` checks, and whether its replica_id was
    derived: with prover_id and sector_id (given, else the ones the C1 names) replica_id is
    the hash of them, the ticket, comm_d and porep_id, never the C1's own; without them it
    is the C1's (the statement is then that replica_id, comm_d, comm_r and the seed)."""
    prover_id = prover_id if prover_id is not None else c1.prover_id
    sector_id = sector_id if sector_id is not None else c1.sector_id
    if prover_id is None or sector_id is None:
        return c1, False
    derived = replica_id(prover_id, sector_id, c1.ticket, c1.comm_d, c1.proof.porep_id)
    return dataclasses.replace(c1, replica_id=derived, prover_id=prover_id,
                               sector_id=sector_id), True


def verify_c1(c1: FilecoinC1, vk: VerifyingKey, proof_bytes: bytes) -> bool:
    """Whether every partition's proof verifies against ``c1``'s own public inputs (pass
    ``statement(c1)[0]`` to verify as ``verify_seal``); ``FilecoinError`` for zero
    commitments, ``ProofFormatError`` for bytes that are not ``partitions`` proofs."""
    check_not_zero(c1, ("comm_d", "comm_r"))
    proofs: list[Proof] = split_proofs(proof_bytes, c1.proof.partitions)
    return all(groth16.verify(vk, public_inputs(c1, p), proof)
               for p, proof in enumerate(proofs))
