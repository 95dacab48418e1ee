"""Which curve a file's primes belong to: only BLS12-381 is proved here, others are named."""

from __future__ import annotations

from snark.fields import FQ_MODULUS, FR_MODULUS

#: Scalar-field primes snarkjs/circom files carry, by curve name (for error messages).
KNOWN_SCALAR_PRIMES = {
    FR_MODULUS: "bls12-381",
    0x30644E72E131A029B85045B68181585D2833E84879B9709143E1F593F0000001: "bn128",
}
KNOWN_BASE_PRIMES = {
    FQ_MODULUS: "bls12-381",
    0x30644E72E131A029B85045B68181585D97816A916871CA8D3C208C16D87CFD47: "bn128",
}


def curve_name(prime: int, known: dict[int, str]) -> str:
    return known.get(prime, f"an unknown curve (prime 0x{prime:x})")


def require_prime(prime: int, expected: int, known: dict[int, str]) -> str | None:
    """None if ``prime`` is ``expected``, else the problem in words."""
    if prime == expected:
        return None
    return (f"the file is for {curve_name(prime, known)}; only bls12-381 is supported "
            f"(circom --prime bls12381, snarkjs powersoftau new bls12-381)")
