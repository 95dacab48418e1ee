"""The R1CS gadget for H(x, y): three constraints per S-box and nothing else.

Everything between S-boxes is affine, so the permutation is first run once *symbolically*
(cached): each S-box input becomes a fixed affine form over the symbols ``1, x, y`` and
the outputs of earlier S-boxes. Synthesis then only substitutes variables into those forms
and enforces ``x·x = x², x²·x² = x⁴, x⁴·x = x⁵`` per S-box. Round constants and the MDS
matrix never cost a constraint, and an S-box whose input is a constant (element 0 of the
first round, since the capacity starts at 0) is folded away: 80 S-boxes, 240 constraints.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from snark.poseidon.params import PoseidonParams, poseidon_x5_255_3
from snark.fields import FR_MODULUS
from snark.r1cs import LC, ONE, ConstraintSystem, as_lc

#: Symbols of the affine forms: 0 is the constant one, 1 and 2 the inputs x and y,
#: ``_FIRST_SBOX + k`` the output of the k-th non-constant S-box.
_CONSTANT, _X, _Y, _FIRST_SBOX = 0, 1, 2, 3

Form = dict[int, int]


@dataclass(frozen=True)
class HashTemplate:
    """The affine structure of H(x, y): S-box inputs in order and the output."""

    sbox_inputs: tuple[tuple[tuple[int, int], ...], ...]
    output: tuple[tuple[int, int], ...]

    @property
    def num_constraints(self) -> int:
        return 3 * len(self.sbox_inputs)


def _combine(forms: list[Form], coeffs: tuple[int, ...], p: int) -> Form:
    out: Form = {}
    for form, k in zip(forms, coeffs):
        for sym, c in form.items():
            out[sym] = (out.get(sym, 0) + k * c) % p
    return {sym: c for sym, c in out.items() if c}


@lru_cache(maxsize=4)
def hash_template(params: PoseidonParams | None = None) -> HashTemplate:
    """Run perm([0, x, y]) on affine forms, recording every S-box input."""
    params = params or poseidon_x5_255_3()
    p = params.modulus
    state: list[Form] = [{}, {_X: 1}, {_Y: 1}]
    sbox_inputs: list[tuple[tuple[int, int], ...]] = []
    first_partial = params.half_full_rounds
    last_partial = first_partial + params.partial_rounds
    for r, constants in enumerate(params.round_constants):
        state = [_combine([form, {_CONSTANT: 1}], (1, c), p) for form, c in zip(state, constants)]
        sboxed = params.t if not first_partial <= r < last_partial else 1
        for i in range(sboxed):
            if set(state[i]) <= {_CONSTANT}:
                state[i] = {_CONSTANT: pow(state[i].get(_CONSTANT, 0), params.alpha, p)}
            else:
                sbox_inputs.append(tuple(state[i].items()))
                state[i] = {_FIRST_SBOX + len(sbox_inputs) - 1: 1}
        state = [_combine(state, row, p) for row in params.mds]
    return HashTemplate(tuple(sbox_inputs), tuple(state[0].items()))


def _fifth_power(cs: ConstraintSystem, x: LC, value: int) -> tuple[int, int]:
    """Constrain a fresh variable to x⁵ (3 constraints); returns (variable, value)."""
    x2_val = value * value % FR_MODULUS
    x4_val = x2_val * x2_val % FR_MODULUS
    x5_val = x4_val * value % FR_MODULUS
    x2 = cs.alloc(x2_val)
    cs.enforce(x, x, x2, "poseidon x^2")
    x4 = cs.alloc(x4_val)
    cs.enforce(x2, x2, x4, "poseidon x^4")
    x5 = cs.alloc(x5_val)
    cs.enforce(x4, x, x5, "poseidon x^5")
    return x5, x5_val


def poseidon_hash2_gadget(cs: ConstraintSystem, x: int | LC, y: int | LC) -> LC:
    """Constrain H(x, y); returns it as a linear combination (3 terms, no extra constraint).

    ``x`` and ``y`` are variables or linear combinations. Use ``cs.eval`` for the value.
    """
    template = hash_template()
    symbols: list[LC] = [{ONE: 1}, as_lc(x), as_lc(y)]
    values: list[int] = [1, cs.eval(x), cs.eval(y)]

    def substitute(form: tuple[tuple[int, int], ...]) -> tuple[LC, int]:
        lc: LC = {}
        value = 0
        for sym, c in form:
            value += c * values[sym]
            for var, d in symbols[sym].items():
                lc[var] = (lc.get(var, 0) + c * d) % FR_MODULUS
        return lc, value % FR_MODULUS

    for form in template.sbox_inputs:
        lc, value = substitute(form)
        out, out_value = _fifth_power(cs, lc, value)
        symbols.append({out: 1})
        values.append(out_value)
    return substitute(template.output)[0]
