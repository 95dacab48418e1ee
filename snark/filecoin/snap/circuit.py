"""``EmptySectorUpdateCircuit`` (one SnapDeals partition), synthesised as rust-fil-proofs does.

The call order is ``storage-proofs-update/src/circuit.rs`` ``synthesize`` with the gadgets
of its ``gadgets.rs`` (``apex_por``, ``gen_challenge_bits``, ``get_challenge_high_bits``,
``label_r_new``) and storage-proofs' ``por_no_challenge_input`` and ``select``:

    k_and_h_select (input), its bits, the partition packed · comm_r_old, comm_d_new,
    comm_r_new (each alloc then input) · phi = H_gen(comm_d_new, comm_r_old) · comm_c,
    root_r_old, root_r_new, apex leaves, partition path · both comm_r = Poseidon2(comm_c,
    root) · the apex tree (SHA-256 pairs) and its path to comm_d_new · per digest: its index,
    H_gen(comm_r_new, index), its 255 bits
    per challenge: the high bits, rho, the old and data leaves, the new label, the old and
    the new replica's paths (siblings, then the levels), the apex leaf selected, the data
    path to it

The paths' index bits are the challenge's bits (the digest's, then the partition's), so a
partition's private data hold no index: what a shape's ``witness_plan`` reads is ``SnapData``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache

import numpy as np

from snark.filecoin.circuit.insertion import insert
from snark.filecoin.circuit.por import enforce_equal, sha256_nodes
from snark.filecoin.circuit.poseidon import poseidon_hash
from snark.filecoin.circuit.stacked import alloc_column, alloc_value, make_input
from snark.filecoin.snap.randomness import (challenges_per_digest, digests_per_partition,
                                            gen_randomness_constants)
from snark.filecoin.snap.shape import SnapShape
from snark.gadgets.assembly import Fingerprint, fingerprint, to_r1cs
from snark.gadgets.blocks import block
from snark.gadgets.boolean import Boolean, alloc_bit, is_bit
from snark.gadgets.evaluation import Witness, WitnessPlan
from snark.gadgets.num import NUM_BITS, AllocatedNum, Num, alloc_num, bits_of, pack_bits, pick
from snark.gadgets.program import Program, TemplateBook
from snark.gadgets.system import ONE, R, add_term
from snark.poseidon.neptune import neptune_constants
from snark.r1cs import R1CS


@dataclass
class SnapData:
    """The private values of one partition (numbers as ints mod r in object arrays; per
    challenge on the leading axis of the last six). Paths are siblings only, level by
    level, leaf level first."""

    k_and_h_select: np.ndarray
    comm_r_old: np.ndarray
    comm_d_new: np.ndarray
    comm_r_new: np.ndarray
    comm_c: np.ndarray
    root_r_old: np.ndarray
    root_r_new: np.ndarray
    apex_leaves: np.ndarray       # (apex_leaves,)
    partition_path: np.ndarray    # (partition_bits,)
    leaf_r_old: np.ndarray        # (K,)
    leaf_d_new: np.ndarray        # (K,)
    path_r_old: np.ndarray        # (K, Σ (arity − 1))
    path_r_new: np.ndarray        # (K, Σ (arity − 1))
    path_d: np.ndarray            # (K, below_apex)

    @classmethod
    def blank(cls, shape: SnapShape) -> "SnapData":
        k, siblings = shape.challenges, sum(a - 1 for a in shape.tree_arities())

        def zeros(*dims: int) -> np.ndarray:
            return np.zeros(dims, dtype=object)
        scalars = {f.name: zeros() for f in fields(cls)[:7]}
        return cls(**scalars, apex_leaves=zeros(shape.apex_leaves),
                   partition_path=zeros(shape.partition_bits), leaf_r_old=zeros(k),
                   leaf_d_new=zeros(k), path_r_old=zeros(k, siblings),
                   path_r_new=zeros(k, siblings), path_d=zeros(k, shape.below_apex))

    def flatten(self) -> np.ndarray:
        return np.concatenate([np.asarray(getattr(self, f.name), dtype=object).reshape(-1)
                               for f in fields(self)])

    @classmethod
    def symbolic(cls, shape: SnapShape) -> "SnapData":
        """Blank data with every value its position in ``flatten``."""
        blank, start, out = cls.blank(shape), 0, {}
        for f in fields(cls):
            value = getattr(blank, f.name)
            out[f.name] = np.arange(start, start + value.size).reshape(value.shape).astype(object)
            start += value.size
        return cls(**out)


# -- blocks ---------------------------------------------------------------------------------
def _decomposition_row(cs, bits: list, num: AllocatedNum) -> None:
    """``(Σ 2^i·b_i) · 1 = num`` (the bit decompositions of circuit.rs and gadgets.rs)."""
    if cs.records:
        def rows():
            lc: dict = {}
            for i, bit in enumerate(bits):
                add_term(lc, bit.key, pow(2, i, R))
            return lc, {ONE: 1}, {num.key: 1}
        cs.enforce(rows)


def _alloc_bits(cs, num: AllocatedNum, count: int) -> list:
    return [alloc_bit(cs, row, ("numbit", num.key, i))
            for i, row in enumerate(bits_of(num.value, count))]


@block
def k_and_h_select_bits(cs, num: AllocatedNum, *, count: int) -> list[Boolean]:
    bits = _alloc_bits(cs, num, count)
    _decomposition_row(cs, bits, num)
    return [is_bit(bit) for bit in bits]


@block
def digest_bits(cs, num: AllocatedNum) -> list[Boolean]:
    """``allocated_num_to_allocated_bits``: 255 bits and their decomposition row."""
    bits = _alloc_bits(cs, num, NUM_BITS)
    _decomposition_row(cs, bits, num)
    return [is_bit(bit) for bit in bits]


@block
def pack(cs, bits: list[Boolean]) -> AllocatedNum:
    return pack_bits(cs, bits)


@block
def digest_index(cs, partition: AllocatedNum, *, per_partition: int, j: int) -> AllocatedNum:
    """``digest_index = k·digests_per_partition + j``."""
    lc = add_term({partition.key: per_partition % R}, ONE, j)
    out = alloc_num(cs, partition.value * per_partition + j, ("lin", dict(lc)))
    if cs.records:
        cs.enforce(lambda: (dict(lc), {ONE: 1}, {out.key: 1}))
    return out


@block
def challenge_high_bits(cs, c_bits: list[Boolean], h_select: list[Boolean], *,
                        hs: tuple[int, ...]) -> AllocatedNum:
    """``get_challenge_high_bits``: per h its top h bits packed, times its select bit;
    their sum."""
    scaled = []
    for h, select in zip(hs, h_select):
        high = pack_bits(cs, c_bits[len(c_bits) - h:])
        value = np.where(np.asarray(select.value, dtype=bool), high.value, 0)
        z = alloc_num(cs, value, ("scale", select.literal, high.key))
        if cs.records:
            cs.enforce(lambda high=high, select=select, z=z: (
                {high.key: 1}, select.lc(1), {z.key: 1}))
        scaled.append(z)
    total = Num.zero()
    for z in scaled:
        total = total.add(Num.of(z))
    out = alloc_num(cs, total.value, ("lin", total.combination()))
    if cs.records:
        cs.enforce(lambda: (total.combination(), {ONE: 1}, {out.key: 1}))
    return out


@block
def label_r_new(cs, old: AllocatedNum, data: AllocatedNum, rho: AllocatedNum) -> AllocatedNum:
    """``label_d_new · rho = p``; ``(old + p) · 1 = new``."""
    product = alloc_num(cs, data.value * rho.value, ("mulsum", data.key, rho.key, None, None))
    if cs.records:
        cs.enforce(lambda: ({data.key: 1}, {rho.key: 1}, {product.key: 1}))
    lc = add_term({old.key: 1}, product.key, 1)
    new = alloc_num(cs, old.value + product.value, ("lin", dict(lc)))
    if cs.records:
        cs.enforce(lambda: (dict(lc), {ONE: 1}, {new.key: 1}))
    return new


@block
def sha256_pair(cs, a: AllocatedNum, b: AllocatedNum) -> AllocatedNum:
    return sha256_nodes(cs, [a, b])


@block
def sha256_step(cs, current: AllocatedNum, bit: Boolean, sibling: AllocatedNum
                ) -> AllocatedNum:
    return sha256_nodes(cs, insert(cs, current, [bit], [sibling]))


@block
def poseidon_step(cs, current: AllocatedNum, bits: list[Boolean], siblings: list, *,
                  constants) -> AllocatedNum:
    return poseidon_hash(cs, insert(cs, current, bits, siblings), constants=constants)


@block
def select_leaf(cs, leaves: list[AllocatedNum], bits: list[Boolean]) -> AllocatedNum:
    """storage-proofs' ``insertion::select``: most significant bit first."""
    state, half = list(leaves), len(leaves) // 2
    for bit in reversed(bits):
        state = [pick(cs, bit, state[half + j], state[j]) for j in range(half)]
        half //= 2
    return state[0]


def _sha_path(cs, leaf, bits, siblings, root) -> None:
    current = leaf
    for bit, sibling in zip(bits, siblings):
        current = sha256_step(cs, current, bit, sibling)
    enforce_equal(cs, current, root)


def _tree_r_path(cs, leaf, bits, siblings, root, arities) -> None:
    current, b, s = leaf, 0, 0
    for arity in arities:
        width = arity.bit_length() - 1
        current = poseidon_step(cs, current, bits[b:b + width], siblings[s:s + arity - 1],
                                constants=neptune_constants(arity))
        b, s = b + width, s + arity - 1
    enforce_equal(cs, current, root)


def _number(cs, value) -> AllocatedNum:
    return alloc_value(cs, data={"value": np.asarray(value, dtype=object)})


def _numbers(cs, values: np.ndarray) -> list[AllocatedNum]:
    if values.size == 0:
        return []
    return alloc_column(cs, data={"rows": np.asarray(values, dtype=object)})


def apex_por(cs, apex: list[AllocatedNum], partition_bits: list[Boolean],
             partition_path: list[AllocatedNum], comm_d: AllocatedNum) -> None:
    """The apex tree (SHA-256 pairs, row by row) and its root's path to comm_d."""
    row = apex
    while len(row) > 1:
        row = [sha256_pair(cs, row[i], row[i + 1]) for i in range(0, len(row), 2)]
    _sha_path(cs, row[0], partition_bits, partition_path, comm_d)


def gen_challenge_bits(cs, shape: SnapShape, comm_r_new: AllocatedNum,
                       partition: AllocatedNum) -> list[list[Boolean]]:
    """Each challenge's random bits, from ``digests_per_partition`` digests."""
    per, random_bits = challenges_per_digest(shape), shape.random_bits
    generated: list[list[Boolean]] = []
    for j in range(digests_per_partition(shape)):
        index = digest_index(cs, partition, per_partition=digests_per_partition(shape), j=j)
        bits = digest_bits(cs, poseidon_hash(cs, [comm_r_new, index],
                                             constants=gen_randomness_constants()))
        take = min(per, shape.challenges - len(generated))
        generated += [bits[i * random_bits:(i + 1) * random_bits] for i in range(take)]
    return generated


def synthesize(cs, shape: SnapShape, data: SnapData) -> None:
    gen, pair = gen_randomness_constants(), neptune_constants(2)
    k_and_h_select = _number(cs, data.k_and_h_select)
    make_input(cs, k_and_h_select)
    selector_bits = k_and_h_select_bits(cs, k_and_h_select,
                                        count=shape.partition_bits + len(shape.hs))
    partition_bits = selector_bits[:shape.partition_bits]
    h_select = selector_bits[shape.partition_bits:]
    partition = pack(cs, partition_bits)
    commitments = []
    for value in (data.comm_r_old, data.comm_d_new, data.comm_r_new):
        commitments.append(_number(cs, value))
        make_input(cs, commitments[-1])
    comm_r_old, comm_d_new, comm_r_new = commitments
    phi = poseidon_hash(cs, [comm_d_new, comm_r_old], constants=gen)
    comm_c, root_r_old, root_r_new = (_number(cs, v) for v in
                                      (data.comm_c, data.root_r_old, data.root_r_new))
    apex = _numbers(cs, data.apex_leaves)
    partition_path = _numbers(cs, data.partition_path)
    enforce_equal(cs, poseidon_hash(cs, [comm_c, root_r_old], constants=pair), comm_r_old)
    enforce_equal(cs, poseidon_hash(cs, [comm_c, root_r_new], constants=pair), comm_r_new)
    apex_por(cs, apex, partition_bits, partition_path, comm_d_new)
    generated = gen_challenge_bits(cs, shape, comm_r_new, partition)

    arities = shape.tree_arities()
    below = shape.below_apex
    for i, random in enumerate(generated):
        c_bits = random + partition_bits
        c_high = challenge_high_bits(cs, c_bits, h_select, hs=shape.hs)
        rho = poseidon_hash(cs, [phi, c_high], constants=gen)
        leaf_r_old = _number(cs, data.leaf_r_old[i])
        leaf_d_new = _number(cs, data.leaf_d_new[i])
        leaf_r_new = label_r_new(cs, leaf_r_old, leaf_d_new, rho)
        _tree_r_path(cs, leaf_r_old, c_bits, _numbers(cs, data.path_r_old[i]), root_r_old,
                     arities)
        _tree_r_path(cs, leaf_r_new, c_bits, _numbers(cs, data.path_r_new[i]), root_r_new,
                     arities)
        apex_leaf = select_leaf(cs, apex, c_bits[below:below + shape.apex_bits])
        _sha_path(cs, leaf_d_new, c_bits[:below], _numbers(cs, data.path_d[i]), apex_leaf)


# -- the shape's program, fingerprint, R1CS and witness -------------------------------------
_BOOK = TemplateBook()


@lru_cache(maxsize=4)
def structure(shape: SnapShape) -> Program:
    program = Program(_BOOK)
    synthesize(program, shape, SnapData.blank(shape))
    return program


def circuit_fingerprint(shape: SnapShape) -> Fingerprint:
    return fingerprint(structure(shape))


@lru_cache(maxsize=2)
def circuit_r1cs(shape: SnapShape) -> R1CS:
    return to_r1cs(structure(shape))


@lru_cache(maxsize=4)
def witness_plan(shape: SnapShape) -> WitnessPlan:
    program = Program(_BOOK, keep_data=True)
    synthesize(program, shape, SnapData.symbolic(shape))
    return WitnessPlan(program)


def witness(shape: SnapShape, data: SnapData) -> Witness:
    return witness_plan(shape).run(data.flatten())
