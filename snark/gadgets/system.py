"""The two constraint systems gadget code runs on: one records rows, one computes values.

Inside a block, a variable is an int *key*: ``ONE`` (-1), a local auxiliary variable
``j >= 0``, a local public input ``-(i + 2)``, or an external input ``EXTERNAL + s`` (the
s-th input leaf of the block's call, see ``blocks``). A linear combination is a dict
{key: coefficient mod r}; adding a term to a key already present sums the coefficients, as
bellpepper-core's ``LinearCombination`` does, and a term whose sum is 0 stays in the dict
(``blocks`` leaves it out of the matrices, as bellperson's prover and density trackers do).

Values are numpy arrays over the batch of instances a block runs on: ``bool`` for bits,
object arrays of ints in [0, r) for numbers. A ``Recorder`` runs a block once with a batch of
one placeholder instance and keeps its rows; an ``Evaluator`` runs it over a batch of real
instances and keeps the values it allocates. Gadgets build their linear combinations only
where the system records them (``enforce`` takes a function that builds them).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from snark.errors import InvalidInput
from snark.fields import FR_MODULUS

R = FR_MODULUS
ONE = -1
EXTERNAL = 1 << 40

LC = dict[int, int]
Rows = Callable[[], tuple[LC, LC, LC]]


def add_term(lc: LC, key: int, coeff: int) -> LC:
    """``lc + coeff·key`` in place (bellpepper's insert-or-update)."""
    lc[key] = (lc.get(key, 0) + coeff) % R
    return lc


def add_lc(lc: LC, other: LC, scale: int = 1) -> LC:
    """``lc + scale·other`` in place, term by term in ``other``'s order."""
    for key, coeff in other.items():
        lc[key] = (lc.get(key, 0) + scale * coeff) % R
    return lc


def input_key(index: int) -> int:
    return -(index + 2)


def is_local_input(key: int) -> bool:
    return key < ONE


def input_index(key: int) -> int:
    return -key - 2


class UnsatisfiedRow(InvalidInput):
    """A row evaluated on a witness is not satisfied; the message says which."""


class Recorder:
    """Keeps the allocations and rows of one run of a gadget (values are placeholders)."""

    records = True

    def __init__(self) -> None:
        self.batch = 1
        self.aux_is_bit: list[bool] = []
        self.aux_ops: list[tuple] = []
        self.input_ops: list[tuple] = []
        self.sums: list[list] = []
        self.rows: list[tuple[LC, LC, LC]] = []

    @property
    def n_inputs(self) -> int:
        return len(self.input_ops)

    def alloc(self, value: np.ndarray, is_bit: bool, op: tuple) -> int:
        self.aux_is_bit.append(is_bit)
        self.aux_ops.append(op)
        return len(self.aux_ops) - 1

    def alloc_input(self, value: np.ndarray, op: tuple) -> int:
        self.input_ops.append(op)
        return input_key(len(self.input_ops) - 1)

    def define_sum(self, terms: list) -> int:
        """A sum of literals ``(key, negated) << shift`` the tape's ``sumbit`` ops read."""
        self.sums.append(terms)
        return len(self.sums) - 1

    def enforce(self, rows: Rows) -> None:
        self.rows.append(rows())


class Evaluator:
    """Keeps the values a gadget allocates over a batch of instances.

    With ``check``, every row is evaluated as it is enforced (``external`` then gives the
    values of the external keys), so a gadget that computes a wrong value fails where it
    does, not later as an unsatisfied R1CS.
    """

    records = False

    def __init__(self, batch: int, *, check: bool = False,
                 external: dict[int, np.ndarray] | None = None) -> None:
        self.batch = batch
        self.aux: list[np.ndarray] = []
        self.aux_is_bit: list[bool] = []
        self.inputs: list[np.ndarray] = []
        self.check = check
        self.external = external or {}
        self.records = check

    def alloc(self, value: np.ndarray, is_bit: bool, op: tuple) -> int:
        """Keeps ``value`` as given: an array over the batch, or a scalar that holds for
        every instance (broadcast when the values are written out)."""
        self.aux.append(value)
        self.aux_is_bit.append(is_bit)
        return len(self.aux) - 1

    def alloc_input(self, value: np.ndarray, op: tuple) -> int:
        self.inputs.append(value)
        return input_key(len(self.inputs) - 1)

    def define_sum(self, terms: list) -> None:
        return None

    def enforce(self, rows: Rows) -> None:
        if not self.check:
            return
        a, b, c = (self._eval(lc) for lc in rows())
        bad = np.flatnonzero((a * b - c) % R)
        if bad.size:
            raise UnsatisfiedRow(f"row not satisfied in instance {int(bad[0])}")

    def value(self, key: int) -> np.ndarray:
        if key == ONE:
            return np.ones(self.batch, dtype=object)
        if key >= EXTERNAL:
            return self.external[key]
        value = self.inputs[input_index(key)] if is_local_input(key) else self.aux[key]
        return np.broadcast_to(value, (self.batch,))

    def _eval(self, lc: LC) -> np.ndarray:
        acc = np.zeros(self.batch, dtype=object)
        for key, coeff in lc.items():
            acc = acc + coeff * self.value(key).astype(object)
        return acc % R
