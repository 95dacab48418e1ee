"""Filecoin's field elements as bytes, and SHA-256 trimmed to a field element.

Filecoin writes every field element (a Poseidon or a SHA-256 "domain") as its 32-byte
little-endian representation. Here such values are numpy ``uint8`` arrays ``(..., 32)``;
``to_limbs`` views them as proofq's standard-form Fr limbs ``(..., 4)`` without a copy, so
the bytes are the one representation and limbs are how arithmetic reads them.

A SHA-256 digest used as a field element has its two top bits cleared (``digest[31] &=
0x3f``: ``rust-fil-proofs:fr32/src/convert.rs`` ``bytes_into_fr_repr_safe``,
``filecoin-hashers/src/sha256.rs`` ``trim_to_fr32``), so it is below 2^254 < r.
"""

from __future__ import annotations

import hashlib

import numpy as np

from snark.fields import FR_MODULUS, is_canonical

DOMAIN_BYTES = 32
TRIM_MASK = 0x3F


def sha256_fr(*parts: bytes) -> bytes:
    """SHA-256 of the concatenated parts, trimmed to a field element."""
    digest = bytearray(hashlib.sha256(b"".join(parts)).digest())
    digest[-1] &= TRIM_MASK
    return bytes(digest)


def to_limbs(values: np.ndarray) -> np.ndarray:
    """``uint8 (..., 32)`` little-endian bytes → ``uint64 (..., 4)`` limbs (a view when the
    array is contiguous)."""
    values = np.ascontiguousarray(values, dtype=np.uint8)
    return values.view("<u8").astype(np.uint64, copy=False)


def from_limbs(limbs: np.ndarray) -> np.ndarray:
    """``uint64 (..., 4)`` limbs → ``uint8 (..., 32)`` little-endian bytes."""
    return np.ascontiguousarray(limbs, dtype="<u8").view(np.uint8)


def canonical(values: np.ndarray) -> np.ndarray:
    """Mask over ``(..., 32)`` byte values: which are below the modulus r."""
    return is_canonical(to_limbs(values), FR_MODULUS)


def to_int(value: bytes | np.ndarray) -> int:
    raw = value if isinstance(value, (bytes, bytearray)) else np.asarray(value, np.uint8).tobytes()
    return int.from_bytes(raw, "little")


def from_int(value: int) -> bytes:
    return value.to_bytes(DOMAIN_BYTES, "little")
