"""SDR labelling and encoding: the layers of labels and the replica.

Facts (``rust-fil-proofs:storage-proofs-porep/src/stacked/vanilla/{create_label/single.rs,
graph.rs,labeling_proof.rs,proof.rs}``, ``src/encode.rs``):

* the label of node v in layer ℓ (1-based) is SHA-256(replica_id ‖ ℓ u32 BE ‖ v u64 BE ‖ 20
  zero bytes ‖ 37 parent labels), trimmed; node 0 hashes the first 64 bytes alone;
* the parent labels: in layer 1 the 6 DRG parents' labels of the same layer, repeated to 37
  (6 × 6, then the first); in later layers the 6 DRG parents' labels of the same layer and the
  8 expander parents' labels of the layer below, those 14 repeated to 37 (14, 14, the first 9);
* the replica node is the last layer's label (the key) plus the data node, in Fr.

Labels are sequential (a node's DRG parents precede it), so they are computed one node at a
time with hashlib; everything else is vectorised.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from snark.fields import FR_MODULUS, fr_to_limbs, limbs_to_object
from snark.filecoin.domain import DOMAIN_BYTES, TRIM_MASK, from_limbs, to_limbs
from snark.filecoin.graph import SdrGraph
from snark.filecoin.registered_proofs import DRG_PARENTS, LABEL_PARENTS, ApiVersion

_PAD = bytes(20)


def label_head(replica_id: bytes, layer: int, node: int) -> bytes:
    """The 64 bytes hashed before a label's parents."""
    return replica_id + layer.to_bytes(4, "big") + node.to_bytes(8, "big") + _PAD


def repeated_parents(labels: bytes) -> bytes:
    """The 6 (layer 1) or 14 parent labels, concatenated, repeated to the 37 hashed."""
    return (labels * (LABEL_PARENTS // (len(labels) // DOMAIN_BYTES) + 1))[
        :LABEL_PARENTS * DOMAIN_BYTES]


def label(replica_id: bytes, layer: int, node: int, parents: bytes) -> bytes:
    """One label from its 37 parent labels (``parents``: 37 × 32 bytes)."""
    digest = bytearray(hashlib.sha256(label_head(replica_id, layer, node) + parents).digest())
    digest[-1] &= TRIM_MASK
    return bytes(digest)


def layer_labels(graph: SdrGraph, replica_id: bytes, layers: int,
                 parents: np.ndarray | None = None,
                 on_layer: Callable[[int], None] | None = None) -> np.ndarray:
    """All labels, ``uint8 (layers, nodes, 32)``; ``parents`` is the graph's parent cache
    (computed when not given); ``on_layer(ℓ)`` is told as layer ℓ starts."""
    if len(replica_id) != DOMAIN_BYTES:
        raise ValueError(f"replica_id must be {DOMAIN_BYTES} bytes, got {len(replica_id)}")
    parents = graph.parents() if parents is None else parents
    rows = parents.tolist()
    out = np.empty((layers, graph.nodes, DOMAIN_BYTES), dtype=np.uint8)
    below = b""
    for layer in range(1, layers + 1):
        if on_layer:
            on_layer(layer)
        current = bytearray(graph.nodes * DOMAIN_BYTES)
        view = memoryview(current)
        base = view if layer == 1 else None
        for v in range(graph.nodes):
            head = label_head(replica_id, layer, v)
            if v == 0:
                digest = bytearray(hashlib.sha256(head).digest())
            else:
                row = rows[v]
                data = b"".join([view[p * 32:p * 32 + 32] for p in row[:DRG_PARENTS]])
                if base is None:
                    data += b"".join([below[p * 32:p * 32 + 32] for p in row[DRG_PARENTS:]])
                digest = bytearray(hashlib.sha256(head + repeated_parents(data)).digest())
            digest[-1] &= TRIM_MASK
            current[v * 32:v * 32 + 32] = digest
        out[layer - 1] = np.frombuffer(current, dtype=np.uint8).reshape(-1, DOMAIN_BYTES)
        below = bytes(current)
    return out


def sdr_last_layer(nodes: int, layers: int, replica_id: bytes, porep_id: bytes,
                   api_version: ApiVersion | str) -> list[bytes]:
    """The last layer's labels, 32-byte little-endian each (``api_version``: an
    ``ApiVersion`` or its text, "1.0.0" / "1.1")."""
    version = api_version if isinstance(api_version, ApiVersion) else \
        ApiVersion.parse(api_version)
    labels = layer_labels(SdrGraph(nodes, porep_id, version), replica_id, layers)
    return [row.tobytes() for row in labels[-1]]


def encode(keys: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Replica nodes key + data in Fr, for ``uint8 (..., 32)`` keys and data."""
    total = (limbs_to_object(to_limbs(keys).reshape(-1, 4))
             + limbs_to_object(to_limbs(data).reshape(-1, 4))) % FR_MODULUS
    return from_limbs(fr_to_limbs(total)).reshape(keys.shape)
