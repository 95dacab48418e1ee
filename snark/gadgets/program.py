"""A circuit as the sequence of its block calls, in bellperson's order.

A ``Program`` is the constraint system a circuit's top level runs on: every gadget called
on it is a block (``blocks``), so running a 130 M-constraint circuit's synthesis costs one
Python call per block call (tens of thousands), not per constraint. Variables are numbered
as bellperson numbers them: auxiliary variables in allocation order (global ``a >= 0``),
public inputs in ``alloc_input`` order after ONE (global ``-(g + 1)``, ONE being g = 0).

Templates live in a ``TemplateBook`` shared by the programs of one circuit shape (the
structure pass and every witness pass), with one table of the coefficients they use.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.gadgets.blocks import (OUT_AUX, OUT_CONST, OUT_EXT, Template, flatten, rebuild)
from snark.gadgets.boolean import CONSTANT, IS, AllocatedBit, Boolean
from snark.gadgets.num import NUMBER, AllocatedNum


def input_ref(index: int) -> int:
    """Global public input ``index`` (ONE is 0) as a variable reference."""
    return -(index + 1)


class TemplateBook:
    """The templates of one circuit shape and the coefficients their rows use."""

    def __init__(self) -> None:
        self.templates: list[Template] = []
        self._by_key: dict = {}
        self.coefficients: list[int] = []
        self._codes: dict[int, int] = {}

    def code(self, coeff: int) -> int:
        code = self._codes.get(coeff)
        if code is None:
            code = self._codes[coeff] = len(self.coefficients)
            self.coefficients.append(coeff)
        return code

    def template(self, fn, shape, leaves: list, static: dict, data: dict) -> tuple[int, list]:
        """The template for this call's signature (recorded on first use) and the global
        variables of its external slots."""
        codes = tuple([leaf.kind + leaf.const for leaf in leaves])
        slot_of: dict[int, int] = {}
        slots, refs, slot_is_bit = [], [], []
        for leaf, code in zip(leaves, codes):
            if code < IS:
                slots.append(-1)
                continue
            ref = leaf.key
            slot = slot_of.get(ref)
            if slot is None:
                slot = slot_of[ref] = len(refs)
                refs.append(ref)
                slot_is_bit.append(code != NUMBER)
            elif slot_is_bit[slot] != (code != NUMBER):
                raise TypeError(f"{fn.__qualname__}: variable {ref} is a bit and a number")
            slots.append(slot)
        data_shapes = {name: (np.shape(v), np.asarray(v).dtype.str) for name, v in data.items()}
        key = (fn.__module__, fn.__qualname__, shape, codes, tuple(slots),
               tuple(sorted(static.items())), tuple(sorted(data_shapes.items())))
        index = self._by_key.get(key)
        if index is None:
            template = Template(fn, shape, codes, tuple(slots), tuple(slot_is_bit), dict(static),
                                data_shapes)
            template.record(self.code)
            index = self._by_key[key] = len(self.templates)
            self.templates.append(template)
        return index, refs


@dataclass
class Calls:
    """A program's calls as arrays, in program order."""

    template: np.ndarray     # (calls,) int32
    aux_base: np.ndarray     # (calls,) int64
    input_base: np.ndarray   # (calls,) int64: inputs allocated before (ONE not counted)
    row_base: np.ndarray     # (calls,) int64
    ext_start: np.ndarray    # (calls + 1,) int64 into ``ext``
    ext: np.ndarray          # global variable references of every call's slots

    def ext_of(self, call: int) -> np.ndarray:
        return self.ext[self.ext_start[call]:self.ext_start[call + 1]]


class Program:
    """The top-level constraint system: records block calls (see the module docstring)."""

    is_program = True

    def __init__(self, book: TemplateBook, *, keep_data: bool = False) -> None:
        self.book = book
        self.keep_data = keep_data
        self.num_aux = 0
        self.num_inputs = 1  # ONE
        self.num_rows = 0
        self._template: list[int] = []
        self._bases: list[tuple[int, int, int]] = []
        self._ext: list[list[int]] = []
        self.data: list[dict | None] = []

    def call(self, fn, signals: tuple, kwargs: dict):
        data = kwargs.pop("data", None) or {}
        leaves: list = []
        shape = flatten(list(signals), leaves)
        index, refs = self.book.template(fn, shape, leaves, kwargs, data)
        template = self.book.templates[index]
        bases = (self.num_aux, self.num_inputs - 1, self.num_rows)
        self._template.append(index)
        self._bases.append(bases)
        self._ext.append(refs)
        self.data.append(data if self.keep_data else None)
        self.num_aux += template.num_aux
        self.num_inputs += template.num_inputs
        self.num_rows += template.num_rows
        return self._outputs(template, refs, bases)

    @staticmethod
    def _outputs(template: Template, refs: list[int], bases: tuple[int, int, int]):
        if template.outputs is None:
            return None
        shape, specs = template.outputs
        aux_base, input_base, _ = bases
        leaves = []
        for where, i, code in specs:
            if where == OUT_CONST:
                leaves.append(Boolean(CONSTANT, const=bool(code)))
                continue
            ref = (aux_base + i if where == OUT_AUX else refs[i] if where == OUT_EXT
                   else input_ref(1 + input_base + i))
            leaves.append(AllocatedNum(ref, None) if code == NUMBER
                          else Boolean(code, AllocatedBit(ref, None)))
        return rebuild(shape, leaves)

    def calls(self) -> Calls:
        bases = np.asarray(self._bases, dtype=np.int64).reshape(-1, 3)
        lengths = np.asarray([len(e) for e in self._ext], dtype=np.int64)
        ext = np.fromiter((r for e in self._ext for r in e), dtype=np.int64,
                          count=int(lengths.sum()))
        return Calls(np.asarray(self._template, dtype=np.int32), bases[:, 0], bases[:, 1],
                     bases[:, 2], np.concatenate([[0], np.cumsum(lengths)]), ext)
