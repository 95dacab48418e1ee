"""A SnapDeals ``PartitionProof`` in bincode 1 (default options), read strictly and written.

The layout (``storage-proofs-update/src/vanilla.rs``, ``storage-proofs-core/src/merkle/
proof.rs``): lengths u64 LE, enum variants u32 LE, a domain 32 raw bytes::

    PartitionProof = comm_c ‖ Vec<Domain> apex_leafs ‖ Vec<ChallengeProof>
    ChallengeProof = proof_r_old ‖ proof_d_new ‖ proof_r_new
    MerkleProof    = u32 variant ‖ 0 Single: root ‖ leaf ‖ path
                                   1 Sub:    base_path ‖ sub_path ‖ root ‖ leaf
                                   2 Top:    base_path ‖ sub_path ‖ top_path ‖ root ‖ leaf
    InclusionPath  = Vec<PathElement>;  PathElement = Vec<Domain> siblings ‖ u64 index

Every length is the shape's (a wrong one is refused before anything is allocated for it),
every index below its level's arity, every domain a reduced field element, nothing left
over; the first failure is one line naming the field.
"""

from __future__ import annotations

import struct

import numpy as np

from snark.filecoin.c1 import MerklePath, PathLevel
from snark.filecoin.domain import DOMAIN_BYTES, canonical
from snark.filecoin.errors import FilecoinError
from snark.filecoin.snap.proofs import PartitionProof
from snark.filecoin.snap.shape import SnapShape

_VARIANTS = {"Single": 0, "Sub": 1, "Top": 2}


class _Reader:
    def __init__(self, raw: bytes, where: str) -> None:
        self.raw = memoryview(raw)
        self.at = 0
        self.where = where

    def fail(self, field: str, message: str) -> FilecoinError:
        return FilecoinError(f"{self.where}.{field}: {message}")

    def take(self, n: int, field: str) -> memoryview:
        if self.at + n > len(self.raw):
            raise self.fail(field, f"ends at byte {len(self.raw)}, {n} bytes needed at "
                            f"{self.at}")
        out = self.raw[self.at:self.at + n]
        self.at += n
        return out

    def u64(self, field: str) -> int:
        return struct.unpack("<Q", self.take(8, field))[0]

    def u32(self, field: str) -> int:
        return struct.unpack("<I", self.take(4, field))[0]

    def length(self, field: str, expected: int) -> None:
        got = self.u64(f"{field} (length)")
        if got != expected:
            raise self.fail(field, f"has {got} entries, expected {expected}")

    def domains(self, count: int, field: str) -> np.ndarray:
        values = np.frombuffer(self.take(count * DOMAIN_BYTES, field), dtype=np.uint8)
        values = values.reshape(count, DOMAIN_BYTES)
        bad = np.flatnonzero(~canonical(values))
        if bad.size:
            suffix = f"[{bad[0]}]" if count > 1 else ""
            raise self.fail(f"{field}{suffix}", "is not a reduced field element (>= r)")
        return values

    def path(self, arities: list[int], field: str) -> list[tuple[np.ndarray, int]]:
        self.length(field, len(arities))
        return [self.element(arity, f"{field}[{i}]") for i, arity in enumerate(arities)]

    def element(self, arity: int, field: str) -> tuple[np.ndarray, int]:
        self.length(f"{field}.siblings", arity - 1)
        siblings = self.domains(arity - 1, f"{field}.siblings")
        index = self.u64(f"{field}.index")
        if index >= arity:
            raise self.fail(f"{field}.index", f"{index} is not below the arity {arity}")
        return siblings, index

    def merkle(self, variant: str, arities: list[int], field: str):
        """(root, leaf, levels) of one ``MerkleProof`` of the expected variant."""
        tag = self.u32(f"{field} (variant)")
        if tag != _VARIANTS[variant]:
            names = {v: k for k, v in _VARIANTS.items()}
            raise self.fail(field, f"is variant {names.get(tag, tag)}, expected {variant}")
        extra = {"Single": 0, "Sub": 1, "Top": 2}[variant]
        base = arities[:len(arities) - extra]
        if variant == "Single":
            root = self.domains(1, f"{field}.root")[0]
            leaf = self.domains(1, f"{field}.leaf")[0]
            return root, leaf, self.path(base, f"{field}.path")
        levels = self.path(base, f"{field}.base_proof")
        levels += self.path(arities[len(base):len(base) + 1], f"{field}.sub_proof")
        if variant == "Top":
            levels += self.path(arities[-1:], f"{field}.top_proof")
        root = self.domains(1, f"{field}.root")[0]
        leaf = self.domains(1, f"{field}.leaf")[0]
        return root, leaf, levels


def _stack(shape: str, arities: list[int], parts: list) -> MerklePath:
    levels = tuple(PathLevel(a, np.stack([p[2][i][0] for p in parts]),
                             np.asarray([p[2][i][1] for p in parts], dtype=np.int64))
                   for i, a in enumerate(arities))
    return MerklePath(shape, np.stack([p[1] for p in parts]), np.stack([p[0] for p in parts]),
                      levels)


def decode_partition_proof(raw: bytes, shape: SnapShape, where: str = "vanilla_proofs[0]"
                           ) -> PartitionProof:
    """One partition's ``PartitionProof``; ``FilecoinError`` names the first bad field."""
    reader = _Reader(bytes(raw), where)
    r_arities, d_arities = shape.tree_arities(), [2] * shape.challenge_bits
    comm_c = reader.domains(1, "comm_c")[0]
    reader.length("apex_leafs", shape.apex_leaves)
    apex = reader.domains(shape.apex_leaves, "apex_leafs")
    reader.length("challenge_proofs", shape.challenges)
    r_old, d_new, r_new = [], [], []
    for i in range(shape.challenges):
        field = f"challenge_proofs[{i}]"
        r_old.append(reader.merkle(shape.tree.name, r_arities, f"{field}.proof_r_old"))
        d_new.append(reader.merkle("Single", d_arities, f"{field}.proof_d_new"))
        r_new.append(reader.merkle(shape.tree.name, r_arities, f"{field}.proof_r_new"))
    if reader.at != len(reader.raw):
        raise FilecoinError(f"{where}: {len(reader.raw) - reader.at} bytes left after the "
                            "proof")
    return PartitionProof(comm_c, apex, _stack(shape.tree.name, r_arities, r_old),
                          _stack("Single", d_arities, d_new),
                          _stack(shape.tree.name, r_arities, r_new))


def _path_bytes(path: MerklePath, i: int, levels: range) -> bytes:
    out = [struct.pack("<Q", len(levels))]
    for lv in levels:
        level = path.levels[lv]
        out += [struct.pack("<Q", level.arity - 1), level.siblings[i].tobytes(),
                struct.pack("<Q", int(level.index[i]))]
    return b"".join(out)


def _merkle_bytes(path: MerklePath, i: int) -> bytes:
    n = len(path.levels)
    head = struct.pack("<I", _VARIANTS[path.shape])
    ends = path.root[i].tobytes() + path.leaf[i].tobytes()
    if path.shape == "Single":
        return head + ends + _path_bytes(path, i, range(n))
    extra = 1 if path.shape == "Sub" else 2
    tails = b"".join(_path_bytes(path, i, range(lv, lv + 1)) for lv in range(n - extra, n))
    return head + _path_bytes(path, i, range(n - extra)) + tails + ends


def encode_partition_proof(proof: PartitionProof) -> bytes:
    out = [proof.comm_c.tobytes(), struct.pack("<Q", len(proof.apex_leaves)),
           proof.apex_leaves.tobytes(), struct.pack("<Q", proof.challenges)]
    for i in range(proof.challenges):
        out += [_merkle_bytes(proof.r_old, i), _merkle_bytes(proof.d_new, i),
                _merkle_bytes(proof.r_new, i)]
    return b"".join(out)
