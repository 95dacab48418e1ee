"""Prove and verify a SnapDeals update: one Groth16 proof per partition, 192·P bytes in
partition order (what ``generate_empty_sector_update_proof_with_vanilla`` returns).

Proving checks the update first (``checks``: what rust-fil-proofs verifies before proving),
builds each partition's witness (``circuit.witness_plan``: on the CPU, or its tapes on the
device, ``snark.plan_staging``), refuses one whose public inputs are not the derived ones,
and verifies every partition proof before returning it. Verifying derives the public inputs
from the update's commitments alone.
"""

from __future__ import annotations

from functools import partial

from snark import groth16
from snark.backend import ProverBackend
from snark.filecoin.errors import FilecoinError
from snark.filecoin.snap.checks import check_partition
from snark.filecoin.snap.circuit import witness_plan
from snark.filecoin.snap.inputs import partition_data, public_inputs
from snark.filecoin.snap.update import SnapUpdate
from snark.filecoin.staging import check_public_inputs
from snark.keys import ProvingKey, VerifyingKey
from snark.plan_staging import PlanWork, plan_work
from snark.proof import split_proofs
from snark.unit_work import prove_work


def partition_work(update: SnapUpdate, k: int, backend: ProverBackend) -> PlanWork:
    """Partition ``k`` checked, and its witness's work for ``backend``."""
    check_partition(update, k)
    return plan_work(update.shape, witness_plan, partition_data(update, k).flatten(),
                     partial(check_public_inputs, k, expected=public_inputs(update, k)),
                     backend)


def prove_partition(update: SnapUpdate, k: int, key: ProvingKey,
                    backend: ProverBackend | None = None) -> bytes:
    backend = backend or groth16.default_backend()
    proof = prove_work(key, partition_work(update, k, backend), backend)
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
