"""neptune's Poseidon circuit (``neptune::circuit::poseidon_hash``), row for row.

Filecoin hashes its trees and columns with neptune 11's *optimised* circuit: the round
constants are the compressed ones, the first half's last full round multiplies by the
pre-sparse matrix and every partial round by a sparse one (a dense first row ``w_hat``, the
first column ``v_rest`` below it, ones on the diagonal), so a partial round is one S-box and
no constraint for its linear layer. Elements between S-boxes are linear combinations
(``Num``); an S-box first allocates its input (one row), then ``x²``, ``x⁴`` and
``x⁴·x + k`` (three rows); the first round adds its pre-round key inside ``(x + k)²``, and
the domain tag's S-box is folded into a constant. 31·t + 4·R_P − 2 rows in all (311, 377,
505, 598 for arity 2, 4, 8, 11).
"""

from __future__ import annotations

from collections.abc import Sequence

from snark.gadgets.blocks import block
from snark.gadgets.num import AllocatedNum, Num, alloc_num, square
from snark.gadgets.system import ONE, R, add_term
from snark.poseidon.neptune import PoseidonConstants, SparseMatrix


def _allocated(cs, element: AllocatedNum | Num) -> AllocatedNum:
    """neptune's ``ensure_allocated(enforce = true)``: a Num becomes a variable, one row."""
    if isinstance(element, AllocatedNum):
        return element
    out = alloc_num(cs, element.value, ("lin", element.combination()))
    if cs.records:
        cs.enforce(lambda: (element.combination(), {ONE: 1}, {out.key: 1}))
    return out


def _mul_sum(cs, a: AllocatedNum, b: AllocatedNum, pre: int | None,
             post: int | None) -> AllocatedNum:
    """``(b + pre)·a + post``: ``(b + pre·1)·a = res − post·1``."""
    value = (b.value + (pre or 0)) * a.value + (post or 0)
    out = alloc_num(cs, value, ("mulsum", a.key, b.key, pre, post))
    if cs.records:
        def rows():
            lhs = {b.key: 1}
            if pre is not None:
                add_term(lhs, ONE, pre)
            rhs = {out.key: 1}
            if post is not None:
                add_term(rhs, ONE, R - post)
            return lhs, {a.key: 1}, rhs
        cs.enforce(rows)
    return out


def _square_sum(cs, to_add: int, num: AllocatedNum) -> AllocatedNum:
    out = alloc_num(cs, (num.value + to_add) ** 2, ("sqsum", num.key, to_add))
    if cs.records:
        cs.enforce(lambda: (add_term({num.key: 1}, ONE, to_add),
                            add_term({num.key: 1}, ONE, to_add), {out.key: 1}))
    return out


def _sbox(cs, element, post: int | None) -> AllocatedNum:
    x = _allocated(cs, element)
    x4 = square(cs, square(cs, x))
    return _mul_sum(cs, x4, x, None, post)


def _sbox_pre_add(cs, element, pre: int, post: int) -> AllocatedNum:
    x = _allocated(cs, element)
    x4 = square(cs, _square_sum(cs, pre, x))
    return _mul_sum(cs, x4, x, pre, post)


def _as_num(element) -> Num:
    return Num.of(element) if isinstance(element, AllocatedNum) else element


def _scalar_product(elements: list, scalars: Sequence[int]) -> Num:
    acc = Num.zero()
    for element, scalar in zip(elements, scalars):
        acc = acc.add(_as_num(element).scale(scalar))
    return acc


class _Permutation:
    """The state of one hash: elements, the next compressed constant, the round."""

    def __init__(self, constants: PoseidonConstants, elements: list) -> None:
        self.c = constants
        self.elements = elements
        self.offset = 0
        self.round = 0

    def _keys(self, present: bool) -> list[int] | None:
        if not present:
            return None
        keys = list(self.c.compressed_round_constants[self.offset:self.offset + self.c.width])
        self.offset += self.c.width
        return keys

    def full_round(self, cs, first: bool, last: bool) -> None:
        pre = self._keys(first)
        post = self._keys(first or not last)
        for i, element in enumerate(self.elements):
            if first and i == 0:
                tag = (element.value + pre[0]) % R
                self.elements[0] = Num.constant(pow(tag, 5, R) + post[0])
            elif first:
                self.elements[i] = _sbox_pre_add(cs, element, pre[i], post[i])
            else:
                self.elements[i] = _sbox(cs, element, post[i] if post else None)
        self._linear_layer()

    def partial_round(self, cs) -> None:
        key = self.c.compressed_round_constants[self.offset]
        self.offset += 1
        self.elements[0] = _sbox(cs, self.elements[0], key)
        self._linear_layer()

    def _linear_layer(self) -> None:
        half = self.c.full_rounds // 2
        if self.round == half - 1:
            self._dense(self.c.pre_sparse_matrix)
        elif half - 1 < self.round < half + self.c.partial_rounds:
            self._sparse(self.c.sparse_matrices[self.round - half])
        else:
            self._dense(self.c.mds_matrices.m)
        self.round += 1

    def _dense(self, matrix: Sequence[Sequence[int]]) -> None:
        t = self.c.width
        self.elements = [_scalar_product(self.elements, [matrix[i][j] for i in range(t)])
                         for j in range(t)]

    def _sparse(self, matrix: SparseMatrix) -> None:
        first = _as_num(self.elements[0])
        self.elements = [_scalar_product(self.elements, matrix.w_hat)] + [
            _as_num(self.elements[j]).add(first.scale(matrix.v_rest[j - 1]))
            for j in range(1, self.c.width)]


@block
def poseidon_hash(cs, preimage: list[AllocatedNum], *, constants: PoseidonConstants
                  ) -> AllocatedNum:
    """The hash of ``arity`` numbers (the MerkleTree domain tag in element 0), output
    element 1, allocated."""
    assert len(preimage) == constants.width - 1
    state = _Permutation(constants, [Num.constant(constants.domain_tag), *preimage])
    state.full_round(cs, True, False)
    for _ in range(1, constants.full_rounds // 2):
        state.full_round(cs, False, False)
    for _ in range(constants.partial_rounds):
        state.partial_round(cs)
    for _ in range(constants.full_rounds // 2 - 1):
        state.full_round(cs, False, False)
    state.full_round(cs, False, True)
    return _allocated(cs, state.elements[1])
