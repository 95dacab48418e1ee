"""A SnapDeals ``PartitionProof`` in bincode 1 (default options), read strictly and written.

The layout (``storage-proofs-update/src/vanilla.rs``, ``storage-proofs-core/src/merkle/
proof.rs``): lengths u64 LE, enum variants u32 LE, a domain 32 raw bytes::

    PartitionProof = comm_c ‖ Vec<Domain> apex_leafs ‖ Vec<ChallengeProof>
    ChallengeProof = proof_r_old ‖ proof_d_new ‖ proof_r_new
    MerkleProof    = u32 variant ‖ 0 Single: root ‖ leaf ‖ path
                                   1 Sub:    base_path ‖ sub_path ‖ root ‖ leaf
                                   2 Top:    base_path ‖ sub_path ‖ top_path ‖ root ‖ leaf
    InclusionPath  = Vec<PathElement>;  PathElement = Vec<Domain> siblings ‖ u64 index

Every length is the shape's, so a partition of a shape has one size and one layout: the
offsets of its fixed fields (lengths, variants), domains and indices, found once per shape by
walking the structure (``_Layout``). A proof is read through that layout with numpy (its
fixed fields compared, every domain checked to be a reduced field element, every index below
its arity: about a millisecond for a 32 GiB partition's 0.56 MB). Where anything differs,
the same walk reads the bytes one field at a time (``_Reader``) for the first failure, one
line naming the field.
"""

from __future__ import annotations

import struct
from collections import defaultdict
from functools import lru_cache

import numpy as np

from snark.filecoin.c1 import MerklePath, PathLevel
from snark.filecoin.domain import DOMAIN_BYTES, canonical
from snark.filecoin.errors import FilecoinError
from snark.filecoin.snap.proofs import PartitionProof
from snark.filecoin.snap.shape import SnapShape

_VARIANTS = {"Single": 0, "Sub": 1, "Top": 2}
_NAMES = {v: k for k, v in _VARIANTS.items()}
_OPENINGS = (("r_old", "proof_r_old"), ("d_new", "proof_d_new"), ("r_new", "proof_r_new"))


class _Reader:
    """Reads the bytes field by field and raises at the first bad one."""

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

    def fixed(self, fmt: str, expected: int, field: str, what: str) -> None:
        got = struct.unpack(fmt, self.take(struct.calcsize(fmt), field))[0]
        if got != expected:
            shown = _NAMES.get(got, got) if fmt == "<I" else got
            raise self.fail(field, what.format(got=shown, expected=expected))

    def domains(self, count: int, field: str, key: str) -> None:
        values = np.frombuffer(self.take(count * DOMAIN_BYTES, field), dtype=np.uint8)
        bad = np.flatnonzero(~canonical(values.reshape(count, DOMAIN_BYTES)))
        if bad.size:
            suffix = f"[{bad[0]}]" if count > 1 else ""
            raise self.fail(f"{field}{suffix}", "is not a reduced field element (>= r)")

    def index(self, arity: int, field: str, key: str) -> None:
        index = struct.unpack("<Q", self.take(8, field))[0]
        if index >= arity:
            raise self.fail(field, f"{index} is not below the arity {arity}")

    def end(self) -> None:
        if self.at != len(self.raw):
            raise FilecoinError(f"{self.where}: {len(self.raw) - self.at} bytes left after "
                                "the proof")


class _Layout(_Reader):
    """Walks the structure without bytes, keeping where each field is."""

    def __init__(self) -> None:
        self.at = 0
        self.fixed_at: list[int] = []
        self.fixed_bytes: list[bytes] = []
        self.domain_at: dict[str, list[int]] = defaultdict(list)
        self.index_at: dict[str, list[int]] = defaultdict(list)
        self.arity: dict[str, int] = {}

    def fixed(self, fmt: str, expected: int, field: str, what: str) -> None:
        packed = struct.pack(fmt, expected)
        self.fixed_at += range(self.at, self.at + len(packed))
        self.fixed_bytes.append(packed)
        self.at += len(packed)

    def domains(self, count: int, field: str, key: str) -> None:
        self.domain_at[key] += range(self.at, self.at + count * DOMAIN_BYTES, DOMAIN_BYTES)
        self.at += count * DOMAIN_BYTES

    def index(self, arity: int, field: str, key: str) -> None:
        self.index_at[key].append(self.at)
        self.arity[key] = arity
        self.at += 8

    def end(self) -> None:
        self.size = self.at


def _length(reader: _Reader, field: str, expected: int) -> None:
    reader.fixed("<Q", expected, field, "has {got} entries, expected {expected}")


def _path(reader: _Reader, arities: list[int], field: str, key: str, first: int) -> None:
    _length(reader, field, len(arities))
    for i, arity in enumerate(arities):
        element = f"{field}[{i}]"
        _length(reader, f"{element}.siblings", arity - 1)
        reader.domains(arity - 1, f"{element}.siblings", f"{key}.{first + i}.siblings")
        reader.index(arity, f"{element}.index", f"{key}.{first + i}.index")


def _merkle(reader: _Reader, variant: str, arities: list[int], field: str, key: str) -> None:
    reader.fixed("<I", _VARIANTS[variant], field,
                 "is variant {got}, expected " + variant)

    def ends() -> None:
        reader.domains(1, f"{field}.root", f"{key}.root")
        reader.domains(1, f"{field}.leaf", f"{key}.leaf")

    if variant == "Single":
        ends()
        _path(reader, arities, f"{field}.path", key, 0)
        return
    base = len(arities) - (1 if variant == "Sub" else 2)
    _path(reader, arities[:base], f"{field}.base_proof", key, 0)
    _path(reader, arities[base:base + 1], f"{field}.sub_proof", key, base)
    if variant == "Top":
        _path(reader, arities[-1:], f"{field}.top_proof", key, base + 1)
    ends()


def _walk(reader: _Reader, shape: SnapShape) -> None:
    r_arities, d_arities = shape.tree_arities(), [2] * shape.challenge_bits
    reader.domains(1, "comm_c", "comm_c")
    _length(reader, "apex_leafs", shape.apex_leaves)
    reader.domains(shape.apex_leaves, "apex_leafs", "apex")
    _length(reader, "challenge_proofs", shape.challenges)
    for i in range(shape.challenges):
        for key, name in _OPENINGS:
            variant, arities = ((shape.tree.name, r_arities) if key != "d_new"
                                else ("Single", d_arities))
            _merkle(reader, variant, arities, f"challenge_proofs[{i}].{name}", key)
    reader.end()


@lru_cache(maxsize=8)
def _layout(shape: SnapShape) -> dict:
    walk = _Layout()
    _walk(walk, shape)
    return {"size": walk.size, "fixed_at": np.asarray(walk.fixed_at, dtype=np.int64),
            "fixed": np.frombuffer(b"".join(walk.fixed_bytes), dtype=np.uint8),
            "domains": {k: np.asarray(v, dtype=np.int64) for k, v in walk.domain_at.items()},
            "indices": {k: np.asarray(v, dtype=np.int64) for k, v in walk.index_at.items()},
            "arity": dict(walk.arity)}


def _read(buf: np.ndarray, layout: dict, shape: SnapShape) -> PartitionProof | None:
    """The proof through the shape's layout, or None where anything is out of place."""
    if len(buf) != layout["size"] or not (buf[layout["fixed_at"]] == layout["fixed"]).all():
        return None
    lanes = np.arange(DOMAIN_BYTES)
    domains = {k: buf[at[:, None] + lanes] for k, at in layout["domains"].items()}
    raw_indices = {k: buf[at[:, None] + np.arange(8)].copy().view("<u8")[:, 0]
                   for k, at in layout["indices"].items()}
    if not all(canonical(v).all() for v in domains.values()):
        return None
    # compared as the unsigned 64-bit values they are (as int64 one of 2^63 or more would
    # be negative, and below any arity)
    if not all((v < layout["arity"][k]).all() for k, v in raw_indices.items()):
        return None
    indices = {k: v.astype(np.int64) for k, v in raw_indices.items()}
    k = shape.challenges

    def opening(key: str, variant: str, arities: list[int]) -> MerklePath:
        levels = tuple(PathLevel(a, domains[f"{key}.{i}.siblings"].reshape(k, a - 1,
                                                                           DOMAIN_BYTES),
                                 indices[f"{key}.{i}.index"]) for i, a in enumerate(arities))
        return MerklePath(variant, domains[f"{key}.leaf"], domains[f"{key}.root"], levels)

    r_arities = shape.tree_arities()
    return PartitionProof(domains["comm_c"][0], domains["apex"],
                          opening("r_old", shape.tree.name, r_arities),
                          opening("d_new", "Single", [2] * shape.challenge_bits),
                          opening("r_new", shape.tree.name, r_arities))


def decode_partition_proof(raw: bytes, shape: SnapShape, where: str = "vanilla_proofs[0]"
                           ) -> PartitionProof:
    """One partition's ``PartitionProof``; ``FilecoinError`` names the first bad field."""
    proof = _read(np.frombuffer(bytes(raw), dtype=np.uint8), _layout(shape), shape)
    if proof is not None:
        return proof
    _walk(_Reader(bytes(raw), where), shape)
    raise AssertionError("a proof the layout refused passed the field-by-field reading")


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
