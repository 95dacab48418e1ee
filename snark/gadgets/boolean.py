"""Bits, as bellpepper-core's ``AllocatedBit`` and ``Boolean`` make them.

Each function allocates and enforces exactly what its bellpepper-core namesake does, in the
same order, with the same terms (``(1 − v)·v = 0`` for a bit; ``2a·b = a + b − r`` for a xor;
constants folded away without a constraint). ``Boolean`` is a constant, a bit, or a negated
bit; its value is a bool (constant) or a bool array over the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.gadgets.system import LC, ONE, R, add_term

#: Kinds of a ``Boolean``; ``kind + const`` is a leaf's code in a block signature (a
#: number's code is ``NUMBER``, see ``num.AllocatedNum``).
CONSTANT, IS, NOT = 0, 2, 3


@dataclass(frozen=True, slots=True)
class AllocatedBit:
    key: int
    value: np.ndarray


def alloc_bit(cs, value: np.ndarray, op: tuple) -> AllocatedBit:
    """A new bit with its boolean constraint ``(1 − v)·v = 0``; ``op`` says how the
    witness tape computes it (``tape``)."""
    value = np.asarray(value, dtype=bool)
    key = cs.alloc(value, True, op)
    if cs.records:
        cs.enforce(lambda: ({ONE: 1, key: R - 1}, {key: 1}, {}))
    return AllocatedBit(key, value)


def _bit_op(cs, value: np.ndarray, op: tuple, rows) -> AllocatedBit:
    key = cs.alloc(value, True, op)
    if cs.records:
        cs.enforce(lambda: rows(key))
    return AllocatedBit(key, value)


def bit_xor(cs, a: AllocatedBit, b: AllocatedBit) -> AllocatedBit:
    return _bit_op(cs, a.value ^ b.value, ("xor", a.key, b.key),
                   lambda r: (add_term({a.key: 1}, a.key, 1), {b.key: 1},
                              add_term(add_term({a.key: 1}, b.key, 1), r, R - 1)))


def bit_and(cs, a: AllocatedBit, b: AllocatedBit) -> AllocatedBit:
    return _bit_op(cs, a.value & b.value, ("and", a.key, b.key),
                   lambda r: ({a.key: 1}, {b.key: 1}, {r: 1}))


def bit_and_not(cs, a: AllocatedBit, b: AllocatedBit) -> AllocatedBit:
    return _bit_op(cs, a.value & ~b.value, ("andnot", a.key, b.key),
                   lambda r: ({a.key: 1}, {ONE: 1, b.key: R - 1}, {r: 1}))


def bit_nor(cs, a: AllocatedBit, b: AllocatedBit) -> AllocatedBit:
    return _bit_op(cs, ~a.value & ~b.value, ("nor", a.key, b.key),
                   lambda r: ({ONE: 1, a.key: R - 1}, {ONE: 1, b.key: R - 1}, {r: 1}))


@dataclass(frozen=True, slots=True)
class Boolean:
    """A constant (``const``), a bit (``IS``) or its negation (``NOT``)."""

    kind: int
    bit: AllocatedBit | None = None
    const: bool = False

    @property
    def value(self):
        if self.kind == CONSTANT:
            return self.const
        return self.bit.value if self.kind == IS else ~self.bit.value

    @property
    def key(self) -> int:
        return self.bit.key

    def is_constant(self) -> bool:
        return self.kind == CONSTANT

    def negated(self) -> "Boolean":
        if self.kind == CONSTANT:
            return Boolean(CONSTANT, const=not self.const)
        return Boolean(NOT if self.kind == IS else IS, self.bit)

    def lc(self, coeff: int) -> LC:
        return self.add_to({}, coeff)

    def add_to(self, lc: LC, coeff: int) -> LC:
        """``lc + coeff·self`` in place: a constant 1 adds to ONE, a negation adds
        ``coeff·ONE − coeff·bit``."""
        if self.kind == CONSTANT:
            return add_term(lc, ONE, coeff) if self.const else lc
        if self.kind == IS:
            return add_term(lc, self.bit.key, coeff)
        add_term(lc, ONE, coeff)
        return add_term(lc, self.bit.key, R - coeff)

    def sub_from(self, lc: LC, coeff: int) -> LC:
        return self.add_to(lc, R - coeff)

    @property
    def literal(self) -> tuple[int, int]:
        """``(key, negated)`` for the witness tape; a constant is ONE, negated for false."""
        if self.kind == CONSTANT:
            return ONE, int(not self.const)
        return self.bit.key, int(self.kind == NOT)


FALSE = Boolean(CONSTANT, const=False)
TRUE = Boolean(CONSTANT, const=True)


def constant(value: bool) -> Boolean:
    return TRUE if value else FALSE


def is_bit(bit: AllocatedBit) -> Boolean:
    return Boolean(IS, bit)


def xor(cs, a: Boolean, b: Boolean) -> Boolean:
    if a.kind == CONSTANT or b.kind == CONSTANT:
        const, other = (a, b) if a.kind == CONSTANT else (b, a)
        return other.negated() if const.const else other
    if a.kind != b.kind:  # Is ⊕ Not = ¬(Is ⊕ Is')
        is_, not_ = (a, b) if a.kind == IS else (b, a)
        return xor(cs, is_, not_.negated()).negated()
    return Boolean(IS, bit_xor(cs, a.bit, b.bit))


def and_(cs, a: Boolean, b: Boolean) -> Boolean:
    if (a.kind == CONSTANT and not a.const) or (b.kind == CONSTANT and not b.const):
        return FALSE
    if a.kind == CONSTANT or b.kind == CONSTANT:
        return b if a.kind == CONSTANT else a
    if a.kind != b.kind:
        is_, not_ = (a, b) if a.kind == IS else (b, a)
        return Boolean(IS, bit_and_not(cs, is_.bit, not_.bit))
    if a.kind == NOT:
        return Boolean(IS, bit_nor(cs, a.bit, b.bit))
    return Boolean(IS, bit_and(cs, a.bit, b.bit))


def _minus(lc: LC, x: Boolean) -> LC:
    """``lc − x`` the way the ch and maj constraints spell it out term by term."""
    if x.kind == CONSTANT:
        return add_term(lc, ONE, R - 1) if x.const else lc
    if x.kind == IS:
        return add_term(lc, x.bit.key, R - 1)
    add_term(lc, ONE, R - 1)
    return add_term(lc, x.bit.key, 1)


def sha256_ch(cs, a: Boolean, b: Boolean, c: Boolean) -> Boolean:
    """``(a ∧ b) ⊕ (¬a ∧ c)`` with bellpepper's constant folds, else one bit and
    ``(b − c)·a = ch − c``."""
    value = (a.value & b.value) ^ (~np.asarray(a.value) & c.value)
    kinds = (a.kind, b.kind, c.kind)
    if kinds == (CONSTANT, CONSTANT, CONSTANT):
        return constant(bool(value))
    if a.kind == CONSTANT and not a.const:
        return c
    if b.kind == CONSTANT and not b.const:
        return and_(cs, a.negated(), c)
    if c.kind == CONSTANT and not c.const:
        return and_(cs, a, b)
    if c.kind == CONSTANT:
        return and_(cs, a, b.negated()).negated()
    if b.kind == CONSTANT:
        return and_(cs, a.negated(), c.negated()).negated()
    ch = cs.alloc(np.asarray(value, dtype=bool), True, ("ch", a.literal, b.literal, c.literal))
    if cs.records:
        cs.enforce(lambda: (_minus(b.add_to({}, 1), c), a.add_to({}, 1),
                            _minus({ch: 1}, c)))
    return Boolean(IS, AllocatedBit(ch, np.asarray(value, dtype=bool)))


def sha256_maj(cs, a: Boolean, b: Boolean, c: Boolean) -> Boolean:
    """The majority of three bits: bellpepper allocates ``maj`` first, then ``b ∧ c``, then
    ``(2·bc − b − c)·a = bc − maj``."""
    value = (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value)
    kinds = (a.kind, b.kind, c.kind)
    if kinds == (CONSTANT, CONSTANT, CONSTANT):
        return constant(bool(value))
    for x, (y, z) in ((a, (b, c)), (b, (a, c)), (c, (a, b))):
        if x.kind == CONSTANT and not x.const:
            return and_(cs, y, z)
    if c.kind == CONSTANT:
        return and_(cs, a.negated(), b.negated()).negated()
    if b.kind == CONSTANT:
        return and_(cs, a.negated(), c.negated()).negated()
    if a.kind == CONSTANT:
        return and_(cs, b.negated(), c.negated()).negated()
    value = np.asarray(value, dtype=bool)
    maj = cs.alloc(value, True, ("maj", a.literal, b.literal, c.literal))
    bc = and_(cs, b, c)
    if cs.records:
        cs.enforce(lambda: (_minus(_minus(bc.add_to({}, 2), b), c), a.add_to({}, 1),
                            add_term(bc.add_to({}, 1), maj, R - 1)))
    return Boolean(IS, AllocatedBit(maj, value))
