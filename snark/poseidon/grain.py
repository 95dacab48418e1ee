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

from snark.poseidon.mds_security import is_secure_mds

#: Reference tags for the state's first two fields.
FIELD_PRIME = 1
SBOX_POWER = 0

_STATE_BITS = 80
_WARMUP_STEPS = 160
_TAPS = (62, 51, 38, 23, 13, 0)
#: New bits one shift of the whole state makes: bit 80 + m needs bits m + tap, all known
#: while m + 62 < 80.
_BLOCK = _STATE_BITS - _TAPS[0]
#: Outputs made per refill of the filtered stream.
_CHUNK = 64 * _BLOCK


class GrainLFSR:
    """The reference bit source: an 80-bit LFSR with the pairwise output filter.

    The state is an int whose bit j is the register's j-th oldest bit, so one shift makes
    18 new bits at once: a 255-bit instance's constants take ~0.9 M steps, seconds a bit at
    a time in Python, every process that hashes (the CLI's commands, a worker's first job)."""

    def __init__(self, field: int, sbox: int, n: int, t: int, full_rounds: int,
                 partial_rounds: int) -> None:
        fields = ((field, 2), (sbox, 4), (n, 12), (t, 12), (full_rounds, 10),
                  (partial_rounds, 10))
        seed = ""
        for value, width in fields:
            if not 0 <= value < 1 << width:
                raise ValueError(f"Grain seed field {value} does not fit in {width} bits")
            seed += format(value, f"0{width}b")
        seed = seed.ljust(_STATE_BITS, "1")
        self._state = int(seed[::-1], 2)  # the seed's first bit is the oldest: bit 0
        self._filtered = ""
        warmup = -(-_WARMUP_STEPS // _BLOCK) * _BLOCK
        self._unpaired = self._raw_bits(warmup)[_WARMUP_STEPS:]  # the stream's first outputs

    def _raw(self, count: int) -> int:
        """The next ``count`` (a multiple of 18) register outputs, the first at bit 0."""
        state, out, mask = self._state, 0, (1 << _BLOCK) - 1
        for block in range(count // _BLOCK):
            new = 0
            for tap in _TAPS:
                new ^= state >> tap
            new &= mask
            out |= new << (block * _BLOCK)
            state = (state >> _BLOCK) | (new << (_STATE_BITS - _BLOCK))
        self._state = state
        return out

    def _raw_bits(self, count: int) -> str:
        return format(self._raw(count), f"0{count}b")[::-1]  # oldest first

    def _refill(self) -> None:
        """Filter the next chunk: of each pair of outputs, the second if the first is 1."""
        raw = self._unpaired + self._raw_bits(_CHUNK)
        paired = len(raw) & ~1
        self._filtered += "".join(bit for keep, bit in zip(raw[:paired:2], raw[1:paired:2])
                                  if keep == "1")
        self._unpaired = raw[paired:]

    def integer(self, n: int) -> int:
        """The next ``n`` filtered bits as an integer, most significant bit first."""
        while len(self._filtered) < n:
            self._refill()
        value, self._filtered = int(self._filtered[:n], 2), self._filtered[n:]
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
