"""Field elements, as bellpepper-core's ``AllocatedNum`` and ``Num`` make them.

``AllocatedNum`` is a variable with its values (an object array of ints mod r over the
batch); ``Num`` a linear combination with its value, consumed by the operations that extend
it, as in bellpepper-core. ``to_bits_le`` is the non-strict decomposition (255 bits and one
unpacking row ``0·0 = Σ 2^i·b_i − x``) that Filecoin's circuit uses everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.fields import fr_to_limbs
from snark.gadgets.boolean import IS, Boolean, alloc_bit
from snark.gadgets.system import LC, ONE, R, add_lc, add_term

#: Bits of an Fr element (bellpepper's ``Scalar::NUM_BITS``), and what packs safely.
NUM_BITS = 255
CAPACITY = 254


def as_values(value) -> np.ndarray:
    """Ints (or an array of them) as an object array of ints mod r."""
    arr = np.asarray(value, dtype=object)
    return arr % R


#: A number's code among block leaves (bits are 0–3: ``boolean``'s kinds plus the constant).
NUMBER = 4


@dataclass(frozen=True, slots=True)
class AllocatedNum:
    key: int
    value: np.ndarray
    kind = NUMBER
    const = False


def alloc_num(cs, value, op: tuple) -> AllocatedNum:
    """A new number; ``op`` says how the witness tape computes it (``tape``)."""
    value = as_values(value)
    return AllocatedNum(cs.alloc(value, False, op), value)


def inputize(cs, num: AllocatedNum) -> None:
    """A public input equal to ``num``: ``input·1 = num``."""
    key = cs.alloc_input(num.value, ("lin", {num.key: 1}))
    if cs.records:
        cs.enforce(lambda: ({key: 1}, {ONE: 1}, {num.key: 1}))


def bits_of(value: np.ndarray, count: int) -> np.ndarray:
    """The low ``count`` bits of every value, shape (count, batch), least significant first."""
    limbs = fr_to_limbs([int(v) for v in np.atleast_1d(value)])
    shifts = np.arange(64, dtype=np.uint64)
    bits = ((limbs[:, :, None] >> shifts) & np.uint64(1)).reshape(len(limbs), 256)
    return bits[:, :count].T.astype(bool)


def to_bits_le(cs, num: AllocatedNum) -> list[Boolean]:
    """255 bits, least significant first, and the unpacking row (not range checked)."""
    bits = [alloc_bit(cs, row, ("numbit", num.key, i))
            for i, row in enumerate(bits_of(num.value, NUM_BITS))]
    if cs.records:
        def rows():
            lc: LC = {}
            for i, bit in enumerate(bits):
                add_term(lc, bit.key, pow(2, i, R))
            return {}, {}, add_term(lc, num.key, R - 1)
        cs.enforce(rows)
    return [Boolean(IS, bit) for bit in bits]


def square(cs, num: AllocatedNum) -> AllocatedNum:
    out = alloc_num(cs, num.value * num.value, ("square", num.key))
    if cs.records:
        cs.enforce(lambda: ({num.key: 1}, {num.key: 1}, {out.key: 1}))
    return out


@dataclass(slots=True)
class Num:
    """A linear combination and its value; ``add_bool_with_coeff`` and ``scale`` consume it."""

    lc: LC
    value: np.ndarray | int

    @classmethod
    def zero(cls) -> "Num":
        return cls({}, 0)

    @classmethod
    def of(cls, num: AllocatedNum) -> "Num":
        return cls({num.key: 1}, num.value)

    @classmethod
    def constant(cls, value: int) -> "Num":
        """bellpepper's ``Num::zero().add_bool_with_coeff(ONE, &TRUE, value)``."""
        return cls({ONE: value % R}, value % R)

    def add_bool_with_coeff(self, bit: Boolean, coeff: int) -> "Num":
        value = (self.value + coeff * np.asarray(bit.value, dtype=object)) % R
        return Num(bit.add_to(self.lc, coeff), value)

    def combination(self, coeff: int = 1) -> LC:
        """bellpepper's ``num.lc(coeff)``: a fresh combination ``coeff·self``."""
        return add_lc({}, self.lc, coeff)

    def add(self, other: "Num") -> "Num":
        return Num(add_lc(dict(self.lc), other.lc), (self.value + other.value) % R)

    def scale(self, scalar: int) -> "Num":
        return Num({key: coeff * scalar % R for key, coeff in self.lc.items()},
                   self.value * scalar % R)


def pack_bits(cs, bits: list[Boolean]) -> AllocatedNum:
    """bellperson's ``multipack::pack_bits``: the first 254 bits as one number,
    ``Σ 2^i·b_i · 1 = out``."""
    num = Num.zero()
    for i, bit in enumerate(bits[:CAPACITY]):
        num = num.add_bool_with_coeff(bit, pow(2, i, R))
    # no bits (a one-partition SnapDeals update packs none): the tape reads 0·ONE
    out = alloc_num(cs, num.value, ("lin", num.combination() or {ONE: 0}))
    if cs.records:
        cs.enforce(lambda: (num.combination(), {ONE: 1}, {out.key: 1}))
    return out


def pack_into_inputs(cs, bits: list[Boolean]) -> None:
    """bellperson's ``multipack::pack_into_inputs``: one public input per 254 bits."""
    for start in range(0, len(bits), CAPACITY):
        num = Num.zero()
        for i, bit in enumerate(bits[start:start + CAPACITY]):
            num = num.add_bool_with_coeff(bit, pow(2, i, R))
        key = cs.alloc_input(as_values(num.value), ("lin", num.combination()))
        if cs.records:
            cs.enforce(lambda num=num, key=key: (num.combination(), {ONE: 1}, {key: 1}))


def equal(cs, a: AllocatedNum, b: AllocatedNum) -> None:
    """storage-proofs' ``constraint::equal``: ``a·1 = b``."""
    if cs.records:
        cs.enforce(lambda: ({a.key: 1}, {ONE: 1}, {b.key: 1}))


def add(cs, a: AllocatedNum, b: AllocatedNum) -> AllocatedNum:
    """storage-proofs' ``constraint::add``: a new ``res`` with ``(a + b)·1 = res``."""
    out = alloc_num(cs, a.value + b.value, ("lin", add_term({a.key: 1}, b.key, 1)))
    if cs.records:
        cs.enforce(lambda: (add_term({a.key: 1}, b.key, 1), {ONE: 1}, {out.key: 1}))
    return out


def pick(cs, condition: Boolean, a: AllocatedNum, b: AllocatedNum) -> AllocatedNum:
    """storage-proofs' ``insertion::pick``: ``a`` where the condition holds, else ``b``;
    ``(b − a)·condition = b − c``."""
    out = alloc_num(cs, np.where(np.asarray(condition.value, dtype=bool), a.value, b.value),
                    ("select", condition.literal, a.key, b.key))
    if cs.records:
        cs.enforce(lambda: (add_term({b.key: 1}, a.key, R - 1), condition.lc(1),
                            add_term({b.key: 1}, out.key, R - 1)))
    return out


__all__ = ["AllocatedNum", "Num", "NUM_BITS", "CAPACITY", "alloc_num",
           "inputize", "to_bits_le", "square", "pack_bits", "pack_into_inputs", "equal",
           "add", "pick", "bits_of", "as_values"]
