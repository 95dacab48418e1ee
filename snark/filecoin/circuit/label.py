"""SDR's labelling in the circuit: storage-proofs-porep's ``create_label_circuit``.

A label is SHA-256 over replica_id ‖ layer (u32, big-endian) ‖ node (u64, big-endian) ‖
zeros to 64 bytes ‖ 37 parent labels of 32 bytes, its digest read little-endian into 254
bits. Parent and replica_id bits come from ``to_bits_le`` with ``reverse_bit_numbering``
(storage-proofs' byte order); the layer is a constant word, the node the challenge's
allocated u64 bits.
"""

from __future__ import annotations

from snark.filecoin.circuit.por import pack_digest
from snark.gadgets.blocks import block
from snark.gadgets.boolean import FALSE, Boolean
from snark.gadgets.num import AllocatedNum
from snark.gadgets.sha256 import sha256
from snark.gadgets.uint32 import UInt32

TOTAL_PARENTS = 37


@block
def pack_label(cs, digest: list[Boolean]) -> AllocatedNum:
    return pack_digest(cs, digest)


def create_label(cs, replica_id: list[Boolean], parents: list[list[Boolean]], layer: int,
                 node: list[Boolean]) -> AllocatedNum:
    """``node`` is the challenge's 64 bits, least significant first (storage-proofs' UInt64)."""
    assert len(parents) == TOTAL_PARENTS
    message = list(replica_id) + [FALSE] * max(0, 256 - len(replica_id))
    message += UInt32.constant(layer).into_bits_be() + list(reversed(node))
    message += [FALSE] * (512 - len(message))
    for parent in parents:
        message += list(parent) + [FALSE] * (-len(parent) % 256)
    return pack_label(cs, sha256(cs, message))


def expand_parents(parents: list[list[Boolean]], layer: int) -> list[list[Boolean]]:
    """The 37 parent slots: layer 1 repeats its 6 DRG parents six times and the first once
    more; later layers repeat their 14 (6 DRG, 8 expander) twice and the first 9 again."""
    if layer > 1:
        return parents + parents + parents[:9]
    return parents * 6 + parents[:1]
