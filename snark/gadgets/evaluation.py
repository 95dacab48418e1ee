"""A program's witness, evaluated call group by call group.

A call can run once every variable it reads is known. Its *level* is one more than the
highest level among the calls that allocated what it reads (0 if it reads only private
data), and the calls of one level and one template run together: one vectorised pass of
the block's gadget code over their batch. A circuit's depth (a Merkle path's levels, a
SHA-256 message's blocks) bounds the number of passes, not its size.

The witness is kept as limbs (``snark.fields``): bits straight from the bool arrays,
numbers through ints; ``aux_is_bit`` records which variables the circuit made as bits (the
GPU's MSMs sum those bases without buckets).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from snark.fields import fr_to_limbs, limbs_to_ints
from snark.gadgets.program import Calls, Program


@dataclass
class Witness:
    inputs: np.ndarray       # (num_inputs, 4) limbs, ONE first
    aux: np.ndarray          # (num_aux, 4) limbs
    aux_is_bit: np.ndarray   # (num_aux,) bool

    def assignment(self) -> np.ndarray:
        """``[ONE, inputs…, aux…]`` as one ``(num_variables, 4)`` array."""
        return np.concatenate([self.inputs, self.aux])

    def public_inputs(self) -> list[int]:
        return limbs_to_ints(self.inputs[1:])


def _levels(program: Program, calls: Calls) -> np.ndarray:
    """Each call's level. The producers' first rows are gathered once: gathered inside the
    loop they made it quadratic (a WindowPoSt partition's 320 k calls: 152 s)."""
    templates = program.book.templates
    num_aux = np.asarray([templates[t].num_aux for t in calls.template])
    num_inputs = np.asarray([templates[t].num_inputs for t in calls.template])
    aux_producers = np.flatnonzero(num_aux)
    input_producers = np.flatnonzero(num_inputs)
    aux_starts = calls.aux_base[aux_producers]
    input_starts = calls.input_base[input_producers]
    levels = np.zeros(len(calls.template), dtype=np.int64)
    for c in range(len(levels)):
        refs = calls.ext_of(c)
        deps = [aux_producers[np.searchsorted(aux_starts, refs[refs >= 0], side="right") - 1]]
        inputs = -refs[refs < -1] - 2  # allocated input index (ONE excluded)
        if inputs.size:
            deps.append(input_producers[np.searchsorted(input_starts, inputs,
                                                        side="right") - 1])
        deps = np.concatenate(deps)
        levels[c] = 1 + levels[deps].max() if deps.size else 0
    return levels


def _gather(witness: Witness, refs: np.ndarray, is_bit: bool) -> np.ndarray:
    aux = refs >= 0
    limbs = np.where(aux[:, None], witness.aux[np.where(aux, refs, 0)],
                     witness.inputs[np.where(aux, 0, -refs - 1)])
    if is_bit:
        return limbs[:, 0].astype(bool)
    out = np.empty(len(refs), dtype=object)
    out[:] = limbs_to_ints(limbs)
    return out


def _scatter_columns(target: np.ndarray, rows: np.ndarray, columns: list,
                     is_bit: np.ndarray) -> None:
    """Write ``columns`` (one array over the batch, or one value for all, per variable) at
    ``rows[j]``: the gadget evaluator's output."""
    batch = rows.shape[1]
    bits = np.zeros((len(columns), batch), dtype=np.uint8)
    nums = np.zeros((len(columns), batch), dtype=object)
    for j, column in enumerate(columns):
        (bits if is_bit[j] else nums)[j] = column
    _scatter(target, rows, bits, nums, is_bit)


def _scatter(target: np.ndarray, rows: np.ndarray, bits: np.ndarray, nums: np.ndarray | None,
             is_bit: np.ndarray) -> None:
    """Write the values of variables ``j`` (rows of ``bits`` or ``nums``) at ``rows[j]``."""
    if not len(is_bit):
        return
    bit_rows = np.flatnonzero(is_bit)
    if bit_rows.size:
        target[rows[bit_rows], 0] = bits[bit_rows]
    num_rows = np.flatnonzero(~is_bit)
    if num_rows.size:
        target[rows[num_rows].reshape(-1)] = fr_to_limbs(nums[num_rows].reshape(-1).tolist())


@dataclass
class _Group:
    """The calls of one template at one level: everything about them but the values."""

    template: object
    members: np.ndarray
    refs: np.ndarray | None          # (calls, slots) external references
    data: dict[str, np.ndarray]      # per field, stacked over the calls (values or indices)
    aux_rows: np.ndarray             # (aux, calls)
    input_rows: np.ndarray           # (inputs, calls)


class WitnessPlan:
    """A program's evaluation order, made once: its call groups by level, with their
    external references, output rows and private data stacked.

    A program recorded with *symbolic* data (every value replaced by its index into one
    flat vector, as ``snark.filecoin.circuit.stacked.PartitionData.symbolic`` makes it) is
    planned once per circuit shape; then each partition's witness is ``run(values)`` with
    that partition's flat values: no synthesis per partition.
    """

    def __init__(self, program: Program) -> None:
        calls = program.calls()
        templates = program.book.templates
        self.num_inputs, self.num_aux = program.num_inputs, program.num_aux
        members_of: dict[tuple[int, int], list[int]] = defaultdict(list)
        for c, (level, t) in enumerate(zip(_levels(program, calls), calls.template)):
            members_of[(int(level), int(t))].append(c)
        self.groups = []
        for (_, t), members in sorted(members_of.items()):
            template = templates[t]
            members = np.asarray(members)
            refs = np.stack([calls.ext_of(c) for c in members]) if template.num_slots else None
            data = {name: np.stack([program.data[c][name] for c in members])
                    for name in template.data_shapes}
            self.groups.append(_Group(
                template, members, refs, data,
                calls.aux_base[members][None, :] + np.arange(template.num_aux)[:, None],
                1 + calls.input_base[members][None, :]
                + np.arange(template.num_inputs)[:, None]))

    def run(self, values: np.ndarray | None = None, *, reference: bool = False,
            check: bool = False) -> Witness:
        """The witness: with ``values``, the plan's data are indices into it; without, the
        data recorded are the values. ``reference`` evaluates with the gadgets' own code
        instead of the tapes, ``check`` (with it) every row as it is made (slow: tests)."""
        witness = Witness(np.zeros((self.num_inputs, 4), dtype=np.uint64),
                          np.zeros((self.num_aux, 4), dtype=np.uint64),
                          np.zeros(self.num_aux, dtype=bool))
        witness.inputs[0, 0] = 1
        for group in self.groups:
            template, batch = group.template, len(group.members)
            slots = [_gather(witness, group.refs[:, s], bit)
                     for s, bit in enumerate(template.slot_is_bit)]
            data = {name: stacked if values is None
                    else values[stacked.astype(np.int64)].astype(stacked.dtype)
                    for name, stacked in group.data.items()} or None
            no_bits = np.zeros(template.num_inputs, dtype=bool)
            if reference or check:
                result = template.evaluate(slots, data, batch, check)
                _scatter_columns(witness.aux, group.aux_rows, result.aux, template.aux_is_bit)
                _scatter_columns(witness.inputs, group.input_rows, result.inputs, no_bits)
            else:
                (bits, nums), inputs = template.tape.run(slots, data, batch)
                _scatter(witness.aux, group.aux_rows, bits, nums, template.aux_is_bit)
                _scatter(witness.inputs, group.input_rows, None, inputs, no_bits)
            witness.aux_is_bit[group.aux_rows.reshape(-1)] = np.repeat(template.aux_is_bit,
                                                                       batch)
        return witness


def evaluate(program: Program, *, reference: bool = False, check: bool = False) -> Witness:
    """The witness of a program recorded with ``keep_data`` (its calls' private data)."""
    return WitnessPlan(program).run(reference=reference, check=check)
