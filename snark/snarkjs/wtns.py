"""circom witnesses (``.wtns``) as standard-form Fr limbs ``(nWitness, 4)``.

Container of ``snark.snarkjs.binfile`` (magic "wtns", version 2). Section 1: u32 n8, the
prime (n8 bytes), u32 nWitness; section 2: the values, plain little-endian integers (not
Montgomery). Order: the constant 1, outputs, public inputs, private inputs, the rest; the
public signals are entries 1 … nPublic.
"""

from __future__ import annotations

import numpy as np

from snark.fields import FR_BYTES, FR_LIMBS, FR_MODULUS, is_canonical, limbs_to_ints
from snark.snarkjs.binfile import le_int, read_sections, u32s
from snark.snarkjs.fieldinfo import KNOWN_SCALAR_PRIMES, require_prime


def read_wtns(source, name: str | None = None) -> np.ndarray:
    """The witness of a BLS12-381 circuit from a path or the file's bytes;
    ``SnarkjsFormatError`` names the file (or ``name``) and the field."""
    file = read_sections(source, b"wtns", (2,), name)
    header = file.section(1, "header")
    n8 = u32s(header, 0, 1)[0] if header.size >= 4 else 0
    if n8 != FR_BYTES:
        raise file.error("header n8", f"{n8}-byte field elements; bls12-381's Fr has {FR_BYTES}")
    if header.size < 8 + n8:
        raise file.error("header", "section too short")
    problem = require_prime(le_int(header, 4, n8), FR_MODULUS, KNOWN_SCALAR_PRIMES)
    if problem:
        raise file.error("header prime", problem)
    count = u32s(header, 4 + n8, 1)[0]
    values = file.section(2, "witness values")
    if values.size != count * n8:
        raise file.error("witness values", f"{values.size} bytes, expected {count} values of "
                                           f"{n8} bytes")
    witness = np.ascontiguousarray(values).view("<u8").reshape(count, FR_LIMBS).astype(np.uint64)
    bad = np.flatnonzero(~is_canonical(witness, FR_MODULUS))
    if bad.size:
        raise file.error(f"witness[{bad[0]}]", "not below r")
    if count == 0 or limbs_to_ints(witness[:1]) != [1]:
        raise file.error("witness[0]", "the constant signal must be 1")
    return witness
