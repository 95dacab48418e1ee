"""32-bit words and their batched additions, as bellperson's ``UInt32`` and ``MultiEq``.

``addmany`` allocates the sum's bits (33–35 of them: enough for the carry) and does not
enforce its equation on its own: ``MultiEq`` packs the equations of several additions into
one row ``Σ 2^k·lhs_k · 1 = Σ 2^k·rhs_k`` until the next would pass Fr's 254-bit capacity,
then starts another row, and writes its last row when the SHA-256 block ends (``finish``,
bellperson's ``Drop``). Row order therefore interleaves bit constraints and MultiEq rows
exactly as bellperson emits them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.gadgets import boolean
from snark.gadgets.boolean import Boolean, alloc_bit
from snark.gadgets.num import CAPACITY
from snark.gadgets.system import LC, ONE, R, add_lc, add_term

MASK32 = 0xFFFFFFFF


class MultiEq:
    """bellperson's ``MultiEq``: a constraint system that also batches equalities."""

    def __init__(self, cs) -> None:
        self.cs = cs
        self.records = cs.records
        self.batch = cs.batch
        self.bits_used = 0
        self.lhs: LC = {}
        self.rhs: LC = {}

    def alloc(self, value, is_bit: bool, op: tuple) -> int:
        return self.cs.alloc(value, is_bit, op)

    def alloc_input(self, value, op: tuple) -> int:
        return self.cs.alloc_input(value, op)

    def define_sum(self, terms) -> int | None:
        return self.cs.define_sum(terms)

    def enforce(self, rows) -> None:
        self.cs.enforce(rows)

    def _accumulate(self) -> None:
        lhs, rhs = self.lhs, self.rhs
        if self.records:
            self.cs.enforce(lambda: (lhs, {ONE: 1}, rhs))
        self.lhs, self.rhs, self.bits_used = {}, {}, 0

    def enforce_equal(self, num_bits: int, lhs: LC | None, rhs: LC | None) -> None:
        if CAPACITY <= self.bits_used + num_bits:
            self._accumulate()
        if self.records:
            coeff = pow(2, self.bits_used, R)
            add_lc(self.lhs, lhs, coeff)
            add_lc(self.rhs, rhs, coeff)
        self.bits_used += num_bits

    def finish(self) -> None:
        if self.bits_used > 0:
            self._accumulate()


@dataclass(frozen=True, slots=True)
class UInt32:
    """Bits least significant first, and the value (an int or a uint64 array)."""

    bits: tuple[Boolean, ...]
    value: np.ndarray | int

    @classmethod
    def constant(cls, value: int) -> "UInt32":
        return cls(tuple(boolean.constant(bool(value >> i & 1)) for i in range(32)), value)

    @classmethod
    def from_bits_be(cls, bits: list[Boolean]) -> "UInt32":
        little = tuple(reversed(bits))
        return cls(little, word_value(little))

    def into_bits_be(self) -> list[Boolean]:
        return list(reversed(self.bits))

    def rotr(self, by: int) -> "UInt32":
        by %= 32
        bits = (self.bits[by:] + self.bits)[:32]
        return UInt32(bits, ((self.value >> by) | (self.value << (32 - by))) & MASK32)

    def shr(self, by: int) -> "UInt32":
        bits = self.bits[by:] + (boolean.FALSE,) * by
        return UInt32(bits, self.value >> by)

    def xor(self, cs, other: "UInt32") -> "UInt32":
        return UInt32(tuple(boolean.xor(cs, a, b) for a, b in zip(self.bits, other.bits)),
                      self.value ^ other.value)


def word_value(bits: tuple[Boolean, ...]) -> np.ndarray | int:
    """The value of 32 bits (least significant first): an int where all are constant."""
    if all(b.is_constant() for b in bits):
        return sum(int(b.const) << i for i, b in enumerate(bits))
    total = np.zeros(np.shape(next(b.value for b in bits if not b.is_constant())),
                     dtype=np.uint64)
    for i, b in enumerate(bits):
        total |= np.asarray(b.value, dtype=np.uint64) << np.uint64(i)
    return total


def sha256_ch(cs, a: UInt32, b: UInt32, c: UInt32) -> UInt32:
    bits = tuple(boolean.sha256_ch(cs, x, y, z) for x, y, z in zip(a.bits, b.bits, c.bits))
    return UInt32(bits, (a.value & b.value) ^ (~a.value & MASK32 & c.value))


def sha256_maj(cs, a: UInt32, b: UInt32, c: UInt32) -> UInt32:
    bits = tuple(boolean.sha256_maj(cs, x, y, z) for x, y, z in zip(a.bits, b.bits, c.bits))
    return UInt32(bits, (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value))


def addmany(multieq: MultiEq, operands: list[UInt32]) -> UInt32:
    """The sum mod 2^32 of 2 to 10 words: its bits allocated, its equation handed to the
    MultiEq (a constant when every operand bit is constant)."""
    assert 2 <= len(operands) <= 10
    total = sum(np.asarray(op.value, dtype=np.uint64) if not isinstance(op.value, int)
                else op.value for op in operands)
    if all(b.is_constant() for op in operands for b in op.bits):
        return UInt32.constant(int(total) & MASK32)
    lc: LC | None = None
    if multieq.records:
        lc = {}
        for op in operands:
            for i, bit in enumerate(op.bits):
                bit.add_to(lc, 1 << i)
    width = (len(operands) * MASK32).bit_length()
    total = np.asarray(total, dtype=np.uint64)
    sum_id = multieq.define_sum([(bit.literal, i) for op in operands
                                 for i, bit in enumerate(op.bits)])
    bits = [alloc_bit(multieq, (total >> np.uint64(i)) & np.uint64(1), ("sumbit", sum_id, i))
            for i in range(width)]
    result_lc = None
    if multieq.records:
        result_lc = {}
        for i, bit in enumerate(bits):
            add_term(result_lc, bit.key, 1 << i)
    multieq.enforce_equal(width, lc, result_lc)
    return UInt32(tuple(boolean.is_bit(bit) for bit in bits[:32]), total & np.uint64(MASK32))
