"""Witness tapes for the device: ``snark.gadgets.tape.Tape`` as the flat arrays of tape.cuh.

``encode`` turns a template's tape into ops of six int32 words, the step ends (where the
depth changes: every op of a step reads only earlier steps), the term lists of sums and
combinations, a table of constants in Montgomery form, and each register's number slot;
``data_rows`` lays a batch of calls' private data out as the Fr rows the ops index. The
host build runs the same kernel text (``gpu.hostlib.tape_run``), the GPU ``tape.cu``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.fields import FR_MODULUS, fr_to_limbs, to_montgomery
from snark.gadgets.tape import Tape

KINDS = ("data_num", "data_bit", "data_bits", "numbit", "xor", "and", "andnot", "nor", "ch",
         "maj", "sum", "sumbit", "lin", "square", "sqsum", "mulsum", "select", "scale")


@dataclass
class DeviceTape:
    ops: np.ndarray          # (ops, 6) int32: kind, dest, a, b, c, d
    step_ends: np.ndarray    # (steps,) int32
    terms: np.ndarray        # (terms, 2) int32
    consts: np.ndarray       # (k, 4) uint64, Montgomery
    num_index: np.ndarray    # (registers,) int32, -1 for bit registers
    slot_is_num: np.ndarray  # (slots,) uint8
    slots: int
    registers: int
    numbers: int
    sums: int
    aux: int
    inputs: int
    fields: dict[str, tuple[int, int]]  # data field → (first word, words)

    @property
    def data_words(self) -> int:
        return sum(words for _, words in self.fields.values())

    @property
    def shared_bytes(self) -> int:
        """Registers of one call: numbers (32 bytes), sums (8), bits (1)."""
        return 32 * self.numbers + 8 * self.sums + self.registers


class _Consts:
    def __init__(self) -> None:
        self.values: list[int] = []
        self._index: dict[int, int] = {}

    def __call__(self, value) -> int:
        value = int(value) % FR_MODULUS
        if value not in self._index:
            self._index[value] = len(self.values)
            self.values.append(value)
        return self._index[value]


def _literal(reg, neg) -> np.ndarray:
    return (np.asarray(reg, dtype=np.int64) << 1) | np.asarray(neg, dtype=np.int64)


def encode(tape: Tape, data_shapes: dict) -> DeviceTape:
    fields, first = {}, 0
    for name in sorted(data_shapes):
        words = int(np.prod(data_shapes[name][0], dtype=np.int64))
        fields[name], first = (first, words), first + words
    consts = _Consts()
    rows, step_ends, count = [], [], 0
    terms: list[list[int]] = []  # (operand, shift or constant) pairs of the sums, in order
    for i, step in enumerate(tape.steps):
        if i and step.depth != tape.steps[i - 1].depth:
            step_ends.append(count)
        rows.append(_ops(step, fields, consts, terms))
        count += len(rows[-1])
    if tape.steps:
        step_ends.append(count)
    num_index = np.full(len(tape.is_num), -1, dtype=np.int32)
    num_index[tape.is_num] = np.arange(int(tape.is_num.sum()), dtype=np.int32)
    return DeviceTape(
        np.concatenate(rows).astype(np.int32) if rows else np.zeros((0, 6), np.int32),
        np.asarray(step_ends, dtype=np.int32),
        np.asarray(terms, dtype=np.int32).reshape(-1, 2),
        to_montgomery(consts.values, FR_MODULUS, 4) if consts.values
        else np.zeros((0, 4), np.uint64),
        num_index, tape.is_num[:tape.num_slots].astype(np.uint8), tape.num_slots,
        len(tape.is_num), int(tape.is_num.sum()), tape.num_sums, tape.num_aux,
        tape.num_inputs, fields)


def _ops(step, fields, consts, terms: list) -> np.ndarray:
    """One step's ops as (ops, 6) rows; sums and combinations append their terms."""
    kind, dest, args = step.kind, step.dest, step.args
    out = np.full((len(dest), 6), -1, dtype=np.int64)
    out[:, 0] = KINDS.index(kind)
    out[:, 1] = dest
    if kind.startswith("data"):
        out[:, 2] = fields[args["field"]][0] + args["element"]
        out[:, 3] = args["bit"]
    elif kind == "numbit":
        out[:, 2], out[:, 3] = args["src"], args["bit"]
    elif kind in ("xor", "and", "andnot", "nor"):
        out[:, 2], out[:, 3] = args["a"], args["b"]
    elif kind in ("ch", "maj"):
        for column, name in zip((2, 3, 4), "abc"):
            out[:, column] = _literal(args[name], args[name + "_neg"])
    elif kind in ("sum", "lin"):
        starts = np.append(args["starts"], len(args["key"]))
        if kind == "sum":
            pairs = np.stack([_literal(args["key"], args["neg"]),
                              args["shift"].astype(np.int64)], axis=1)
        else:
            pairs = np.stack([args["key"], [consts(c) for c in args["coeff"]]], axis=1)
        out[:, 2] = len(terms) + starts[:-1]
        out[:, 3] = np.diff(starts)
        terms.extend(pairs.tolist())
    elif kind == "sumbit":
        out[:, 2], out[:, 3] = args["sum"], args["bit"].astype(np.int64)
    elif kind == "square":
        out[:, 2] = args["a"]
    elif kind == "sqsum":
        out[:, 2] = args["a"]
        out[:, 3] = [consts(k) for k in args["k"]]
    elif kind == "mulsum":
        out[:, 2], out[:, 3] = args["a"], args["b"]
        out[:, 4] = [consts(v) if v else -1 for v in args["pre"]]
        out[:, 5] = [consts(v) if v else -1 for v in args["post"]]
    elif kind == "select":
        out[:, 2] = _literal(args["cond"], args["cond_neg"])
        out[:, 3], out[:, 4] = args["a"], args["b"]
    elif kind == "scale":
        out[:, 2] = _literal(args["cond"], args["cond_neg"])
        out[:, 3] = args["a"]
    else:
        raise ValueError(f"tape op {kind!r} has no device encoding")
    return out


def data_rows(tape: DeviceTape, data: dict, batch: int) -> np.ndarray:
    """``(batch, data_words, 4)`` standard-form limbs: every field's values in order."""
    out = np.zeros((batch, tape.data_words, 4), dtype=np.uint64)
    for name, (first, words) in tape.fields.items():
        values = np.asarray(data[name]).reshape(batch, words)
        if values.dtype == object:
            out[:, first:first + words] = fr_to_limbs(values.reshape(-1).tolist()).reshape(
                batch, words, 4)
        else:
            out[:, first:first + words, 0] = values.astype(np.int64).astype(np.uint64)
    return out


def plan_calls(plan, values: np.ndarray | None, tapes: dict):
    """Per call group of a ``snark.gadgets.evaluation.WitnessPlan``, in order: its device
    tape (encoded once per template, kept in ``tapes``), external references, data rows and
    output bases — what one kernel launch takes."""
    for group in plan.groups:
        template, batch = group.template, len(group.members)
        tape = tapes.get(id(template))
        if tape is None:
            tape = tapes[id(template)] = encode(template.tape, template.data_shapes)
        data = {name: stacked if values is None
                else values[stacked.astype(np.int64)].astype(stacked.dtype)
                for name, stacked in group.data.items()}
        refs = group.refs if group.refs is not None else np.zeros((batch, 0), np.int64)
        yield (tape, refs, data_rows(tape, data, batch), group.aux_rows[0] if tape.aux
               else np.zeros(batch, np.int64), group.input_rows[0] - 1 if tape.inputs
               else np.zeros(batch, np.int64))
