"""The values a verifier derives rather than takes from the prover: replica_id, challenges.

* ``replica_id`` = SHA-256(prover_id ‖ sector_id u64 BE ‖ ticket ‖ comm_d ‖ porep_id),
  trimmed (``rust-fil-proofs:storage-proofs-porep/src/stacked/vanilla/params.rs``
  ``generate_replica_id``);
* a miner's ``prover_id`` is its actor id as unsigned LEB128, zero-padded to 32 bytes (the
  payload of its ID address: ``curio:extern/cuzk/cuzk-core/src/prover.rs`` ``make_prover_id``);
* interactive challenge j (counted over all partitions, j = k·K + i) is
  ``int_le(SHA-256(replica_id ‖ seed ‖ u32 LE j)) mod (nodes − 1) + 1``, never node 0
  (``storage-proofs-porep/src/stacked/vanilla/challenges.rs``);
* synthetic PoRep (same file, ``SynthChallenges``, ``synthetic::SynthChallengeGenerator``)
  first draws S = min(nodes, 2^18) synthetic challenges, the i-th being bytes 32·i … 32·i+31
  of a ChaCha20 stream (nonce ``"synth-porep\0"``) keyed by the 32-byte BLAKE2b of
  replica_id ‖ comm_r under the key ``filecoin.io|PoRep|1|Synthetic|1|Generation``, as
  ``int_le mod (nodes − 1) + 1``; challenge j is synthetic challenge number
  ``u32_le(bytes 4·j … 4·j+3 of the stream keyed by BLAKE2b(replica_id ‖ seed) under
  …|Selection) mod S``. The seed thus only selects among challenges fixed at sealing.
"""

from __future__ import annotations

import hashlib

import numpy as np

from snark.filecoin.chacha import chacha20_blocks
from snark.filecoin.domain import DOMAIN_BYTES, sha256_fr
from snark.filecoin.errors import FilecoinError
from snark.filecoin.registered_proofs import RegisteredProof

#: Synthetic PoRep's constants (``challenges.rs`` ``synthetic``).
SYNTH_CHALLENGES = 1 << 18
_SYNTH_NONCE = b"synth-porep\x00"
_SYNTH_GENERATION = b"filecoin.io|PoRep|1|Synthetic|1|Generation"
_SYNTH_SELECTION = b"filecoin.io|PoRep|1|Synthetic|1|Selection"


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


def _synth_key(tag: bytes, first: bytes, second: bytes) -> bytes:
    return hashlib.blake2b(bytes(first) + bytes(second), digest_size=32, key=tag).digest()


def synthetic_challenge_set(replica_id: bytes, comm_r: bytes, nodes: int,
                            indexes: np.ndarray) -> np.ndarray:
    """Synthetic challenges number ``indexes`` (int64, any shape) of a sector."""
    indexes = np.asarray(indexes, dtype=np.int64)
    flat = indexes.reshape(-1)
    blocks, first = np.unique(flat // 2, return_inverse=True)
    stream = chacha20_blocks(_synth_key(_SYNTH_GENERATION, replica_id, comm_r), _SYNTH_NONCE,
                             blocks).reshape(-1, 2, DOMAIN_BYTES)
    values = stream[first, flat % 2]
    out = np.array([int.from_bytes(v.tobytes(), "little") % (nodes - 1) + 1 for v in values],
                   dtype=np.int64)
    return out.reshape(indexes.shape)


def synthetic_indexes(replica_id: bytes, seed: bytes, count: int, synth_count: int) -> np.ndarray:
    """Which synthetic challenge each of the ``count`` PoRep challenges is (int64)."""
    blocks = np.arange(-(-count * 4 // 64))
    stream = chacha20_blocks(_synth_key(_SYNTH_SELECTION, replica_id, seed), _SYNTH_NONCE,
                             blocks).reshape(-1)
    return stream[:count * 4].view("<u4").astype(np.int64) % synth_count


def synthetic_challenges(replica_id: bytes, comm_r: bytes, seed: bytes, nodes: int,
                         partitions: int, per_partition: int,
                         synth_count: int | None = None) -> np.ndarray:
    """Synthetic PoRep's challenged nodes, ``int64 (partitions, per_partition)``;
    ``synth_count`` defaults to min(nodes, 2^18) (rust-fil-proofs' tests use others)."""
    synth_count = synth_count or min(nodes, SYNTH_CHALLENGES)
    picked = synthetic_indexes(replica_id, seed, partitions * per_partition, synth_count)
    return synthetic_challenge_set(replica_id, comm_r, nodes, picked).reshape(
        partitions, per_partition)


def porep_challenges(proof: RegisteredProof, replica_id: bytes, comm_r: bytes,
                     seed: bytes) -> np.ndarray:
    """The challenges a verifier derives for ``proof``: synthetic or interactive."""
    if proof.synthetic:
        return synthetic_challenges(replica_id, comm_r, seed, proof.nodes, proof.partitions,
                                    proof.challenges_per_partition)
    return interactive_challenges(replica_id, seed, proof.nodes, proof.partitions,
                                  proof.challenges_per_partition)
