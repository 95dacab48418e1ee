"""Blocks: gadgets recorded once per signature and stamped at every call.

``@block`` marks a gadget function ``fn(cs, *signals, [data=…], **static)``. Called on any
constraint system inside another block it simply runs (inline). Called on a ``Program`` it
becomes one *call*: its signals are flattened into leaves (bits and numbers), and the
block's ``Template`` for this signature — the function, the constant bits among the leaves
and their values, which leaves share a variable, the static arguments and the shapes of the
per-call ``data`` — is recorded on first use. The call stores the global variables of the
leaves and where its own variables and rows begin; the Program advances past them.

A template runs again, vectorised, to evaluate the calls of one group (``evaluate``): the
leaves then carry the values of a batch of calls and ``data`` their stacked private inputs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snark.gadgets.boolean import CONSTANT, IS, AllocatedBit, Boolean
from snark.gadgets.num import NUMBER, AllocatedNum
from snark.gadgets.system import (EXTERNAL, ONE, Evaluator, Recorder, input_index,
                                  is_local_input)
from snark.gadgets.tape import Tape, compile_tape
from snark.gadgets.uint32 import UInt32, word_value



# -- flattening signals ------------------------------------------------------------------
def flatten(signals: Any, leaves: list) -> Any:
    """The structure of ``signals`` with every leaf replaced by its position in ``leaves``."""
    if isinstance(signals, (Boolean, AllocatedNum)):
        leaves.append(signals)
        return len(leaves) - 1
    if isinstance(signals, UInt32):
        return ("u32", tuple(flatten(b, leaves) for b in signals.bits))
    if isinstance(signals, (list, tuple)):
        return ("seq", tuple(flatten(s, leaves) for s in signals))
    raise TypeError(f"a block takes bits, numbers, words and lists of them, "
                    f"not {type(signals).__name__}")


def rebuild(shape: Any, leaves: list) -> Any:
    """The inverse of ``flatten``."""
    if isinstance(shape, int):
        return leaves[shape]
    kind, items = shape
    parts = [rebuild(item, leaves) for item in items]
    if kind == "u32":
        bits = tuple(parts)
        known = all(b.is_constant() or b.bit.value is not None for b in bits)
        return UInt32(bits, word_value(bits) if known else None)
    return parts


def leaf_code(leaf) -> int:
    """0 / 1 a constant bit, 2 a bit, 3 a negated bit, 4 a number."""
    return leaf.kind + leaf.const


@dataclass
class Matrix:
    """One of A, B, C of a template: per row its term count, then keys and coefficients."""

    row_terms: np.ndarray   # (rows,) int32
    keys: np.ndarray        # (terms,) int64, in the key space of ``system``
    coeffs: list[int]       # (terms,) ints mod r, none of them 0


@dataclass
class Template:
    """A block recorded for one signature."""

    fn: Any
    shape: Any
    leaf_codes: tuple[int, ...]
    slots: tuple[int, ...]          # leaf → external slot (variables only; -1 for constants)
    slot_is_bit: tuple[bool, ...]
    static: dict
    data_shapes: dict
    aux_is_bit: np.ndarray = field(default=None)
    num_inputs: int = 0
    matrices: tuple[Matrix, Matrix, Matrix] = field(default=None)
    outputs: Any = None             # structure with leaves ("const", v) | ("aux"|"ext"|"input", i)
    codes: tuple = ()               # per matrix: coefficient codes of its terms (TemplateBook)
    tape: Tape | None = None

    @property
    def num_aux(self) -> int:
        return len(self.aux_is_bit)

    @property
    def num_rows(self) -> int:
        return len(self.matrices[0].row_terms)

    @property
    def num_slots(self) -> int:
        return len(self.slot_is_bit)

    def _placeholders(self, values: list[np.ndarray] | None, batch: int) -> list:
        leaves = []
        for code, slot in zip(self.leaf_codes, self.slots):
            if code < IS:
                leaves.append(Boolean(CONSTANT, const=bool(code)))
            elif code == NUMBER:
                value = values[slot] if values else np.zeros(batch, dtype=object)
                leaves.append(AllocatedNum(EXTERNAL + slot, value))
            else:
                value = values[slot] if values else np.zeros(batch, dtype=bool)
                leaves.append(Boolean(code, AllocatedBit(EXTERNAL + slot, value)))
        return leaves

    def run(self, cs, values: list[np.ndarray] | None, data: dict | None) -> Any:
        args = rebuild(self.shape, self._placeholders(values, cs.batch))
        if self.data_shapes:
            if data is None:
                data = {name: np.zeros((cs.batch, *shape), dtype=dtype)
                        for name, (shape, dtype) in self.data_shapes.items()}
            return self.fn(cs, *args, data=data, **self.static)
        return self.fn(cs, *args, **self.static)

    def record(self, coefficient_code) -> None:
        recorder = Recorder()
        result = self.run(recorder, None, None)
        self.aux_is_bit = np.asarray(recorder.aux_is_bit, dtype=bool)
        self.num_inputs = recorder.n_inputs
        self.tape = compile_tape(recorder.aux_ops, recorder.aux_is_bit, recorder.input_ops,
                                 recorder.sums, self.slot_is_bit)
        self.matrices = tuple(_matrix([row[m] for row in recorder.rows]) for m in range(3))
        self.outputs = _output_spec(result)
        codes = {c: coefficient_code(c) for m in self.matrices for c in set(m.coeffs)}
        self.codes = tuple(np.fromiter((codes[c] for c in m.coeffs), dtype=np.int64,
                                       count=len(m.coeffs)) for m in self.matrices)

    def evaluate(self, values: list[np.ndarray], data: dict | None, batch: int,
                 check: bool = False) -> Evaluator:
        """The values a batch of calls allocates, the gadget's own code run on the batch:
        the reference the tape is tested against (``check`` also checks every row)."""
        external = {EXTERNAL + s: v for s, v in enumerate(values)} if check else None
        evaluator = Evaluator(batch, check=check, external=external)
        self.run(evaluator, values, data)
        return evaluator


def _matrix(lcs: list[dict]) -> Matrix:
    """Rows as term counts, keys and coefficients, zero coefficients left out."""
    keys: list[int] = []
    coeffs: list[int] = []
    row_terms = np.empty(len(lcs), dtype=np.int32)
    for r, lc in enumerate(lcs):
        before = len(keys)
        for key, coeff in lc.items():
            if coeff:
                keys.append(key)
                coeffs.append(coeff)
        row_terms[r] = len(keys) - before
    return Matrix(row_terms, np.asarray(keys, dtype=np.int64), coeffs)


#: Where a block's output leaf lives: a constant, one of the call's own variables or
#: inputs, or one of its external slots.
OUT_CONST, OUT_AUX, OUT_INPUT, OUT_EXT = range(4)


def _output_spec(result: Any) -> Any:
    """``(shape, [(where, index, code)])`` for the leaves of a block's result."""
    if result is None:
        return None
    leaves: list = []
    shape = flatten(result, leaves)
    specs = []
    for leaf in leaves:
        code = leaf_code(leaf)
        if code < IS:
            specs.append((OUT_CONST, code, code))
            continue
        key = leaf.key
        if key >= EXTERNAL:
            specs.append((OUT_EXT, key - EXTERNAL, code))
        elif is_local_input(key):
            specs.append((OUT_INPUT, input_index(key), code))
        elif key == ONE:
            raise ValueError("a block output cannot be the constant ONE")
        else:
            specs.append((OUT_AUX, key, code))
    return shape, specs


def block(fn):
    """Mark a gadget as a block (see the module docstring)."""
    @functools.wraps(fn)
    def call(cs, *signals, **kwargs):
        if getattr(cs, "is_program", False):
            return cs.call(fn, signals, kwargs)
        return fn(cs, *signals, **kwargs)
    call.gadget = fn
    return call
