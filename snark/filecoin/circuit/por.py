"""storage-proofs' PoR circuit: a leaf's path to a root, and the path's index as an input.

``PoRCircuit::synthesize`` with a private root, as StackedCircuit's ``enforce_inclusion``
calls it: per level (base levels, then the sub- and top-tree level where the tree has them)
the index bits of that level, the siblings, the insertion and the hash; then all index bits
packed into one public input (the challenged node's index) and ``computed root · 1 = root``.

Each level is a block with its private data (``index``: the node's position among its
siblings; ``siblings``: their values). tree D's levels hash with SHA-256 (its
``hash_multi_leaf_circuit``: each node's 255 bits, a zero bit, bytes reversed, SHA-256, the
digest's 254 low bits packed), trees C and R_last with neptune's Poseidon.
"""

from __future__ import annotations

import numpy as np

from snark.filecoin.circuit.insertion import insert
from snark.filecoin.circuit.poseidon import poseidon_hash
from snark.poseidon.neptune import PoseidonConstants
from snark.gadgets.blocks import block
from snark.gadgets.boolean import FALSE, Boolean, alloc_bit, is_bit
from snark.gadgets.num import (CAPACITY, AllocatedNum, alloc_num, equal, pack_bits,
                               pack_into_inputs, to_bits_le)
from snark.gadgets.sha256 import sha256


def reverse_bit_numbering(bits: list[Boolean]) -> list[Boolean]:
    """storage-proofs' ``reverse_bit_numbering``: pad to whole bytes with zero bits, then
    reverse the bits inside every byte."""
    padded = list(bits) + [FALSE] * (-len(bits) % 8)
    return [bit for i in range(0, len(padded), 8) for bit in reversed(padded[i:i + 8])]


def sha256_nodes(cs, nodes: list[AllocatedNum]) -> AllocatedNum:
    """filecoin-hashers' SHA-256 ``hash_multi_leaf_circuit`` of field elements."""
    bits = [bit for node in nodes for bit in reverse_bit_numbering(to_bits_le(cs, node))]
    return pack_digest(cs, sha256(cs, bits))


def pack_digest(cs, digest: list[Boolean]) -> AllocatedNum:
    """A SHA-256 digest as Filecoin reads it into Fr: bytes little-endian, 254 bits."""
    return pack_bits(cs, reverse_bit_numbering(digest)[:CAPACITY])


def _level(cs, current: AllocatedNum, data: dict, arity: int):
    bit_count = arity.bit_length() - 1
    index = np.asarray(data["index"]).astype(np.int64)
    bits = [is_bit(alloc_bit(cs, (index >> i) & 1, ("data", "index", 0, i)))
            for i in range(bit_count)]
    siblings = [alloc_num(cs, data["siblings"][..., i], ("data", "siblings", i, None))
                for i in range(arity - 1)]
    return bits, insert(cs, current, bits, siblings)


@block
def sha256_level(cs, current: AllocatedNum, *, data: dict):
    bits, nodes = _level(cs, current, data, 2)
    return bits, sha256_nodes(cs, nodes)


@block
def poseidon_level(cs, current: AllocatedNum, *, data: dict, arity: int,
                   constants: PoseidonConstants):
    bits, nodes = _level(cs, current, data, arity)
    return bits, poseidon_hash(cs, nodes, constants=constants)


@block
def packed_input(cs, bits: list[Boolean]) -> None:
    pack_into_inputs(cs, bits)


@block
def enforce_equal(cs, a: AllocatedNum, b: AllocatedNum) -> None:
    equal(cs, a, b)


def level_data(index: int, siblings: np.ndarray) -> dict:
    return {"index": np.asarray(index, dtype=np.int64),
            "siblings": np.asarray(siblings, dtype=object)}


def enforce_inclusion(cs, leaf: AllocatedNum, root: AllocatedNum, path: list[dict],
                      arities: list[int], constants_for) -> None:
    """``enforce_inclusion``: ``path`` is one ``level_data`` per level, ``arities`` their
    arities; ``constants_for(arity)`` gives Poseidon's constants (None: SHA-256 tree D)."""
    current, index_bits = leaf, []
    for data, arity in zip(path, arities):
        constants = constants_for(arity)
        if constants is None:
            bits, current = sha256_level(cs, current, data=data)
        else:
            bits, current = poseidon_level(cs, current, data=data, arity=arity,
                                           constants=constants)
        index_bits += bits
    packed_input(cs, index_bits)
    enforce_equal(cs, current, root)
