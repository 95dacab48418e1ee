"""Poseidon's round constants and MDS matrix, derived from the Grain LFSR.

The Poseidon paper fixes its constants as the output of a self-shrinking Grain-style LFSR
seeded with the instance's parameters, so anyone can regenerate them instead of trusting a
table. This module follows the reference procedure (``generate_parameters_grain``):

* the 80-bit state is the parameter description — field type (2 bits), S-box type (4),
  field size n (12), width t (12), R_F (10), R_P (10), most significant bit first — then
  thirty ones;
* the register runs 160 steps before any output;
* output bits are filtered in pairs: draw two bits, emit the second only if the first is 1;
* a field element is n emitted bits read most significant first; round constants reject
  candidates >= p, the MDS draws are reduced mod p;
* the MDS matrix is the Cauchy matrix ``1 / (x_i + y_j)`` of t values x and t values y
  drawn together: redrawn while any two of the 2t draws coincide, some x_i + y_j = 0, or
  the matrix fails the subspace-trail tests of ``mds_security``.
"""

from __future__ import annotations

from collections.abc import Iterator

from snark.poseidon.mds_security import is_secure_mds

#: Reference tags for the state's first two fields.
FIELD_PRIME = 1
SBOX_POWER = 0

_STATE_BITS = 80
_WARMUP_STEPS = 160
_TAPS = (62, 51, 38, 23, 13, 0)


class GrainLFSR:
    """The reference bit source: an 80-bit LFSR with the pairwise output filter."""

    def __init__(self, field: int, sbox: int, n: int, t: int, full_rounds: int,
                 partial_rounds: int) -> None:
        fields = ((field, 2), (sbox, 4), (n, 12), (t, 12), (full_rounds, 10),
                  (partial_rounds, 10))
        self._bits: list[int] = []
        for value, width in fields:
            if not 0 <= value < 1 << width:
                raise ValueError(f"Grain seed field {value} does not fit in {width} bits")
            self._bits.extend((value >> i) & 1 for i in reversed(range(width)))
        self._bits.extend([1] * (_STATE_BITS - len(self._bits)))
        self._head = 0
        for _ in range(_WARMUP_STEPS):
            self._step()

    def _step(self) -> int:
        """Shift once; the new bit is the XOR of the taps (relative to the oldest bit)."""
        bits, head = self._bits, self._head
        new = 0
        for tap in _TAPS:
            new ^= bits[head + tap]
        bits.append(new)
        self._head = head + 1
        return new

    def bits(self) -> Iterator[int]:
        """The filtered output stream."""
        while True:
            keep = self._step()
            bit = self._step()
            if keep:
                yield bit

    def integer(self, n: int) -> int:
        """The next ``n`` output bits as an integer, most significant bit first."""
        stream = self.bits()
        value = 0
        for _ in range(n):
            value = (value << 1) | next(stream)
        return value


def round_constants(lfsr: GrainLFSR, count: int, n: int, modulus: int) -> list[int]:
    """``count`` field elements by rejection sampling on n-bit integers."""
    out: list[int] = []
    while len(out) < count:
        candidate = lfsr.integer(n)
        if candidate < modulus:
            out.append(candidate)
    return out


def cauchy_mds(lfsr: GrainLFSR, t: int, n: int, modulus: int) -> tuple[tuple[int, ...], ...]:
    """The first valid and secure t×t Cauchy matrix from the next draws of ``lfsr``."""
    while True:
        draws = [lfsr.integer(n) % modulus for _ in range(2 * t)]
        while len(set(draws)) != len(draws):
            draws = [lfsr.integer(n) % modulus for _ in range(2 * t)]
        xs, ys = draws[:t], draws[t:]
        if not all((x + y) % modulus for x in xs for y in ys):
            continue
        matrix = tuple(tuple(pow(x + y, -1, modulus) for y in ys) for x in xs)
        if is_secure_mds(matrix, modulus):
            return matrix
