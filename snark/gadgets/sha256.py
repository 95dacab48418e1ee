"""SHA-256 as bellperson's gadget builds it: one block per compression, MultiEq inside.

The compression follows bellperson's ``sha256_compression_function`` step for step: the
message schedule (xors of rotations, one four-word ``addmany`` per word), then 64 rounds
in which ``e`` and ``a`` stay *deferred* sums until the next round needs them (one
six- and one seven-operand ``addmany`` instead of chains of two-operand ones), then the
eight additions of the chaining value, all equations batched by one ``MultiEq`` that is
flushed when the block ends. Constant message or state bits fold away exactly as there
(the padding block of a two-word hash costs no xor at all).

``compression`` is a block: a message's blocks are separate calls, one template per
pattern of constant bits (a label's first block, its middle blocks, its padding block).
"""

from __future__ import annotations

from collections.abc import Sequence

from snark.gadgets.blocks import block
from snark.gadgets.boolean import Boolean, constant
from snark.gadgets.uint32 import MultiEq, UInt32, addmany, sha256_ch, sha256_maj

ROUND_CONSTANTS = (
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
)
IV = (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
      0x5be0cd19)


def _sigma(cs, word: UInt32, rotations: tuple[int, int], third: tuple[str, int]) -> UInt32:
    """``rotr(r0) ⊕ rotr(r1) ⊕ (rotr|shr)(n)``, xored left to right as bellperson does."""
    out = word.rotr(rotations[0]).xor(cs, word.rotr(rotations[1]))
    op, by = third
    return out.xor(cs, word.rotr(by) if op == "rotr" else word.shr(by))


class _Deferred:
    """bellperson's ``Maybe``: a word, or the operands of a sum not yet allocated."""

    def __init__(self, word: UInt32 | None = None, operands: Sequence[UInt32] = ()):
        self.word, self.operands = word, list(operands)

    def compute(self, multieq: MultiEq, extra: list[UInt32]) -> UInt32:
        if self.word is not None:
            return self.word
        return addmany(multieq, self.operands + extra)


@block
def compression(cs, message: list[Boolean], state: list[UInt32]) -> list[UInt32]:
    """One SHA-256 compression of a 512-bit block (big-endian bits) into ``state``."""
    assert len(message) == 512 and len(state) == 8
    w = [UInt32.from_bits_be(message[i:i + 32]) for i in range(0, 512, 32)]
    multieq = MultiEq(cs)
    for i in range(16, 64):
        s0 = _sigma(multieq, w[i - 15], (7, 18), ("shr", 3))
        s1 = _sigma(multieq, w[i - 2], (17, 19), ("shr", 10))
        w.append(addmany(multieq, [w[i - 16], s0, w[i - 7], s1]))

    a, e = _Deferred(state[0]), _Deferred(state[4])
    b, c, d = state[1], state[2], state[3]
    f, g, h = state[5], state[6], state[7]
    for i in range(64):
        new_e = e.compute(multieq, [])
        s1 = _sigma(multieq, new_e, (6, 11), ("rotr", 25))
        ch = sha256_ch(multieq, new_e, f, g)
        temp1 = [h, s1, ch, UInt32.constant(ROUND_CONSTANTS[i]), w[i]]
        new_a = a.compute(multieq, [])
        s0 = _sigma(multieq, new_a, (2, 13), ("rotr", 22))
        maj = sha256_maj(multieq, new_a, b, c)
        h, g, f = g, f, new_e
        e = _Deferred(operands=temp1 + [d])
        d, c, b = c, b, new_a
        a = _Deferred(operands=temp1 + [s0, maj])

    out = [a.compute(multieq, [state[0]])]
    out += [addmany(multieq, [state[k], word]) for k, word in ((1, b), (2, c), (3, d))]
    out.append(e.compute(multieq, [state[4]]))
    out += [addmany(multieq, [state[k], word]) for k, word in ((5, f), (6, g), (7, h))]
    multieq.finish()
    return out


def sha256(cs, message: list[Boolean]) -> list[Boolean]:
    """bellperson's ``sha256``: Merkle–Damgård padding, then one compression per block;
    the digest as 256 big-endian bits."""
    assert len(message) % 8 == 0
    length = len(message)
    padded = list(message) + [constant(True)]
    while (len(padded) + 64) % 512:
        padded.append(constant(False))
    padded += [constant(bool(length >> i & 1)) for i in range(63, -1, -1)]
    state = [UInt32.constant(v) for v in IV]
    for start in range(0, len(padded), 512):
        state = compression(cs, padded[start:start + 512], state)
    return [bit for word in state for bit in word.into_bits_be()]
