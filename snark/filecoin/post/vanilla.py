"""Curio's vanilla PoSt proofs: bincode ``FallbackPoStSectorProof``, decoded strictly.

One element per sector (``rust-fil-proofs:filecoin-proofs/src/types/mod.rs``): sector_id u64
‖ comm_r ‖ ``Proof{sectors: Vec<SectorProof>}`` (one entry) where ``SectorProof`` =
``Vec<MerkleProof>`` inclusion_proofs ‖ comm_c ‖ comm_r_last (``storage-proofs-post/src/
fallback/vanilla.rs``). A ``MerkleProof`` (``storage-proofs-core/src/merkle/proof.rs``) is a
u32 variant ‖ body: 0 Single = root ‖ leaf ‖ path; 1 Sub = base_proof ‖ sub_proof ‖ root ‖
leaf; 2 Top = base ‖ sub ‖ top ‖ root ‖ leaf; a path is u64 count ‖ elements, an element
u64 count ‖ the arity − 1 sibling hashes ‖ index u64. bincode 1: little-endian, lengths u64,
a hash its 32 bytes.

Given the registered proof, every element has one layout, so an element is read as one
numpy record (no allocation sized by a length the input claims) and every field is checked
against it: counts, variants, indices below the arity, hashes below r. The first failure is
one ``FilecoinError`` naming the element and the field.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from snark.filecoin.c1 import MerklePath, PathLevel
from snark.filecoin.domain import DOMAIN_BYTES, canonical
from snark.filecoin.errors import FilecoinError
from snark.filecoin.post.registered_proofs import PostProof

_VARIANTS = {"Single": 0, "Sub": 1, "Top": 2}
#: The InclusionPath fields of each variant, leaf level first.
_PATHS = {"Single": ("path",), "Sub": ("base_proof", "sub_proof"),
          "Top": ("base_proof", "sub_proof", "top_proof")}
_HASH = ("u1", (DOMAIN_BYTES,))


def _path_dtype(arity: int, levels: int) -> np.dtype:
    element = np.dtype([("count", "<u8"), ("hashes", "u1", (arity - 1, DOMAIN_BYTES)),
                        ("index", "<u8")])
    return np.dtype([("count", "<u8"), ("path", element, (levels,))])


def _groups(proof: PostProof) -> list[tuple[str, int, int]]:
    """(field, arity, levels) of each InclusionPath of an inclusion proof."""
    shape = proof.shape
    base = shape.base_levels(proof.nodes)
    arities = [(shape.base_arity, base), (shape.sub_arity, 1), (shape.top_arity, 1)]
    return [(name, a, n) for name, (a, n) in zip(_PATHS[shape.name], arities)]


def record_dtype(proof: PostProof) -> np.dtype:
    """One element's layout for ``proof``."""
    paths = [(name, _path_dtype(a, n)) for name, a, n in _groups(proof)]
    ends = [("root", *_HASH), ("leaf", *_HASH)]
    body = ends + paths if proof.shape.name == "Single" else paths + ends
    inclusion = np.dtype([("variant", "<u4"), *body])
    return np.dtype([("sector_id", "<u8"), ("comm_r", *_HASH), ("sectors", "<u8"),
                     ("proofs", "<u8"), ("inclusion_proofs", inclusion,
                                         (proof.config_challenges,)),
                     ("comm_c", *_HASH), ("comm_r_last", *_HASH)])


@dataclass(frozen=True)
class SectorProofs:
    """The vanilla proofs of N sectors: ``paths`` leads with (N, challenges)."""

    proof: PostProof
    sector_ids: list[int]
    comm_r: np.ndarray        # uint8 (N, 32)
    comm_c: np.ndarray        # uint8 (N, 32)
    comm_r_last: np.ndarray   # uint8 (N, 32)
    paths: MerklePath         # leaf, root (N, C, 32); levels' siblings (N, C, a-1, 32)

    def __len__(self) -> int:
        return len(self.sector_ids)

    def take(self, rows) -> "SectorProofs":
        """The sectors at ``rows`` (a list of indices, repeats allowed)."""
        rows = np.asarray(rows, dtype=np.int64)
        p = self.paths
        paths = MerklePath(p.shape, p.leaf[rows], p.root[rows], tuple(
            PathLevel(level.arity, level.siblings[rows], level.index[rows])
            for level in p.levels))
        return SectorProofs(self.proof, [self.sector_ids[r] for r in rows.tolist()],
                            self.comm_r[rows], self.comm_c[rows], self.comm_r_last[rows],
                            paths)


def fail_first(ok: npt.ArrayLike, describe) -> None:
    """Raise at the first ``False`` of a mask whose leading axis is the sector:
    ``describe(index) -> (field, problem)`` names the field inside that sector's element."""
    bad = np.argwhere(~np.asarray(ok, dtype=bool))
    if len(bad):
        index = tuple(int(i) for i in bad[0])
        field, problem = describe(index)
        raise FilecoinError(f"vanilla_proofs[{index[0]}].{field}: {problem}")


class _Fields:
    """Names the fields of an element's inclusion proofs."""

    fail = staticmethod(fail_first)

    def __init__(self, proof: PostProof) -> None:
        self.shape = proof.shape.name

    def inclusion(self, n: int) -> str:
        return f"vanilla_proof.sectors[0].inclusion_proofs[{n}].data.{self.shape}"


def decode(elements: list[bytes], proof: PostProof) -> SectorProofs:
    """Curio's ``vanilla_proofs``, one bincode element per sector, for ``proof``."""
    dtype = record_dtype(proof)
    if not elements:
        raise FilecoinError("vanilla_proofs: is empty")
    for i, raw in enumerate(elements):
        _check_length(i, bytes(raw), dtype, proof)
    records = np.frombuffer(b"".join(bytes(raw) for raw in elements), dtype=dtype)
    return _read(records, proof)


def _check_length(i: int, raw: bytes, dtype: np.dtype, proof: PostProof) -> None:
    if len(raw) == dtype.itemsize:
        return
    where = f"vanilla_proofs[{i}]"
    head = np.dtype([("sector_id", "<u8"), ("comm_r", *_HASH), ("sectors", "<u8"),
                     ("proofs", "<u8")])
    if len(raw) >= head.itemsize:
        first = np.frombuffer(raw[:head.itemsize], dtype=head)[0]
        if first["sectors"] != 1:
            raise FilecoinError(f"{where}.vanilla_proof.sectors: holds {first['sectors']} "
                                "sector proofs, expected 1")
        if first["proofs"] != proof.config_challenges:
            raise FilecoinError(f"{where}.vanilla_proof.sectors[0].inclusion_proofs: holds "
                                f"{first['proofs']} proofs, {proof.name} has "
                                f"{proof.config_challenges}")
    raise FilecoinError(f"{where}: is {len(raw)} bytes, a {proof.name} sector proof "
                        f"({proof.shape.display} tree, {proof.config_challenges} inclusion "
                        f"proofs) is {dtype.itemsize}")


def _read(records: np.ndarray, proof: PostProof) -> SectorProofs:
    names = _Fields(proof)
    fail = names.fail
    fail(records["sectors"] == 1, lambda i: (
        "vanilla_proof.sectors", f"holds {records['sectors'][i]} sector proofs, expected 1"))
    count = proof.config_challenges
    fail(records["proofs"] == count, lambda i: (
        "vanilla_proof.sectors[0].inclusion_proofs",
        f"holds {records['proofs'][i]} proofs, {proof.name} has {count}"))
    fail(canonical(records["comm_r"]), lambda i: ("comm_r", "is not below the modulus r"))
    inclusion = records["inclusion_proofs"]
    variant = _VARIANTS[proof.shape.name]
    fail(inclusion["variant"] == variant, lambda i: (
        names.inclusion(i[1]).rsplit(".", 1)[0],
        f"is variant {inclusion['variant'][i]}, a {proof.shape.display} tree's proofs are "
        f"{variant} ({proof.shape.name})"))
    levels = [level for field, arity, depth in _groups(proof)
              for level in _read_path(names, inclusion[field], field, arity, depth)]
    for field in ("root", "leaf"):
        fail(canonical(inclusion[field]), lambda i, f=field: (
            f"{names.inclusion(i[1])}.{f}", "is not below the modulus r"))
    for field in ("comm_c", "comm_r_last"):
        fail(canonical(records[field]), lambda i, f=field: (
            f"vanilla_proof.sectors[0].{f}", "is not below the modulus r"))
    paths = MerklePath(proof.shape.name, np.ascontiguousarray(inclusion["leaf"]),
                       np.ascontiguousarray(inclusion["root"]), tuple(levels))
    return SectorProofs(proof, [int(s) for s in records["sector_id"]],
                        np.ascontiguousarray(records["comm_r"]),
                        np.ascontiguousarray(records["comm_c"]),
                        np.ascontiguousarray(records["comm_r_last"]), paths)


def _read_path(names: _Fields, path: np.ndarray, field: str, arity: int,
               depth: int) -> list[PathLevel]:
    """One InclusionPath field of every inclusion proof, checked; its levels."""
    where = lambda i: f"{names.inclusion(i[1])}.{field}.path"  # noqa: E731
    names.fail(path["count"] == depth, lambda i: (
        where(i), f"has {path['count'][i]} elements, expected {depth}"))
    elements = path["path"]
    names.fail(elements["count"] == arity - 1, lambda i: (
        f"{where(i)}[{i[2]}].hashes",
        f"has {elements['count'][i]} hashes, expected {arity - 1} (arity {arity})"))
    names.fail(canonical(elements["hashes"]).all(axis=-1), lambda i: (
        f"{where(i)}[{i[2]}].hashes", "a hash is not below r"))
    names.fail(elements["index"] < arity, lambda i: (
        f"{where(i)}[{i[2]}].index", f"is {elements['index'][i]}, expected below the arity "
                                     f"{arity}"))
    return [PathLevel(arity, np.ascontiguousarray(elements["hashes"][:, :, level]),
                      elements["index"][:, :, level].astype(np.int64))
            for level in range(depth)]


def encode(sectors: SectorProofs) -> list[bytes]:
    """Each sector's bincode element (what Curio sends)."""
    proof = sectors.proof
    records = np.zeros(len(sectors), dtype=record_dtype(proof))
    records["sector_id"] = sectors.sector_ids
    records["comm_r"], records["comm_c"] = sectors.comm_r, sectors.comm_c
    records["comm_r_last"] = sectors.comm_r_last
    records["sectors"], records["proofs"] = 1, proof.config_challenges
    inclusion = records["inclusion_proofs"]
    inclusion["variant"] = _VARIANTS[proof.shape.name]
    inclusion["root"], inclusion["leaf"] = sectors.paths.root, sectors.paths.leaf
    levels = iter(sectors.paths.levels)
    for field, arity, depth in _groups(proof):
        path = inclusion[field]  # views into ``records``: assignments land there
        path["count"] = depth
        for level in range(depth):
            value, element = next(levels), path["path"][:, :, level]
            element["count"] = arity - 1
            element["hashes"], element["index"] = value.siblings, value.index
    return [record.tobytes() for record in records]
