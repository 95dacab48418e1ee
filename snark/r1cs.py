"""Rank-1 constraint systems: a builder that records constraints and the witness together.

Variables are plain ints so that gadgets stay cheap: public inputs are ``0, 1, 2, …``
(``ONE`` = 0 is the constant), private (auxiliary) variables are ``-1, -2, …``. A linear
combination is a ``dict`` {variable: coefficient mod r}. ``compile()`` produces CSR matrices
whose columns are the final witness order: ``[ONE, inputs…, aux…]``.

Following bellman, every public input ``x_i`` also gets the constraint ``x_i · 0 = 0``
appended at compile time: it makes the input polynomials linearly independent, which the
Groth16 soundness argument needs.

A compiled ``R1CS`` holds each of A, B, C in either layout (``Matrix``): ``SparseMatrix``,
a coefficient per non-zero (what ``compile()`` writes), or ``CodedMatrix``, a 16- or 32-bit
code per non-zero into a small table of the distinct coefficients, for circuits of 10^8
rows whose coefficients take few values (10 bytes a non-zero instead of 40). Everything
that reads an R1CS (circuit ids, density, satisfaction, the CPU backend, setup) takes both.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self

import numpy as np

from snark.errors import InvalidInput
from snark import native
from snark.fields import FR_MODULUS, fr_to_limbs

ONE = 0

LC = dict[int, int]


def lc(*terms: tuple[int, int]) -> LC:
    """Build a linear combination from ``(variable, coefficient)`` pairs."""
    out: LC = {}
    for var, coeff in terms:
        out[var] = (out.get(var, 0) + coeff) % FR_MODULUS
    return out


def lc_add(a: LC, b: LC, scale: int = 1) -> LC:
    """``a + scale·b`` as a new linear combination."""
    out = dict(a)
    for var, coeff in b.items():
        out[var] = (out.get(var, 0) + scale * coeff) % FR_MODULUS
    return out


def as_lc(x: int | LC) -> LC:
    """A variable (int) or a linear combination (dict) as a linear combination."""
    return x if isinstance(x, dict) else {x: 1}


class UnsatisfiedConstraint(InvalidInput):
    """The witness violates a constraint; the message names which one."""


class ConstraintSystem:
    """Records constraints and (optionally) witness values while a circuit is synthesized.

    ``check=True`` evaluates every constraint as it is enforced, so a wrong gadget fails at
    the line that built it rather than as an unverifiable proof.
    """

    def __init__(self, *, check: bool = False) -> None:
        self.inputs: list[int] = [1]  # values of public variables, ONE first
        self.aux: list[int] = []
        self.constraints: list[tuple[LC, LC, LC]] = []
        self.labels: list[str] = []
        self.check = check

    # -- allocation -------------------------------------------------------------------
    def alloc_input(self, value: int) -> int:
        self.inputs.append(value % FR_MODULUS)
        return len(self.inputs) - 1

    def alloc(self, value: int) -> int:
        self.aux.append(value % FR_MODULUS)
        return -len(self.aux)

    def value(self, var: int) -> int:
        return self.inputs[var] if var >= 0 else self.aux[-1 - var]

    def eval(self, x: int | LC) -> int:
        if isinstance(x, int):
            return self.value(x)
        return sum(c * self.value(v) for v, c in x.items()) % FR_MODULUS

    # -- constraints ------------------------------------------------------------------
    def enforce(self, a: int | LC, b: int | LC, c: int | LC, label: str = "") -> None:
        """Add the constraint ``a · b = c``."""
        a, b, c = as_lc(a), as_lc(b), as_lc(c)
        if self.check and self.eval(a) * self.eval(b) % FR_MODULUS != self.eval(c):
            raise UnsatisfiedConstraint(
                f"constraint {len(self.constraints)} ({label or 'unlabelled'}) is not satisfied")
        self.constraints.append((a, b, c))
        self.labels.append(label)

    @property
    def num_inputs(self) -> int:
        return len(self.inputs)

    @property
    def num_aux(self) -> int:
        return len(self.aux)

    def witness(self) -> np.ndarray:
        """The full assignment ``[ONE, inputs…, aux…]`` as Fr limbs."""
        return fr_to_limbs(self.inputs + self.aux)

    def public_inputs(self) -> list[int]:
        """Public input values without the constant ONE."""
        return self.inputs[1:]

    def compile(self) -> "R1CS":
        return R1CS.from_constraints(self.constraints, self.num_inputs, self.num_aux)


@dataclass(frozen=True)
class _Csr:
    """What both layouts share: ``indptr`` (rows+1,) int64 and ``indices`` (nnz,)."""

    indptr: np.ndarray
    indices: np.ndarray

    if TYPE_CHECKING:  # each layout's own: the same layout over ``indptr`` and ``part``
        def _with_nonzeros(self, indptr: np.ndarray, part: slice) -> Self: ...

    @property
    def rows(self) -> int:
        return self.indptr.shape[0] - 1

    @property
    def nnz(self) -> int:
        return self.indices.shape[0]

    def row_ids(self) -> np.ndarray:
        """The row of every non-zero (COO view)."""
        return np.repeat(np.arange(self.rows, dtype=np.int64), np.diff(self.indptr))

    def row_block(self, start: int, stop: int) -> Self:
        """Rows ``start`` … ``stop − 1`` as a matrix of the same layout (views)."""
        first, last = int(self.indptr[start]), int(self.indptr[stop])
        return self._with_nonzeros(self.indptr[start:stop + 1] - first, slice(first, last))


@dataclass(frozen=True)
class SparseMatrix(_Csr):
    """CSR matrix over Fr: ``indptr`` (rows+1,), ``indices`` (nnz,), ``data`` (nnz, 4) limbs."""

    data: np.ndarray

    def coefficients(self, start: int, stop: int) -> np.ndarray:
        """The coefficients of non-zeros ``start`` … ``stop − 1`` as ``(k, 4)`` limbs."""
        return self.data[start:stop]

    def _with_nonzeros(self, indptr: np.ndarray, part: slice) -> "SparseMatrix":
        return SparseMatrix(indptr, self.indices[part], self.data[part])


@dataclass(frozen=True)
class CodedMatrix(_Csr):
    """CSR matrix over Fr whose coefficients are codes into a table: ``indptr`` int64
    (rows+1,), ``indices`` uint32 (nnz,), ``codes`` uint16 or uint32 (nnz,), ``table``
    (k, 4) standard-form limbs; non-zero i has coefficient ``table[codes[i]]``."""

    codes: np.ndarray
    table: np.ndarray

    def coefficients(self, start: int, stop: int) -> np.ndarray:
        return self.table[self.codes[start:stop]]

    def _with_nonzeros(self, indptr: np.ndarray, part: slice) -> "CodedMatrix":
        return CodedMatrix(indptr, self.indices[part], self.codes[part], self.table)

    @classmethod
    def from_sparse(cls, m: SparseMatrix) -> "CodedMatrix":
        """The same matrix, its distinct coefficient rows as the table (``np.unique``)."""
        if m.nnz and int(np.max(m.indices)) >= 1 << 32:
            raise ValueError(f"indices: column {int(np.max(m.indices))} does not fit 32 bits")
        data = np.ascontiguousarray(m.data, dtype=np.uint64)
        rows = data.view(np.dtype((np.void, 32))).reshape(-1)
        unique, codes = np.unique(rows, return_inverse=True)
        table = np.frombuffer(unique.tobytes(), dtype=np.uint64).reshape(-1, 4).copy()
        code_type = np.uint16 if table.shape[0] <= 1 << 16 else np.uint32
        return cls(np.asarray(m.indptr, dtype=np.int64), np.asarray(m.indices, dtype=np.uint32),
                   codes.reshape(-1).astype(code_type), table)

    def to_sparse(self) -> SparseMatrix:
        return SparseMatrix(self.indptr, self.indices.astype(np.int64), self.table[self.codes])


Matrix = SparseMatrix | CodedMatrix

#: Non-zeros per step when a matrix is hashed, rows per step when a witness is checked
#: (bound the memory a huge circuit needs for either).
HASH_CHUNK = 1 << 22
CHECK_ROWS = 1 << 22


def column_density(matrix: Matrix, columns: int) -> np.ndarray:
    """Which columns have a term in ``matrix``, structurally: a stored term counts whatever
    its coefficient (as bellperson's density counts the terms of its linear combinations)."""
    mask = np.zeros(columns, dtype=bool)
    mask[np.asarray(matrix.indices)] = True
    return mask


@dataclass(frozen=True)
class R1CS:
    """Compiled constraint system; ``num_constraints`` includes the input constraints."""

    num_inputs: int
    num_aux: int
    a: Matrix
    b: Matrix
    c: Matrix

    @property
    def num_variables(self) -> int:
        return self.num_inputs + self.num_aux

    @property
    def num_constraints(self) -> int:
        return self.a.rows

    @property
    def domain_size(self) -> int:
        """Smallest power of two holding every constraint (the evaluation domain)."""
        return 1 << max(1, (self.num_constraints - 1).bit_length())

    @classmethod
    def from_constraints(cls, constraints: list[tuple[LC, LC, LC]], num_inputs: int,
                         num_aux: int) -> "R1CS":
        input_rows: list[tuple[LC, LC, LC]] = [({i: 1}, {}, {}) for i in range(num_inputs)]
        rows = list(constraints) + input_rows

        def column(var: int) -> int:
            return var if var >= 0 else num_inputs - 1 - var

        def to_csr(which: int) -> SparseMatrix:
            indptr = np.zeros(len(rows) + 1, dtype=np.int64)
            cols: list[int] = []
            vals: list[int] = []
            for i, row in enumerate(rows):
                terms = sorted((column(v), c) for v, c in row[which].items() if c % FR_MODULUS)
                cols.extend(t[0] for t in terms)
                vals.extend(t[1] % FR_MODULUS for t in terms)
                indptr[i + 1] = len(cols)
            return SparseMatrix(indptr, np.asarray(cols, dtype=np.int64),
                                fr_to_limbs(vals).reshape(-1, 4))

        return cls(num_inputs, num_aux, to_csr(0), to_csr(1), to_csr(2))

    def circuit_id(self) -> str:
        """sha256 over the shape and the three matrices (as CSR with a coefficient per
        non-zero, whichever layout holds them): names a proving key's directory."""
        digest = hashlib.sha256()
        digest.update(np.asarray([self.num_inputs, self.num_aux], dtype="<i8").tobytes())
        for m in (self.a, self.b, self.c):
            digest.update(_u64_bytes(m.indptr))
            for start in range(0, m.nnz, HASH_CHUNK):
                digest.update(_u64_bytes(m.indices[start:start + HASH_CHUNK]))
            for start in range(0, m.nnz, HASH_CHUNK):
                digest.update(_u64_bytes(m.coefficients(start, start + HASH_CHUNK)))
        return digest.hexdigest()[:32]

    def density(self) -> tuple[np.ndarray, np.ndarray]:
        """bellperson's density masks over the variables ``[ONE, inputs…, aux…]``: which
        have a term in A (every input does, through its input constraint), and in B."""
        return (column_density(self.a, self.num_variables),
                column_density(self.b, self.num_variables))

    def unsatisfied(self, witness: np.ndarray) -> np.ndarray:
        """The rows where ``(A·w)·(B·w) ≠ C·w`` (native matrix products, ``CHECK_ROWS``
        rows at a time)."""
        if witness.shape != (self.num_variables, 4):
            raise ValueError(f"witness: expected shape ({self.num_variables}, 4), "
                             f"got {witness.shape}")
        witness = np.ascontiguousarray(witness, dtype=np.uint64)
        bad = []
        for start in range(0, self.num_constraints, CHECK_ROWS):
            stop = min(start + CHECK_ROWS, self.num_constraints)
            a, b, c = (native.matvec(m.row_block(start, stop), witness)
                       for m in (self.a, self.b, self.c))
            bad.append(start + np.flatnonzero((native.fr_mul(a, b) != c).any(axis=1)))
        return np.concatenate(bad) if bad else np.zeros(0, dtype=np.int64)

    def is_satisfied(self, witness: np.ndarray) -> bool:
        """Every row ``(A·w)·(B·w) = C·w``."""
        return not self.unsatisfied(witness).size


def _u64_bytes(values: np.ndarray) -> bytes:
    return np.ascontiguousarray(values).astype("<u8", copy=False).tobytes()
