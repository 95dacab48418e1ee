"""snarkjs Groth16 proving keys (``.zkey``, BLS12-381) as this project's ``ProvingKey``.

Sections (``snark.snarkjs.binfile`` container, magic "zkey"):
  1 protocol (u32, 1 = Groth16)      2 header: n8q, q, n8r, r, nVars, nPublic, domainSize,
  3 IC (nPublic + 1 G1)                alpha1, beta1, beta2, gamma2, delta1, delta2
  4 A and B coefficients             5 A (G1), 6 B1 (G1), 7 B2 (G2): nVars points each
  8 C (G1, the private signals)      9 H (G1, domainSize points)
Points as in ``snark.snarkjs.points``. A coefficient record is (u32 matrix 0 = A / 1 = B,
u32 constraint, u32 signal, 32-byte value v·R² mod r with R = 2^256), decoded by two
Montgomery reductions. The C matrix is not stored: snarkjs's H form takes C = A∘B.

``to_proving_key`` moves the key into this project's domain order (``snark.snarkjs.roots``):
constraint rows and H points are permuted once here, so the provers use their usual NTT
tables. The key's QAP form is ``snark.qap.ODD``: H evaluated on the odd points of the 2n-domain,
its basis already divided by Z and δ (``snark.keys``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.curve import G1Point, G2Point, PointArray
from snark.fields import FQ_BYTES, FQ_MODULUS, FR_BYTES, FR_MODULUS, is_canonical, montgomery_reduce
from snark.keys import ProvingKey, VerifyingKey
from snark.qap import ODD
from snark.r1cs import R1CS, SparseMatrix
from snark.snarkjs.binfile import le_int, read_sections, u32s
from snark.snarkjs.fieldinfo import KNOWN_BASE_PRIMES, KNOWN_SCALAR_PRIMES, require_prime
from snark.snarkjs.points import check_points, decode_points, point_size, single_point
from snark.snarkjs.roots import constraint_positions, odd_point_positions

PROTOCOLS = {1: "groth16", 2: "plonk", 10: "fflonk"}
_COEF_RECORD = 12 + FR_BYTES


@dataclass
class Zkey:
    """A parsed zkey in snarkjs's own order; points decoded to standard form, not yet checked."""

    name: str
    n_vars: int
    n_public: int
    domain_size: int
    alpha_g1: G1Point
    beta_g1: G1Point
    beta_g2: G2Point
    gamma_g2: G2Point
    delta_g1: G1Point
    delta_g2: G2Point
    ic: PointArray
    a_g1: PointArray
    b_g1: PointArray
    b_g2: PointArray
    c_g1: PointArray
    h_g1: PointArray
    coef_matrix: np.ndarray      # (k,) 0 = A, 1 = B
    coef_constraint: np.ndarray  # (k,) int64
    coef_signal: np.ndarray      # (k,) int64
    coef_value: np.ndarray       # (k, 4) standard-form Fr limbs

    def check_points(self) -> None:
        """On the curve and in the subgroup, every vector point (the single ones already are)."""
        for field in ("ic", "a_g1", "b_g1", "b_g2", "c_g1", "h_g1"):
            check_points(getattr(self, field), f"{self.name}: {field}")

    def to_proving_key(self, key_id: str) -> ProvingKey:
        """This project's key (its domain order, ``snark.qap.ODD``), named ``key_id``."""
        n = self.domain_size
        rows = constraint_positions(self.coef_constraint, n)
        a, b = (self._csr(rows, which, n) for which in (0, 1))
        empty_c = SparseMatrix(np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64),
                               np.zeros((0, 4), dtype=np.uint64))
        r1cs = R1CS(self.n_public + 1, self.n_vars - self.n_public - 1, a, b, empty_c)
        h_order = np.empty(n, dtype=np.int64)
        h_order[odd_point_positions(np.arange(n, dtype=np.int64), n)] = np.arange(n)
        vk = VerifyingKey(key_id, self.alpha_g1, self.beta_g2, self.gamma_g2, self.delta_g2,
                          self.ic.g1_points())
        return ProvingKey(r1cs=r1cs, vk=vk, beta_g1=self.beta_g1, delta_g1=self.delta_g1,
                          a_g1=self.a_g1, b_g1=self.b_g1, b_g2=self.b_g2, l_g1=self.c_g1,
                          h_g1=PointArray(1, self.h_g1.xy[h_order], self.h_g1.inf[h_order]),
                          qap=ODD)

    def _csr(self, rows: np.ndarray, which: int, n: int) -> SparseMatrix:
        pick = self.coef_matrix == which
        row, col, val = rows[pick], self.coef_signal[pick], self.coef_value[pick]
        order = np.lexsort((col, row))
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(row, minlength=n), out=indptr[1:])
        return SparseMatrix(indptr, col[order], np.ascontiguousarray(val[order]))


def read_zkey(path) -> Zkey:
    """Parse a Groth16 BLS12-381 zkey; ``SnarkjsFormatError`` names the file and field."""
    file = read_sections(path, b"zkey", (1,))
    protocol_section = file.section(1, "protocol")
    if protocol_section.size < 4:
        raise file.error("protocol", "section too short")
    protocol = u32s(protocol_section, 0, 1)[0]
    if protocol != 1:
        raise file.error("protocol", f"{PROTOCOLS.get(protocol, protocol)!s} keys cannot be "
                                     f"proved here; only groth16")
    header = file.section(2, "header")
    fields = _read_header(file, header)
    n_vars, n_public, n = fields["n_vars"], fields["n_public"], fields["domain_size"]

    def vector(kind: int, group: int, count: int, field: str) -> PointArray:
        return decode_points(file.section(kind, field), group, count,
                             f"{file.name}: {field}")

    matrix, constraint, signal, value = _read_coefficients(file, n_vars, n)
    return Zkey(
        name=file.name, n_vars=n_vars, n_public=n_public, domain_size=n, **fields["points"],
        ic=vector(3, 1, n_public + 1, "ic"),
        a_g1=vector(5, 1, n_vars, "a_g1"), b_g1=vector(6, 1, n_vars, "b_g1"),
        b_g2=vector(7, 2, n_vars, "b_g2"), c_g1=vector(8, 1, n_vars - n_public - 1, "c_g1"),
        h_g1=vector(9, 1, n, "h_g1"),
        coef_matrix=matrix, coef_constraint=constraint, coef_signal=signal, coef_value=value)


def _read_header(file, header: np.ndarray) -> dict:
    if header.size < 4:
        raise file.error("header", "section too short")
    n8q = u32s(header, 0, 1)[0]
    if header.size < 4 + n8q:
        raise file.error("header", "section too short")
    # The prime first: it names the curve a key of another one is for (bn128's is 32 bytes).
    problem = require_prime(le_int(header, 4, n8q), FQ_MODULUS, KNOWN_BASE_PRIMES)
    if problem:
        raise file.error("header q", problem)
    if n8q != FQ_BYTES:
        raise file.error("header n8q", f"{n8q}-byte base field; bls12-381 has {FQ_BYTES}")
    pos = 4 + n8q
    n8r = u32s(header, pos, 1)[0]
    if n8r != FR_BYTES:
        raise file.error("header n8r", f"{n8r}-byte scalar field; bls12-381 has {FR_BYTES}")
    problem = require_prime(le_int(header, pos + 4, n8r), FR_MODULUS, KNOWN_SCALAR_PRIMES)
    if problem:
        raise file.error("header r", problem)
    pos += 4 + n8r
    n_vars, n_public, n = u32s(header, pos, 3)
    pos += 12
    if n < 2 or n & (n - 1):
        raise file.error("header domainSize", f"{n} is not a power of two >= 2")
    if not 0 <= n_public < n_vars:
        raise file.error("header nPublic", f"{n_public} public signals of {n_vars} variables")
    points = {}
    for field, group in (("alpha_g1", 1), ("beta_g1", 1), ("beta_g2", 2), ("gamma_g2", 2),
                         ("delta_g1", 1), ("delta_g2", 2)):
        size = point_size(group)
        if pos + size > header.size:
            raise file.error(f"header {field}", "section too short")
        points[field] = single_point(header[pos:pos + size], group, f"{file.name}: {field}")
        pos += size
    return {"n_vars": n_vars, "n_public": n_public, "domain_size": n, "points": points}


def _read_coefficients(file, n_vars: int, n: int):
    section = file.section(4, "coefficients")
    count = u32s(section, 0, 1)[0] if section.size >= 4 else -1
    if count < 0 or section.size != 4 + count * _COEF_RECORD:
        raise file.error("coefficients", f"{section.size} bytes do not hold the {count} "
                                         f"records of {_COEF_RECORD} bytes announced")
    records = np.ascontiguousarray(section[4:]).reshape(count, _COEF_RECORD)
    ids = records[:, :12].copy().view("<u4").astype(np.int64)
    matrix, constraint, signal = ids[:, 0], ids[:, 1], ids[:, 2]
    for field, values, bound in (("matrix", matrix, 2), ("constraint", constraint, n),
                                 ("signal", signal, n_vars)):
        bad = np.flatnonzero(values >= bound)
        if bad.size:
            raise file.error(f"coefficients[{bad[0]}].{field}",
                             f"{values[bad[0]]} is out of range (< {bound})")
    value = records[:, 12:].copy().view("<u8").astype(np.uint64)
    bad = np.flatnonzero(~is_canonical(value, FR_MODULUS))
    if bad.size:
        raise file.error(f"coefficients[{bad[0]}].value", "not below r")
    value = montgomery_reduce(montgomery_reduce(value, FR_MODULUS), FR_MODULUS)
    return matrix, constraint, signal, value
