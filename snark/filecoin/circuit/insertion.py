"""storage-proofs' insertion gadget: a node placed among its siblings by its index bits.

``insert`` mirrors ``insertion::insert`` for the arities Filecoin's trees use (2, 4, 8):
each output position is a ``pick`` (one new number, ``(b − a)·bit = b − out``) chained
over the index bits, and arity 8 first makes ``b0 nor b1`` and ``b0 and b1``, exactly in
the order storage-proofs writes them.
"""

from __future__ import annotations

from snark.gadgets.boolean import IS, Boolean, bit_and, bit_nor
from snark.gadgets.num import AllocatedNum, pick


def insert(cs, element: AllocatedNum, bits: list[Boolean],
           siblings: list[AllocatedNum]) -> list[AllocatedNum]:
    size = len(siblings) + 1
    assert 1 << len(bits) == size
    if size == 2:
        return _insert_2(cs, element, bits, siblings)
    if size == 4:
        return _insert_4(cs, element, bits, siblings)
    if size == 8:
        return _insert_8(cs, element, bits, siblings)
    raise ValueError(f"insert: arity {size} is not one of Filecoin's tree arities (2, 4, 8)")


def _insert_2(cs, a, bits, siblings):
    (b0,), (b,) = bits, siblings
    return [pick(cs, b0, b, a), pick(cs, b0, a, b)]


def _insert_4(cs, a, bits, siblings):
    b0, b1 = bits
    b, c, d = siblings
    p0 = pick(cs, b1, b, pick(cs, b0, b, a))
    p1 = pick(cs, b1, c, pick(cs, b0, a, b))
    p2 = pick(cs, b1, pick(cs, b0, d, a), c)
    p3 = pick(cs, b1, pick(cs, b0, a, d), d)
    return [p0, p1, p2, p3]


def _insert_8(cs, a, bits, siblings):
    b0, b1, b2 = bits
    if not (b0.kind == IS and b1.kind == IS):
        raise ValueError("insert: the index bits must be allocated and not negated")
    b, c, d, e, f, g, h = siblings
    nor01 = Boolean(IS, bit_nor(cs, b0.bit, b1.bit))
    and01 = Boolean(IS, bit_and(cs, b0.bit, b1.bit))
    p0 = pick(cs, b2, b, pick(cs, nor01, a, b))
    p1 = pick(cs, b2, c, pick(cs, b1, c, pick(cs, b0, a, b)))
    p2 = pick(cs, b2, d, pick(cs, b1, pick(cs, b0, d, a), c))
    p3 = pick(cs, b2, e, pick(cs, and01, a, d))
    p4 = pick(cs, b2, pick(cs, nor01, a, f), e)
    p5 = pick(cs, b2, pick(cs, b1, g, pick(cs, b0, a, f)), f)
    p6 = pick(cs, b2, pick(cs, b1, pick(cs, b0, h, a), g), g)
    p7 = pick(cs, b2, pick(cs, and01, a, h), h)
    return [p0, p1, p2, p3, p4, p5, p6, p7]
