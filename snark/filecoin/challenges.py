"""The values a verifier derives rather than takes from the prover: replica_id, challenges.

* ``replica_id`` = SHA-256(prover_id ‖ sector_id u64 BE ‖ ticket ‖ comm_d ‖ porep_id),
  trimmed (``rust-fil-proofs:storage-proofs-porep/src/stacked/vanilla/params.rs``
  ``generate_replica_id``);
* a miner's ``prover_id`` is its actor id as unsigned LEB128, zero-padded to 32 bytes (the
  payload of its ID address: ``curio:extern/cuzk/cuzk-core/src/prover.rs`` ``make_prover_id``);
* interactive challenge j (counted over all partitions, j = k·K + i) is
  ``int_le(SHA-256(replica_id ‖ seed ‖ u32 LE j)) mod (nodes − 1) + 1``, never node 0
  (``storage-proofs-porep/src/stacked/vanilla/challenges.rs``).
"""

from __future__ import annotations

import hashlib

import numpy as np

from snark.filecoin.domain import DOMAIN_BYTES, sha256_fr
from snark.filecoin.errors import FilecoinError


def replica_id(prover_id: bytes, sector_id: int, ticket: bytes, comm_d: bytes,
               porep_id: bytes) -> bytes:
    """The replica id of a sector (32 bytes, a field element)."""
    for name, value in (("prover_id", prover_id), ("ticket", ticket), ("comm_d", comm_d),
                        ("porep_id", porep_id)):
        if len(value) != DOMAIN_BYTES:
            raise FilecoinError(f"{name}: expected {DOMAIN_BYTES} bytes, got {len(value)}")
    if not 0 <= sector_id < 1 << 64:
        raise FilecoinError(f"sector_id: must be a u64, got {sector_id}")
    return sha256_fr(prover_id, sector_id.to_bytes(8, "big"), ticket, comm_d, porep_id)


def prover_id_for_miner(miner_id: int) -> bytes:
    """A miner's prover id: its actor id as LEB128, zero-padded to 32 bytes."""
    if not 0 <= miner_id < 1 << 64:
        raise FilecoinError(f"miner_id: must be a u64, got {miner_id}")
    out = bytearray()
    while True:
        byte, miner_id = miner_id & 0x7F, miner_id >> 7
        out.append(byte | (0x80 if miner_id else 0))
        if not miner_id:
            return bytes(out).ljust(DOMAIN_BYTES, b"\0")


def interactive_challenges(replica_id: bytes, seed: bytes, nodes: int, partitions: int,
                           per_partition: int) -> np.ndarray:
    """Challenged node indices, ``int64 (partitions, per_partition)``."""
    prefix = hashlib.sha256(bytes(replica_id) + bytes(seed))
    out = np.empty(partitions * per_partition, dtype=np.int64)
    for j in range(len(out)):
        digest = prefix.copy()
        digest.update(j.to_bytes(4, "little"))
        out[j] = int.from_bytes(digest.digest(), "little") % (nodes - 1) + 1
    return out.reshape(partitions, per_partition)
