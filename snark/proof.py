"""The 192-byte Groth16 proof: compressed A (G1, 48) ‖ B (G2, 96) ‖ C (G1, 48).

Encoding is the zcash/bellperson one (big-endian x; flag bits in the top of byte 0:
0x80 compressed, 0x40 infinity, 0x20 larger y; G2 writes x.c1 then x.c0), which is
arkworks' compressed serialisation for BLS12-381. Decoding is strict (``snark.curve``):
canonical encodings only, no point at infinity (bellman refuses A, B or C at infinity too),
each point on the curve and in the prime-order subgroup.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from snark.curve import G1Point, G2Point, PointFormatError, decode_compressed

PROOF_BYTES = 192


class ProofFormatError(ValueError):
    """Proof bytes that do not decode; the message names the part and the problem."""


@contextmanager
def _naming(name: str, part: str) -> Iterator[None]:
    try:
        yield
    except PointFormatError as exc:
        raise ProofFormatError(f"{name}.{part}: {exc}") from None


@dataclass(frozen=True)
class Proof:
    a: G1Point
    b: G2Point
    c: G1Point

    def to_bytes(self) -> bytes:
        return (self.a.to_compressed_bytes() + self.b.to_compressed_bytes()
                + self.c.to_compressed_bytes())

    @classmethod
    def from_bytes(cls, data: bytes, *, name: str = "proof") -> "Proof":
        if len(data) != PROOF_BYTES:
            raise ProofFormatError(f"{name}: expected {PROOF_BYTES} bytes, got {len(data)}")
        with _naming(name, "a"):
            a = decode_compressed(bytes(data[0:48]), 1)
        with _naming(name, "b"):
            b = decode_compressed(bytes(data[48:144]), 2)
        with _naming(name, "c"):
            c = decode_compressed(bytes(data[144:192]), 1)
        return cls(a, b, c)


def split_proofs(data: bytes, count: int, *, name: str = "proof") -> list[Proof]:
    """Decode ``count`` concatenated proofs (a job's result, partition order)."""
    if len(data) != count * PROOF_BYTES:
        raise ProofFormatError(
            f"{name}: expected {count} proofs = {count * PROOF_BYTES} bytes, got {len(data)}")
    return [Proof.from_bytes(data[i * PROOF_BYTES:(i + 1) * PROOF_BYTES], name=f"{name}[{i}]")
            for i in range(count)]
