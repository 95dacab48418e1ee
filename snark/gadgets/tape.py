"""A block's witness as a tape of vectorised steps, scheduled by dependency depth.

While a block is recorded, every allocation names how its value follows from earlier ones
(its *op*: a bit of private data, a xor of two bits, a bit of a sum, a linear combination, a
square…). ``compile_tape`` gives each op its depth (one more than its deepest operand) and
groups the ops of one depth by kind; ``Tape.run`` then evaluates a whole batch of calls with
one numpy operation per group — over the group's ops and the batch at once — instead of one
Python call per variable per call. A SHA-256 block (27 k variables) is some six hundred
levels; its 32 xors of a round are one operation.

Registers hold a template's *sources*: its external slots, ONE, its own variables and its
own inputs, in that order. Bits are uint8 0/1, numbers ints mod r in object arrays; ONE is
both. Ops on literals (a bit and whether it is negated; a constant is ONE, negated for 0)
apply the negation as a xor.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from snark.fields import fr_to_limbs
from snark.gadgets.system import EXTERNAL, ONE, R, input_index, is_local_input

BIT_OPS = ("xor", "and", "andnot", "nor")


@dataclass
class Step:
    """The ops of one kind at one depth, as index arrays."""

    kind: str
    dest: np.ndarray
    args: dict = field(default_factory=dict)
    depth: int = 0


@dataclass
class Tape:
    num_slots: int
    num_aux: int
    num_inputs: int
    num_sums: int
    is_num: np.ndarray            # per register: holds a number (else a bit)
    steps: list[Step]

    @property
    def one(self) -> int:
        return self.num_slots

    def run(self, slot_values: list[np.ndarray], data: dict | None,
            batch: int) -> tuple[np.ndarray, np.ndarray]:
        """(aux, inputs) values, each ``(registers, batch)``: bits as uint8 (aux where a
        bit), numbers as objects."""
        registers = self.num_slots + 1 + self.num_aux + self.num_inputs
        bits = np.zeros((registers, batch), dtype=np.uint8)
        nums = np.zeros((registers, batch), dtype=object) if self.is_num.any() else None
        for s, value in enumerate(slot_values):
            if self.is_num[s]:
                nums[s] = value
            else:
                bits[s] = value
        bits[self.one] = 1
        if nums is not None:
            nums[self.one] = 1
        sums = np.zeros((self.num_sums, batch), dtype=np.uint64)
        flat = {name: np.asarray(v).reshape(batch, -1).T for name, v in (data or {}).items()}
        for step in self.steps:
            _STEPS[step.kind](step, bits, nums, sums, flat)
        start = self.num_slots + 1
        aux = slice(start, start + self.num_aux)
        inputs = slice(start + self.num_aux, registers)
        return ((bits[aux], None if nums is None else nums[aux]),
                None if nums is None else nums[inputs])


def _literal(bits: np.ndarray, keys: np.ndarray, negated: np.ndarray) -> np.ndarray:
    return bits[keys] ^ negated[:, None]


def _step_data_num(step, bits, nums, sums, flat):
    nums[step.dest] = flat[step.args["field"]][step.args["element"]]


def _step_data_bit(step, bits, nums, sums, flat):
    bits[step.dest] = flat[step.args["field"]][step.args["element"]].astype(np.uint8)


def _step_data_bits(step, bits, nums, sums, flat):
    values = flat[step.args["field"]][step.args["element"]].astype(np.int64)
    bits[step.dest] = ((values >> step.args["bit"][:, None]) & 1).astype(np.uint8)


def _step_numbit(step, bits, nums, sums, flat):
    sources, inverse = np.unique(step.args["src"], return_inverse=True)
    limbs = fr_to_limbs([int(v) for v in nums[sources].reshape(-1)])
    limbs = limbs.reshape(len(sources), -1, 4)            # (sources, batch, 4)
    bit = step.args["bit"]
    words = limbs[inverse, :, bit // 64]                  # (ops, batch)
    bits[step.dest] = ((words >> (bit % 64).astype(np.uint64)[:, None]) & 1).astype(np.uint8)


def _step_bitop(step, bits, nums, sums, flat):
    a, b = bits[step.args["a"]], bits[step.args["b"]]
    kind = step.kind
    if kind == "xor":
        out = a ^ b
    elif kind == "and":
        out = a & b
    elif kind == "andnot":
        out = a & (1 - b)
    else:
        out = (1 - a) & (1 - b)
    bits[step.dest] = out


def _step_ch_maj(step, bits, nums, sums, flat):
    a, b, c = (_literal(bits, step.args[k], step.args[k + "_neg"]) for k in "abc")
    if step.kind == "ch":
        bits[step.dest] = (a & b) ^ ((1 - a) & c)
    else:
        bits[step.dest] = (a & b) ^ (a & c) ^ (b & c)


def _step_sum(step, bits, nums, sums, flat):
    terms = _literal(bits, step.args["key"], step.args["neg"]).astype(np.uint64)
    terms <<= step.args["shift"][:, None]
    sums[step.dest] = np.add.reduceat(terms, step.args["starts"], axis=0)


def _step_sumbit(step, bits, nums, sums, flat):
    bits[step.dest] = ((sums[step.args["sum"]] >> step.args["bit"][:, None])
                       & np.uint64(1)).astype(np.uint8)


def _step_lin(step, bits, nums, sums, flat):
    keys = step.args["key"]
    values = np.empty((len(keys), bits.shape[1]), dtype=object)
    from_num = step.args["from_num"]
    values[from_num] = nums[keys[from_num]]
    values[~from_num] = bits[keys[~from_num]].astype(object)
    values *= step.args["coeff"][:, None]
    nums[step.dest] = np.add.reduceat(values, step.args["starts"], axis=0) % R


def _step_field(step, bits, nums, sums, flat):
    a = nums[step.args["a"]]
    kind = step.kind
    if kind == "square":
        out = a * a
    elif kind == "sqsum":
        shifted = a + step.args["k"][:, None]
        out = shifted * shifted
    elif kind == "mulsum":
        out = (nums[step.args["b"]] + step.args["pre"][:, None]) * a + step.args["post"][:, None]
    elif kind == "scale":  # a number where a bit holds, else 0
        cond = _literal(bits, step.args["cond"], step.args["cond_neg"]).astype(bool)
        out = np.where(cond, a, 0)
    else:  # select
        cond = _literal(bits, step.args["cond"], step.args["cond_neg"]).astype(bool)
        out = np.where(cond, a, nums[step.args["b"]])
    nums[step.dest] = out % R if kind != "select" else out


_STEPS = {"data_num": _step_data_num, "data_bit": _step_data_bit,
          "data_bits": _step_data_bits, "numbit": _step_numbit, "sum": _step_sum,
          "sumbit": _step_sumbit, "lin": _step_lin, "ch": _step_ch_maj, "maj": _step_ch_maj,
          **{k: _step_bitop for k in BIT_OPS},
          **{k: _step_field for k in ("square", "sqsum", "mulsum", "select", "scale")}}


def compile_tape(aux_ops: list[tuple], aux_is_bit: list[bool], input_ops: list[tuple],
                 sums: list[list], slot_is_bit: tuple[bool, ...]) -> Tape:
    """A template's ops as depth-ordered steps (see the module docstring)."""
    slots, n_aux = len(slot_is_bit), len(aux_ops)

    def reg(key: int) -> int:
        if key == ONE:
            return slots
        if key >= EXTERNAL:
            return key - EXTERNAL
        if is_local_input(key):
            return slots + 1 + n_aux + input_index(key)
        return slots + 1 + key

    registers = slots + 1 + n_aux + len(input_ops)
    is_num = np.zeros(registers, dtype=bool)
    is_num[:slots] = ~np.asarray(slot_is_bit, dtype=bool)
    is_num[slots] = True
    is_num[slots + 1:slots + 1 + n_aux] = ~np.asarray(aux_is_bit, dtype=bool)
    is_num[slots + 1 + n_aux:] = True
    depth = np.zeros(registers, dtype=np.int64)
    sum_depth: dict[int, int] = {}
    groups: dict[tuple, list] = defaultdict(list)

    def place(dest: int, op: tuple) -> None:
        kind = op[0]
        if kind == "data":  # one field per step, split by what is read
            kind = ("data_bits" if op[3] is not None else
                    "data_num" if is_num[dest] else "data_bit")
            key = (1, kind, op[1])
        else:
            if kind == "sumbit" and op[1] not in sum_depth:
                terms = sums[op[1]]
                sum_depth[op[1]] = 1 + max(depth[reg(k)] for (k, _), _ in terms)
                groups[(sum_depth[op[1]], "sum")].append((op[1], terms))
            operand = (sum_depth[op[1]] if kind == "sumbit"
                       else max((depth[reg(k)] for k in _operands(op)), default=0))
            key = (int(operand) + 1, kind)
        depth[dest] = key[0]
        groups[key].append((dest, op))

    for j, op in enumerate(aux_ops):
        if op is None:
            raise ValueError(f"variable {j} of a block has no witness op")
        place(slots + 1 + j, op)
    for i, op in enumerate(input_ops):
        place(slots + 1 + n_aux + i, op)

    steps = []
    for key, members in sorted(groups.items(), key=lambda kv: kv[0][0]):
        step = _build_step(key[1], members, reg, is_num)
        step.depth = key[0]
        steps.append(step)
    return Tape(slots, n_aux, len(input_ops), len(sums), is_num, steps)


def _operands(op: tuple) -> list[int]:
    """The keys an op reads (their depths bound its own)."""
    kind = op[0]
    if kind == "lin":
        return list(op[1])
    if kind in ("ch", "maj"):
        return [k for k, _ in op[1:]]
    if kind == "select":
        return [op[1][0], op[2], op[3]]
    if kind == "scale":
        return [op[1][0], op[2]]
    if kind in ("numbit", "square", "sqsum"):
        return [op[1]]
    return [op[1], op[2]]  # bit ops, mulsum


def _ints(values) -> np.ndarray:
    return np.asarray(list(values), dtype=np.int64)


def _objects(values) -> np.ndarray:
    ints = [int(v) % R for v in values]
    out = np.empty(len(ints), dtype=object)
    out[:] = ints
    return out


def _build_step(kind: str, members: list, reg, is_num: np.ndarray) -> Step:
    dest = _ints(m[0] for m in members)
    ops = [m[1] for m in members]
    if kind.startswith("data"):
        return Step(kind, dest, {"field": ops[0][1], "element": _ints(op[2] for op in ops),
                                 "bit": _ints(op[3] or 0 for op in ops)})
    if kind == "numbit":
        return Step(kind, dest, {"src": _ints(reg(op[1]) for op in ops),
                                 "bit": _ints(op[2] for op in ops)})
    if kind in BIT_OPS:
        return Step(kind, dest, {"a": _ints(reg(op[1]) for op in ops),
                                 "b": _ints(reg(op[2]) for op in ops)})
    if kind in ("ch", "maj"):
        args = {}
        for position, name in enumerate("abc"):
            args[name] = _ints(reg(op[1 + position][0]) for op in ops)
            args[name + "_neg"] = np.asarray([op[1 + position][1] for op in ops], np.uint8)
        return Step(kind, dest, args)
    if kind == "sum":
        terms = [t for _, ts in members for t in ts]
        lengths = [len(ts) for _, ts in members]
        return Step(kind, dest, {"key": _ints(reg(k) for (k, _), _ in terms),
                                 "neg": np.asarray([n for (_, n), _ in terms], np.uint8),
                                 "shift": np.asarray([s for _, s in terms], np.uint64),
                                 "starts": _ints(np.concatenate([[0], np.cumsum(lengths)[:-1]]))})
    if kind == "sumbit":
        return Step(kind, dest, {"sum": _ints(op[1] for op in ops),
                                 "bit": np.asarray([op[2] for op in ops], np.uint64)})
    if kind == "lin":
        keys = [reg(k) for op in ops for k in op[1]]
        coeffs = [c for op in ops for c in op[1].values()]
        lengths = [len(op[1]) for op in ops]
        return Step(kind, dest, {"key": _ints(keys), "coeff": _objects(coeffs),
                                 "from_num": is_num[_ints(keys)],
                                 "starts": _ints(np.concatenate([[0], np.cumsum(lengths)[:-1]]))})
    if kind == "square":
        return Step(kind, dest, {"a": _ints(reg(op[1]) for op in ops)})
    if kind == "sqsum":
        return Step(kind, dest, {"a": _ints(reg(op[1]) for op in ops),
                                 "k": _objects(op[2] for op in ops)})
    if kind == "mulsum":
        return Step(kind, dest, {"a": _ints(reg(op[1]) for op in ops),
                                 "b": _ints(reg(op[2]) for op in ops),
                                 "pre": _objects(op[3] or 0 for op in ops),
                                 "post": _objects(op[4] or 0 for op in ops)})
    if kind == "scale":
        return Step(kind, dest, {"cond": _ints(reg(op[1][0]) for op in ops),
                                 "cond_neg": np.asarray([op[1][1] for op in ops], np.uint8),
                                 "a": _ints(reg(op[2]) for op in ops)})
    if kind == "select":
        return Step(kind, dest, {"cond": _ints(reg(op[1][0]) for op in ops),
                                 "cond_neg": np.asarray([op[1][1] for op in ops], np.uint8),
                                 "a": _ints(reg(op[2]) for op in ops),
                                 "b": _ints(reg(op[3]) for op in ops)})
    raise ValueError(f"unknown witness op {kind!r}")
