"""What the api checks of a partition's vanilla proofs before proving, and the partition as
the circuit takes it.

``check_partition`` is ``FallbackPoSt::verify`` as ``single_partition_vanilla_proofs`` runs it
(``rust-fil-proofs:storage-proofs-post/src/fallback/vanilla.rs``, ``filecoin-proofs/src/api/
post_util.rs``), over every sector and inclusion proof, vectorised:

1. comm_r = Poseidon2(comm_c, comm_r_last), comm_r_last the first inclusion proof's root;
2. every inclusion proof has that root (and the proof's own comm_r_last field names it: the
   circuit takes it as the root);
3. inclusion proof n opens the leaf the randomness derives (``challenges``; WinningPoSt: all
   66 of its one sector), and hashes to its root.

``circuit_sectors`` is the partition as the circuit proves it: a short WindowPoSt partition
padded with its last sector (``single_partition_vanilla_proofs``), WinningPoSt's 66 inclusion
proofs unrolled into 66 circuit sectors of one challenge each.
"""

from __future__ import annotations

import numpy as np

from snark.filecoin.c1 import MerklePath, PathLevel
from snark.filecoin.domain import DOMAIN_BYTES, canonical, from_limbs, to_limbs
from snark.filecoin.errors import FilecoinError
from snark.filecoin.post.challenges import sector_challenges
from snark.filecoin.post.registered_proofs import WINNING, PostProof
from snark.filecoin.post.vanilla import SectorProofs, fail_first
from snark.filecoin.trees import path_roots, poseidon_nodes
from snark.poseidon.neptune import poseidon_many


def comm_r_of(comm_c: np.ndarray, comm_r_last: np.ndarray) -> np.ndarray:
    """Poseidon2(comm_c, comm_r_last) of each row, ``(N, 32)``."""
    pairs = to_limbs(np.stack([comm_c, comm_r_last], axis=1))
    return from_limbs(poseidon_many(pairs, 2)).reshape(-1, DOMAIN_BYTES)


def check_randomness(randomness: bytes) -> bytes:
    randomness = bytes(randomness)
    if len(randomness) != DOMAIN_BYTES:
        raise FilecoinError(f"randomness: expected {DOMAIN_BYTES} bytes, got {len(randomness)}")
    if not canonical(np.frombuffer(randomness, np.uint8))[()]:
        raise FilecoinError("randomness: is not below the modulus r (Curio masks its top "
                            "byte with 0x3f)")
    return randomness


def check_partition(sectors: SectorProofs, randomness: bytes, partition_index: int) -> None:
    """Every check above; ``FilecoinError`` naming the first failing field."""
    proof = sectors.proof
    randomness = check_randomness(randomness)
    check_count(proof, len(sectors), partition_index)
    seen: dict[int, int] = {}
    for i, sector_id in enumerate(sectors.sector_ids):
        if sector_id in seen:
            raise FilecoinError(f"vanilla_proofs[{i}].sector_id: sector {sector_id} is "
                                f"vanilla_proofs[{seen[sector_id]}]'s too")
        seen[sector_id] = i
    paths = sectors.paths
    comm_r_last = paths.root[:, 0]
    where = "vanilla_proof.sectors[0].inclusion_proofs"
    fail_first((comm_r_of(sectors.comm_c, comm_r_last) == sectors.comm_r).all(axis=-1), lambda i: (
        "comm_r", "is not Poseidon2(comm_c, comm_r_last) of its proof (wrong comm_r, or "
                  "comm_c and the paths of another sector)"))
    fail_first((paths.root == comm_r_last[:, None]).all(axis=-1), lambda i: (
        f"{where}[{i[1]}].root", "differs from inclusion_proofs[0]'s (comm_r_last)"))
    fail_first((sectors.comm_r_last == comm_r_last).all(axis=-1), lambda i: (
        "vanilla_proof.sectors[0].comm_r_last", "is not the root of its inclusion proofs"))
    expected = np.stack([
        sector_challenges(proof, randomness, sector_id,
                          partition_index * proof.sector_count + i)
        for i, sector_id in enumerate(sectors.sector_ids)])
    opened = paths.node_index()
    fail_first(opened == expected, lambda i: (
        f"{where}[{i[1]}]", f"opens leaf {opened[i]}, the randomness derives {expected[i]} "
                            f"for sector {sectors.sector_ids[i[0]]} (wrong randomness, "
                            f"sector_id, partition_index or registered proof)"))
    roots = path_roots(paths, poseidon_nodes)
    fail_first((roots == paths.root).all(axis=-1), lambda i: (
        f"{where}[{i[1]}]", "does not hash to its root (a sibling or the leaf is wrong)"))


def check_count(proof: PostProof, count: int, partition_index: int) -> None:
    """WinningPoSt: one sector at partition 0; WindowPoSt: at most a partition's sectors."""
    if proof.kind == WINNING:
        if count != 1:
            raise FilecoinError(f"vanilla_proofs: WinningPoSt proves one sector, got {count}")
        if partition_index != 0:
            raise FilecoinError(f"partition_index: WinningPoSt has one partition, got "
                                f"{partition_index}")
    elif count > proof.sector_count:
        raise FilecoinError(f"vanilla_proofs: {count} sectors, a {proof.name} partition holds "
                            f"at most {proof.sector_count}")
    if not 0 <= partition_index < 1 << 32:
        raise FilecoinError(f"partition_index: {partition_index} is out of range")


def circuit_sectors(sectors: SectorProofs) -> SectorProofs:
    """The partition's ``sector_count`` circuit sectors of ``challenge_count`` proofs each."""
    proof = sectors.proof
    if proof.kind != WINNING:
        rows = list(range(len(sectors)))
        return sectors.take(rows + rows[-1:] * (proof.sector_count - len(rows)))
    one = sectors.take([0] * proof.sector_count)
    p = one.paths  # (66, 66, …): row s keeps its s-th inclusion proof

    def diagonal(array: np.ndarray) -> np.ndarray:
        picked = array[np.arange(proof.sector_count), np.arange(proof.sector_count)]
        return np.ascontiguousarray(picked[:, None])

    paths = MerklePath(p.shape, diagonal(p.leaf), diagonal(p.root), tuple(
        PathLevel(level.arity, diagonal(level.siblings), diagonal(level.index))
        for level in p.levels))
    return SectorProofs(proof, one.sector_ids, one.comm_r, one.comm_c, one.comm_r_last, paths)
