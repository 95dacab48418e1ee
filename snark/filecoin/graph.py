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
from snark.filecoin.chacha import COLUMNS_THEN_DIAGONALS, chacha8_block
from snark.filecoin.registered_proofs import (CACHE_VERSION, DRG_PARENTS, EXP_PARENTS, TREE_HASHER,
                                     ApiVersion, RegisteredProof, for_sector)

PARENTS = DRG_PARENTS + EXP_PARENTS
#: Nodes per vector pass (bounds memory; the Feistel network keeps ~30 arrays of this size).
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

_IV = np.array([0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
                0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179],
               dtype=_U64)
#: BLAKE2b's parameter block word 0: 64-byte digest, no key, fanout 1, depth 1.
_PARAMETERS = _U64(0x01010040)
_BLAKE_SIGMA = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
    (14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3),
    (11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4),
    (7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8),
    (9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13),
    (2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9),
    (12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11),
    (13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10),
    (6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5),
    (10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0),
)


#: Values per BLAKE2b vector pass: its 16 state words (and a scratch word) stay in cache.
_BLAKE_CHUNK = 1 << 15


def _rotr64(x: np.ndarray, r: int, scratch: np.ndarray) -> None:
    """x = x rotated right by r bits, in place."""
    np.right_shift(x, _U64(r), out=scratch)
    np.left_shift(x, _U64(64 - r), out=x)
    np.bitwise_or(x, scratch, out=x)


def _mix(v: list, a: int, b: int, c: int, d: int, x, y, scratch: np.ndarray) -> None:
    """BLAKE2b's G on state words a, b, c, d with message words x, y (None for zero)."""
    for word, r1, r2 in ((x, 32, 24), (y, 16, 63)):
        np.add(v[a], v[b], out=v[a])
        if word is not None:
            np.add(v[a], word, out=v[a])
        np.bitwise_xor(v[d], v[a], out=v[d])
        _rotr64(v[d], r1, scratch)
        np.add(v[c], v[d], out=v[c])
        np.bitwise_xor(v[b], v[c], out=v[b])
        _rotr64(v[b], r2, scratch)


def blake2b_16(first: np.ndarray, second: int) -> np.ndarray:
    """The first 8 bytes, read big-endian, of BLAKE2b-512 of the 16-byte message
    ``first`` u64 BE ‖ ``second`` u64 BE, for a vector of ``first`` values (uint64)."""
    out = np.empty(len(first), dtype=_U64)
    key = _U64(int.from_bytes(second.to_bytes(8, "big"), "little"))
    for start in range(0, len(first), _BLAKE_CHUNK):
        part = np.asarray(first[start:start + _BLAKE_CHUNK], dtype=_U64)
        message = (part.byteswap(), key) + (None,) * 14
        n = len(part)
        v = [np.full(n, h, dtype=_U64) for h in (*_IV, *_IV)]
        v[0] ^= _PARAMETERS            # v[0..8] is h: the IV with the parameter block in it
        v[12] ^= _U64(16)              # bytes hashed
        v[14] ^= _U64(0xFFFFFFFFFFFFFFFF)  # the last block
        scratch = np.empty(n, dtype=_U64)
        for r in range(12):
            sigma = _BLAKE_SIGMA[r % 10]
            for g, (a, b, c, d) in enumerate(COLUMNS_THEN_DIAGONALS):
                _mix(v, a, b, c, d, message[sigma[2 * g]], message[sigma[2 * g + 1]], scratch)
        out[start:start + n] = (_IV[0] ^ _PARAMETERS ^ v[0] ^ v[8]).byteswap()
    return out


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
    half = _feistel_halves(elements)
    mask = _U64((1 << half) - 1)
    out = np.asarray(values, dtype=_U64).copy()
    todo = np.arange(len(out))
    while len(todo):
        x = out[todo]
        left, right = x >> _U64(half), x & mask
        for key in keys[:3]:
            left, right = right, left ^ (blake2b_16(right, key) & mask)
        out[todo] = (left << _U64(half)) | right
        todo = todo[out[todo] >= _U64(elements)]
    return out


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
