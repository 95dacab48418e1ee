"""PoSt challenges, as a verifier derives them (``storage-proofs-post/src/fallback/
{vanilla,utils}.rs``): no prover input but the randomness and the sector ids.

* leaf n of a sector: u64 LE of ``sha256(randomness ‖ sector_id u64 LE ‖ challenge_index
  u64 LE)[0..8]`` mod the sector's nodes (``generate_leaf_challenge_inner``);
* ``challenge_index`` = ``sector_index·challenge_count + n`` for api 1.0 and 1.1, ``n`` for
  1.2 (``get_challenge_index``), ``sector_index`` = ``partition_index·sector_count + i``;
* the WinningPoSt sector among N: u64 LE of ``sha256(prover_id ‖ randomness ‖ n u64
  LE)[0..8]`` mod N (``generate_sector_challenge``).
"""

from __future__ import annotations

import hashlib

import numpy as np

from snark.filecoin.errors import FilecoinError
from snark.filecoin.post.registered_proofs import WINNING, PostApiVersion, PostProof


def challenge_index(version: PostApiVersion, sector_index: int, challenge_count: int,
                    n: int) -> int:
    if version == PostApiVersion.V1_2:
        return n
    return sector_index * challenge_count + n


def leaf_challenges(randomness: bytes, sector_id: int, indices, nodes: int) -> np.ndarray:
    """The leaves of challenge indices ``indices`` of one sector, ``int64``."""
    prefix = hashlib.sha256(bytes(randomness) + sector_id.to_bytes(8, "little"))
    out = []
    for index in indices:
        digest = prefix.copy()
        digest.update(int(index).to_bytes(8, "little"))
        out.append(int.from_bytes(digest.digest()[:8], "little") % nodes)
    return np.asarray(out, dtype=np.int64)


def sector_challenges(proof: PostProof, randomness: bytes, sector_id: int,
                      sector_index: int) -> np.ndarray:
    """The ``config_challenges`` leaves a sector's vanilla proof opens (the WinningPoSt
    sector: 66, its index 0), as ``generate_sector_challenges`` derives them."""
    count = proof.config_challenges
    indices = [challenge_index(proof.api_version, sector_index, count, n)
               for n in range(count)]
    return leaf_challenges(randomness, sector_id, indices, proof.nodes)


def circuit_challenges(proof: PostProof, randomness: bytes, sector_ids: list[int],
                       partition_index: int) -> np.ndarray:
    """The leaf of every circuit sector's challenge, ``(sector_count, challenge_count)``
    (``FallbackPoStCompound::generate_public_inputs``; a short partition's last sector
    repeated). WinningPoSt's one sector is its 66 circuit sectors, sector i proving
    challenge index i."""
    if proof.kind == WINNING:
        (sector_id,) = sector_ids
        return sector_challenges(proof, randomness, sector_id, 0).reshape(-1, 1)
    rows = [sector_challenges(proof, randomness, sector_id,
                              partition_index * proof.sector_count + i)
            for i, sector_id in enumerate(sector_ids)]
    rows += [rows[-1]] * (proof.sector_count - len(rows))
    return np.stack(rows)


def winning_sector(prover_id: bytes, randomness: bytes, sector_set_len: int, n: int = 0) -> int:
    """The index of the sector WinningPoSt challenges among ``sector_set_len``."""
    if sector_set_len <= 0:
        raise FilecoinError("sector_set_len: must be positive")
    digest = hashlib.sha256(bytes(prover_id) + bytes(randomness) + n.to_bytes(8, "little"))
    return int.from_bytes(digest.digest()[:8], "little") % sector_set_len
