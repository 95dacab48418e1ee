"""snarkjs's roots of unity in terms of this project's, so one set of NTT tables serves both.

snarkjs (ffjavascript) takes its 2^32-th root of unity from the smallest quadratic
non-residue, 5: w = 5^((r−1)/2^32); this project (like arkworks) from the generator 7.
Both generate the same cyclic group of order 2^32, so w = ω^m for one odd m, and for every
size the snarkjs root of order 2^k is this project's to the same power m. A zkey's
constraint c sits at w_n^c = ω_n^(m·c mod n) and its H point j at the odd point
w_2n^(2j+1) = ω_2n^(m·(2j+1) mod 2n): ``snark.snarkjs.zkey`` moves both to this project's
order once, at import.
"""

from __future__ import annotations

import functools

from snark.fields import FR_MODULUS, FR_ROOT_OF_UNITY, FR_TWO_ADICITY

R = FR_MODULUS
SNARKJS_NON_RESIDUE = 5
SNARKJS_ROOT_OF_UNITY = pow(SNARKJS_NON_RESIDUE, (R - 1) >> FR_TWO_ADICITY, R)


@functools.cache
def snarkjs_root_exponent() -> int:
    """m with ω^m = w (both of order 2^32): a discrete log, bit by bit (Pohlig–Hellman)."""
    omega_inv = pow(FR_ROOT_OF_UNITY, -1, R)
    m = 0
    for bit in range(FR_TWO_ADICITY):
        residue = SNARKJS_ROOT_OF_UNITY * pow(omega_inv, m, R) % R
        if pow(residue, 1 << (FR_TWO_ADICITY - 1 - bit), R) != 1:
            m |= 1 << bit
    if pow(FR_ROOT_OF_UNITY, m, R) != SNARKJS_ROOT_OF_UNITY:
        raise ArithmeticError("snarkjs's root of unity is not a power of this project's")
    return m


def constraint_positions(constraints, n: int):
    """This project's domain index of each snarkjs constraint index (numpy int64 array)."""
    return (snarkjs_root_exponent() % n) * constraints % n


def odd_point_positions(indices, n: int):
    """This project's odd-point index i (point ω_2n^(2i+1)) of each snarkjs H index j."""
    m = snarkjs_root_exponent() % (2 * n)
    return (m * (2 * indices + 1) % (2 * n) - 1) // 2
