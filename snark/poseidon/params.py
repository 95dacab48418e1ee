"""Poseidon instances over BLS12-381 Fr: the reference ``poseidonperm_x5_255_3`` (the stand-in
porep type's) and the generic derivation ``neptune.py`` uses for Filecoin's."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from snark.fields import FR_MODULUS
from snark.poseidon.grain import FIELD_PRIME, SBOX_POWER, GrainLFSR, cauchy_mds, round_constants
from snark.poseidon.linalg import Matrix


@dataclass(frozen=True)
class PoseidonParams:
    """A Poseidon instance: width t, S-box x^alpha, rounds, per-round constants, MDS."""

    modulus: int
    t: int
    alpha: int
    full_rounds: int
    partial_rounds: int
    #: One row of t constants per round, in round order.
    round_constants: Matrix
    mds: Matrix

    @property
    def half_full_rounds(self) -> int:
        return self.full_rounds // 2

    @property
    def rounds(self) -> int:
        return self.full_rounds + self.partial_rounds


def derive_params(modulus: int, field_bits: int, t: int, alpha: int, full_rounds: int,
                  partial_rounds: int, *, sbox_tag: int = SBOX_POWER,
                  mds: Matrix | None = None) -> PoseidonParams:
    """Regenerate an instance's constants with the reference Grain procedure.

    ``sbox_tag`` is the S-box field of the Grain seed; ``mds`` replaces the Cauchy matrix the
    reference draws from the same LFSR after the round constants (an instance that fixes its
    matrix otherwise, as neptune does, passes it here)."""
    lfsr = GrainLFSR(FIELD_PRIME, sbox_tag, field_bits, t, full_rounds, partial_rounds)
    rounds = full_rounds + partial_rounds
    flat = round_constants(lfsr, rounds * t, field_bits, modulus)
    mds = mds or cauchy_mds(lfsr, t, field_bits, modulus)
    return PoseidonParams(
        modulus=modulus, t=t, alpha=alpha, full_rounds=full_rounds,
        partial_rounds=partial_rounds,
        round_constants=tuple(tuple(flat[r * t:(r + 1) * t]) for r in range(rounds)),
        mds=mds)


@lru_cache(maxsize=1)
def poseidon_x5_255_3() -> PoseidonParams:
    """The reference instance: t = 3, x^5, R_F = 8, R_P = 57, n = 255 (derived once)."""
    return derive_params(FR_MODULUS, 255, t=3, alpha=5, full_rounds=8, partial_rounds=57)
