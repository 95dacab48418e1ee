"""A circuit family: one synthesis function and its circuits, one per shape, made once per
process.

A circuit of the project is ``synthesize(cs, shape, data, constants_for)`` over a dataclass
of private values. Its R1CS does not depend on the values, so ``structure`` runs it on blank
data; its witness plan runs it once on *symbolic* data (each value replaced by its position
in the flat list of values, ``numbered``), and a witness is that plan run on the values
(``flat_values``). Filecoin's PoRep and PoSt circuits are families.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from snark.gadgets.assembly import Fingerprint, fingerprint, to_r1cs
from snark.gadgets.evaluation import Witness, WitnessPlan
from snark.gadgets.program import Program, TemplateBook
from snark.r1cs import R1CS

#: ``replace(convert)``: the data with every value array passed through ``convert``, in one
#: fixed order.
Replace = Callable[[Callable[[np.ndarray], np.ndarray]], Any]


def flat_values(replace: Replace) -> np.ndarray:
    """Every value in ``replace``'s order, as one object array."""
    parts: list[np.ndarray] = []

    def keep(a: np.ndarray) -> np.ndarray:
        parts.append(np.asarray(a, dtype=object).reshape(-1))
        return a

    replace(keep)
    return np.concatenate(parts)


def numbered(replace: Replace) -> Any:
    """The data with every value replaced by its position in ``flat_values`` (same shapes
    and dtypes, so the same templates)."""
    count = [0]

    def ids(a: np.ndarray) -> np.ndarray:
        a = np.asarray(a)
        out = np.arange(count[0], count[0] + a.size).reshape(a.shape).astype(a.dtype)
        count[0] += a.size
        return out

    return replace(ids)


class CircuitFamily:
    """``structure``, ``r1cs``, ``fingerprint``, ``witness_plan`` and ``witness`` of the
    shapes of one ``synthesize``; ``blank(shape)`` and ``symbolic(shape)`` give its data,
    ``flatten(data)`` the values a plan reads. Shapes share one template book."""

    def __init__(self, synthesize: Callable, blank: Callable, symbolic: Callable,
                 flatten: Callable, constants_for: Callable, book: TemplateBook) -> None:
        self._synthesize, self._blank, self._symbolic = synthesize, blank, symbolic
        self._flatten, self._constants, self._book = flatten, constants_for, book
        self.structure = lru_cache(maxsize=4)(self._structure)
        self.r1cs = lru_cache(maxsize=2)(self._r1cs)
        self.witness_plan = lru_cache(maxsize=4)(self._witness_plan)

    def _structure(self, shape) -> Program:
        program = Program(self._book)
        self._synthesize(program, shape, self._blank(shape), self._constants)
        return program

    def _r1cs(self, shape) -> R1CS:
        return to_r1cs(self.structure(shape))

    def fingerprint(self, shape) -> Fingerprint:
        return fingerprint(self.structure(shape))

    def _witness_plan(self, shape) -> WitnessPlan:
        """The shape's evaluation order, from its program on symbolic data."""
        program = Program(self._book, keep_data=True)
        self._synthesize(program, shape, self._symbolic(shape), self._constants)
        return WitnessPlan(program)

    def witness(self, shape, data) -> Witness:
        """One unit's full assignment: the shape's plan run on the data's values."""
        return self.witness_plan(shape).run(self._flatten(data))
