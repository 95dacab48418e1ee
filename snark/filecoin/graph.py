"""The SDR graph: each node's 6 DRG parents and 8 expander parents, vectorised over nodes.

Facts (``rust-fil-proofs:storage-proofs-core/src/{drgraph.rs,crypto/feistel.rs,crypto/mod.rs}``,
``storage-proofs-porep/src/stacked/vanilla/graph.rs``):

* DRG (BucketGraph, degree 6): nodes 0 and 1 have all parents 0. Node v ≥ 2 draws from a
  ChaCha8 stream keyed by ``SHA-256("Filecoin_DRSample" ‖ porep_id)[..28] ‖ v u32 LE``
  (counter 0, stream 0). With m = 5·v and b = ceil(log2 m), each of 5 parents takes two u64
  draws: bucket k = draw₁ mod b + 1, largest = min(m, 2^k), smallest = max(2, largest / 2),
  distance = smallest + draw₂ mod (largest − smallest + 1), parent = (m − distance) / 5, or
  v − 1 if that is v. The sixth parent is v − 1: last under API 1.0, first under 1.1 (the
  five drawn ones then follow it).
* Expander (8 parents): parent i of node v is ``π(8·v + i) / 8`` for the Feistel permutation
  π of [0, 8·nodes): 3 rounds on halves of 2·h bits (4^h the least power of 4 ≥ 8·nodes),
  keys the first three u64 LE of ``SHA-256("Filecoin_Feistel" ‖ porep_id)``, round function
  the first 8 bytes (big-endian) of BLAKE2b-512(right u64 BE ‖ key u64 BE), masked to h bits;
  values ≥ 8·nodes are encrypted again. API 1.0 truncates π to u32 before dividing by 8.
* Parent cache (``stacked/vanilla/cache.rs``): per node its 14 parents as u32 LE (6 DRG, then
  8 expander); the file is ``v28-sdr-parent-<hex SHA-256(hasher name ‖ graph identifier ‖
  Feistel keys u64 LE ‖ node count u32 LE)>.cache`` and its digest is the SHA-256 of its bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from snark.files import atomic_path
from snark.filecoin.chacha import chacha8_block
from snark.filecoin.registered_proofs import (CACHE_VERSION, DRG_PARENTS, EXP_PARENTS, TREE_HASHER,
                                     ApiVersion, RegisteredProof, for_sector)

PARENTS = DRG_PARENTS + EXP_PARENTS
#: Nodes per pass (bounds the memory of the DRG's ChaCha draws, ~40 arrays of this size).
CHUNK = 1 << 16

_U32 = np.uint32
_U64 = np.uint64


# -- DRG parents ------------------------------------------------------------------------------

def drg_seed(porep_id: bytes) -> bytes:
    return hashlib.sha256(b"Filecoin_DRSample" + porep_id).digest()[:28]


def drg_parents(nodes: np.ndarray, porep_id: bytes, api_version: ApiVersion) -> np.ndarray:
    """The 6 DRG parents of each node of ``nodes`` (int64), uint32 ``(n, 6)``."""
    nodes = np.asarray(nodes, dtype=np.int64)
    out = np.zeros((len(nodes), DRG_PARENTS), dtype=_U32)
    drawn = nodes >= 2
    v = nodes[drawn].astype(_U64)
    if not len(v):
        return out
    keys = np.empty((len(v), 8), dtype=_U32)
    keys[:, :7] = np.frombuffer(drg_seed(porep_id), dtype="<u4")
    keys[:, 7] = v.astype(_U32)
    stream = np.concatenate([chacha8_block(keys, 0), chacha8_block(keys, 1)[:, :4]], axis=1)
    draws = stream[:, 0::2].astype(_U64) | (stream[:, 1::2].astype(_U64) << _U64(32))
    m = v * _U64(DRG_PARENTS - 1)
    buckets = np.frexp((m - _U64(1)).astype(np.float64))[1].astype(_U64)  # ceil(log2 m)
    picked = np.empty((len(v), DRG_PARENTS - 1), dtype=_U64)
    for i in range(DRG_PARENTS - 1):
        largest = np.minimum(m, _U64(1) << (draws[:, 2 * i] % buckets + _U64(1)))
        smallest = np.maximum(_U64(2), largest >> _U64(1))
        distance = smallest + draws[:, 2 * i + 1] % (largest - smallest + _U64(1))
        parent = (m - distance) // _U64(DRG_PARENTS - 1)
        picked[:, i] = np.where(parent == v, v - _U64(1), parent)
    rows = np.empty((len(v), DRG_PARENTS), dtype=_U32)
    first_drawn = 0 if api_version == ApiVersion.V1_0 else 1
    rows[:, first_drawn:first_drawn + DRG_PARENTS - 1] = picked
    rows[:, DRG_PARENTS - 1 if api_version == ApiVersion.V1_0 else 0] = v - _U64(1)
    out[drawn] = rows
    return out


# -- expander parents -------------------------------------------------------------------------

def feistel_keys(porep_id: bytes) -> tuple[int, int, int, int]:
    seed = hashlib.sha256(b"Filecoin_Feistel" + porep_id).digest()
    a, b, c, d = (int.from_bytes(seed[8 * i:8 * i + 8], "little") for i in range(4))
    return a, b, c, d


def _feistel_halves(elements: int) -> int:
    """h: the least power of 4, 4^h, that is at least ``elements`` (h ≥ 1)."""
    h, power = 1, 4
    while power < elements:
        power, h = power * 4, h + 1
    return h


def feistel_permute(values: np.ndarray, elements: int, keys: tuple[int, ...]) -> np.ndarray:
    """π(values) for the Feistel permutation of [0, elements) (cycle-walking)."""
    from snark.native import feistel  # the native engine loads arkworks: not for producers' imports

    return feistel.feistel_permute(values, elements, keys, _feistel_halves(elements))


def expander_parents(nodes: np.ndarray, node_count: int, porep_id: bytes,
                     api_version: ApiVersion) -> np.ndarray:
    """The 8 expander parents of each node of ``nodes``, uint32 ``(n, 8)``."""
    nodes = np.asarray(nodes, dtype=np.int64)
    slots = (nodes[:, None] * EXP_PARENTS + np.arange(EXP_PARENTS)).astype(_U64).reshape(-1)
    permuted = feistel_permute(slots, node_count * EXP_PARENTS, feistel_keys(porep_id))
    if api_version == ApiVersion.V1_0:
        permuted &= _U64(0xFFFFFFFF)
    return (permuted // _U64(EXP_PARENTS)).astype(_U32).reshape(len(nodes), EXP_PARENTS)


@dataclass(frozen=True)
class SdrGraph:
    """The graph of one sector size and porep_id (any porep_id: rust-fil-proofs' tests use
    made-up ones)."""

    nodes: int
    porep_id: bytes
    api_version: ApiVersion

    @classmethod
    def of(cls, proof: RegisteredProof) -> "SdrGraph":
        return cls(proof.nodes, proof.porep_id, proof.api_version)

    def parents(self, nodes: np.ndarray | None = None) -> np.ndarray:
        """The 14 parents (6 DRG, 8 expander) of ``nodes`` (default: every node), uint32
        ``(n, 14)``: the parent cache's rows."""
        nodes = np.arange(self.nodes) if nodes is None else np.asarray(nodes, dtype=np.int64)
        out = np.empty((len(nodes), PARENTS), dtype=_U32)
        for start in range(0, len(nodes), CHUNK):
            part = nodes[start:start + CHUNK]
            out[start:start + CHUNK, :DRG_PARENTS] = drg_parents(part, self.porep_id,
                                                                 self.api_version)
            out[start:start + CHUNK, DRG_PARENTS:] = expander_parents(
                part, self.nodes, self.porep_id, self.api_version)
        return out


# -- the parent cache -------------------------------------------------------------------------

def parent_cache_name(proof: RegisteredProof) -> str:
    digest = hashlib.sha256(TREE_HASHER.encode() + proof.graph_identifier.encode())
    for key in feistel_keys(proof.porep_id):
        digest.update(key.to_bytes(8, "little"))
    digest.update(proof.nodes.to_bytes(4, "little"))
    return f"v{CACHE_VERSION}-sdr-parent-{digest.hexdigest()}"


def _cache_chunks(proof: RegisteredProof, on_progress: Callable[[int], None] | None
                  ) -> Iterator[bytes]:
    for start in range(0, proof.nodes, CHUNK):
        nodes = np.arange(start, min(start + CHUNK, proof.nodes))
        yield SdrGraph.of(proof).parents(nodes).astype("<u4").tobytes()
        if on_progress:
            on_progress(start + len(nodes))


def parent_cache(sector_size: int, api_version: ApiVersion | str, *,
                 directory: Path | None = None,
                 on_progress: Callable[[int], None] | None = None) -> tuple[str, str]:
    """``(name, digest)`` of the parent cache of a sector size and API version, as
    ``parent_cache.json`` lists them; with ``directory``, the cache file ``<name>.cache`` is
    written there too (atomically). ``on_progress(nodes_done)`` is told after each chunk."""
    version = api_version if isinstance(api_version, ApiVersion) else \
        ApiVersion.parse(api_version)
    proof = for_sector(sector_size, version)
    name = parent_cache_name(proof)
    digest = hashlib.sha256()
    if directory is None:
        for chunk in _cache_chunks(proof, on_progress):
            digest.update(chunk)
        return name, digest.hexdigest()
    with atomic_path(Path(directory) / f"{name}.cache") as tmp, open(tmp, "wb") as out:
        for chunk in _cache_chunks(proof, on_progress):
            digest.update(chunk)
            out.write(chunk)
    return name, digest.hexdigest()
