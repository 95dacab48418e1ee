"""BLS12-381 field constants and the conversions between ints and limb arrays.

Representation rule (the one place it is stated): every array that crosses a module
boundary — witnesses, R1CS coefficients, proving-key bases, MSM scalars — holds values in
*standard* form (0 <= v < modulus) as little-endian uint64 limbs, shape ``(n, 4)`` for Fr
and ``(..., 6)`` for Fq. Montgomery form exists only inside a backend (the GPU converts on
upload) and in files that store it (snarkjs's); the helpers below that produce it are
for those and their tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

#: Scalar field modulus r (the group order).
FR_MODULUS = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
#: Base field modulus q.
FQ_MODULUS = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB  # noqa: E501

FR_LIMBS = 4
FQ_LIMBS = 6
FR_BYTES = 32
FQ_BYTES = 48

#: 2-adicity of r − 1 and the generator of the 2^32 roots of unity used for every domain.
FR_TWO_ADICITY = 32
FR_MULTIPLICATIVE_GENERATOR = 7
FR_ROOT_OF_UNITY = pow(FR_MULTIPLICATIVE_GENERATOR, (FR_MODULUS - 1) >> FR_TWO_ADICITY, FR_MODULUS)


def ints_to_limbs(values: Iterable[int], n_limbs: int) -> np.ndarray:
    """Pack non-negative ints (< 2^(64·n_limbs)) into a ``(n, n_limbs)`` uint64 array."""
    width = 8 * n_limbs
    values = values if isinstance(values, (list, tuple, np.ndarray)) else list(values)
    try:  # Python ints convert directly; skipping int() halves the cost of a witness
        raw = b"".join([v.to_bytes(width, "little") for v in values])
    except AttributeError:  # numpy integers
        raw = b"".join([int(v).to_bytes(width, "little") for v in values])
    return np.frombuffer(raw, dtype="<u8").reshape(-1, n_limbs).astype(np.uint64)


def limbs_to_ints(limbs: np.ndarray) -> list[int]:
    """Unpack the last axis of a uint64 limb array into ints (flattening the others)."""
    limbs = np.ascontiguousarray(limbs, dtype="<u8")
    width = 8 * limbs.shape[-1]
    raw = limbs.tobytes()
    return [int.from_bytes(raw[i:i + width], "little") for i in range(0, len(raw), width)]


def fr_to_limbs(values: Iterable[int]) -> np.ndarray:
    return ints_to_limbs(values, FR_LIMBS)


def fq_to_limbs(values: Iterable[int]) -> np.ndarray:
    return ints_to_limbs(values, FQ_LIMBS)


def limbs_to_object(limbs: np.ndarray) -> np.ndarray:
    """Limbs as a 1-D object array of Python ints: the CPU backend's vector type."""
    out = np.empty(limbs.shape[0], dtype=object)
    out[:] = limbs_to_ints(limbs)
    return out


def is_canonical(limbs: np.ndarray, modulus: int) -> np.ndarray:
    """Boolean mask: which rows hold a value below ``modulus`` (vectorised limb compare)."""
    n_limbs = limbs.shape[-1]
    mod = ints_to_limbs([modulus], n_limbs)[0]
    less = np.zeros(limbs.shape[:-1], dtype=bool)
    equal = np.ones(limbs.shape[:-1], dtype=bool)
    for i in reversed(range(n_limbs)):
        less |= equal & (limbs[..., i] < mod[i])
        equal &= limbs[..., i] == mod[i]
    return less


def random_fr(n: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """``n`` uniformly random Fr elements as limbs (rejection sampling on 255 bits)."""
    rng = rng or np.random.default_rng()
    out = np.empty((0, FR_LIMBS), dtype=np.uint64)
    while out.shape[0] < n:
        draw = rng.integers(0, 2**64, size=(2 * (n - out.shape[0]) + 8, FR_LIMBS),
                            dtype=np.uint64, endpoint=False)
        draw[:, 3] &= np.uint64((1 << 63) - 1)
        out = np.concatenate([out, draw[is_canonical(draw, FR_MODULUS)]])
    return out[:n]


def to_montgomery(values: Sequence[int], modulus: int, n_limbs: int) -> np.ndarray:
    """Standard-form ints → Montgomery-form limbs (R = 2^(64·n_limbs)); for backend tests."""
    shift = 64 * n_limbs
    return ints_to_limbs(((v << shift) % modulus for v in values), n_limbs)


def montgomery_reduce(limbs: np.ndarray, modulus: int, *, chunk: int = 1 << 16) -> np.ndarray:
    """``v · 2^(-64·L) mod modulus`` for every row of ``(..., L)`` limbs: Montgomery form
    (R = 2^(64·L)) to standard form, vectorised over the rows (files that store millions of
    Montgomery coordinates are decoded with this, not with a Python int per value).

    Word-by-word REDC on 32-bit digits, so every product and carry fits a uint64 lane; rows
    are processed ``chunk`` at a time to stay in cache. Any input below 2^(64·L) gives a
    canonical result; callers that must refuse non-canonical input check it first.
    """
    return _by_chunks(limbs, chunk, lambda digits: _redc32(_widen(digits), modulus))


def montgomery_encode(limbs: np.ndarray, modulus: int, *, chunk: int = 1 << 16) -> np.ndarray:
    """The inverse of ``montgomery_reduce``: ``v · R mod modulus`` for every row of
    canonical ``(..., L)`` limbs, as REDC(v · (R² mod modulus)); for writing files that
    store Montgomery coordinates (snarkjs's), vectorised like the decoder."""
    r2 = pow(2, 2 * 64 * limbs.shape[-1], modulus)
    return _by_chunks(limbs, chunk, lambda digits: _redc32(_times(digits, r2), modulus))


def _by_chunks(limbs: np.ndarray, chunk: int, convert) -> np.ndarray:
    """``convert`` on the 32-bit digits (k, rows) of ``chunk`` rows at a time; back to limbs."""
    shape = limbs.shape
    flat = np.ascontiguousarray(limbs, dtype="<u8").reshape(-1, shape[-1])
    out = np.empty_like(flat)
    for start in range(0, flat.shape[0], chunk):
        digits = np.ascontiguousarray(flat[start:start + chunk]).view("<u4").T.astype(np.uint64)
        out[start:start + chunk] = np.ascontiguousarray(convert(digits).T.astype("<u4")).view("<u8")
    return out.reshape(shape).astype(np.uint64, copy=False)


_MASK32, _SHIFT32 = np.uint64(0xFFFFFFFF), np.uint64(32)


def _widen(digits: np.ndarray) -> np.ndarray:
    """k digits per row → 2k, the top half zero (a value ready for REDC)."""
    t = np.zeros((2 * digits.shape[0], digits.shape[1]), dtype=np.uint64)
    t[:digits.shape[0]] = digits
    return t


def _times(digits: np.ndarray, constant: int) -> np.ndarray:
    """The 2k-digit products of every row with ``constant`` (schoolbook on 32-bit digits:
    digit·digit + digit + carry < 2^64)."""
    k = digits.shape[0]
    t = np.zeros((2 * k, digits.shape[1]), dtype=np.uint64)
    carry, product = np.empty_like(t[0]), np.empty_like(t[0])
    for j in range(k):
        c_j = np.uint64((constant >> (32 * j)) & 0xFFFFFFFF)
        carry[:] = 0
        for i in range(k):
            np.multiply(digits[i], c_j, out=product)
            product += t[i + j]
            product += carry
            np.bitwise_and(product, _MASK32, out=t[i + j])
            np.right_shift(product, _SHIFT32, out=carry)
        t[j + k] = carry
    return t


def _redc32(t: np.ndarray, modulus: int) -> np.ndarray:
    """REDC of 2k-digit values below modulus·2^(32k): k digits, canonical."""
    k = t.shape[0] // 2
    mask, shift = _MASK32, _SHIFT32
    n_digits = [np.uint64((modulus >> (32 * j)) & 0xFFFFFFFF) for j in range(k)]
    n_prime = np.uint64(-pow(modulus, -1, 1 << 32) % (1 << 32))
    carry, product = np.empty_like(t[0]), np.empty_like(t[0])
    for i in range(k):
        m = (t[i] * n_prime) & mask
        carry[:] = 0
        for j in range(k):  # t[i+j] + m·n_j + carry < 2^64
            np.multiply(m, n_digits[j], out=product)
            product += t[i + j]
            product += carry
            np.bitwise_and(product, mask, out=t[i + j])
            np.right_shift(product, shift, out=carry)
        for j in range(i + k, 2 * k):  # the carry up through the top half (its digits may be set)
            np.add(t[j], carry, out=product)
            np.bitwise_and(product, mask, out=t[j])
            np.right_shift(product, shift, out=carry)
    result = t[k:]
    # Conditional subtraction of the modulus (the result is below 2·modulus).
    diff = np.empty_like(result)
    borrow = np.zeros_like(carry)
    for j in range(k):
        np.subtract(result[j], n_digits[j], out=product)
        product -= borrow
        np.bitwise_and(product, mask, out=diff[j])
        borrow = (product >> np.uint64(63)).astype(np.uint64)  # wrapped below zero
    keep = borrow.astype(bool)  # result < modulus
    return np.where(keep, result, diff)


def from_montgomery(limbs: np.ndarray, modulus: int) -> list[int]:
    """Montgomery-form limbs → standard-form ints; for backend tests."""
    r_inv = pow(1 << (64 * limbs.shape[-1]), -1, modulus)
    return [v * r_inv % modulus for v in limbs_to_ints(limbs)]
