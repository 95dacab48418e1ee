"""Rank-1 constraint systems: a builder that records constraints and the witness together.

Variables are plain ints so that gadgets stay cheap: public inputs are ``0, 1, 2, …``
(``ONE`` = 0 is the constant), private (auxiliary) variables are ``-1, -2, …``. A linear
combination is a ``dict`` {variable: coefficient mod r}. ``compile()`` produces CSR matrices
whose columns are the final witness order: ``[ONE, inputs…, aux…]``.

Following bellman, every public input ``x_i`` also gets the constraint ``x_i · 0 = 0``
appended at compile time: it makes the input polynomials linearly independent, which the
Groth16 soundness argument needs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from snark.fields import FR_MODULUS, fr_to_limbs, limbs_to_ints, limbs_to_object

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


class UnsatisfiedConstraint(ValueError):
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
class SparseMatrix:
    """CSR matrix over Fr: ``indptr`` (rows+1,), ``indices`` (nnz,), ``data`` (nnz, 4) limbs."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray

    @property
    def rows(self) -> int:
        return self.indptr.shape[0] - 1

    @property
    def nnz(self) -> int:
        return self.indices.shape[0]

    def row_ids(self) -> np.ndarray:
        """The row of every non-zero (COO view)."""
        return np.repeat(np.arange(self.rows, dtype=np.int64), np.diff(self.indptr))


@dataclass(frozen=True)
class R1CS:
    """Compiled constraint system; ``num_constraints`` includes the input constraints."""

    num_inputs: int
    num_aux: int
    a: SparseMatrix
    b: SparseMatrix
    c: SparseMatrix

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
        input_rows = [({i: 1}, {}, {}) for i in range(num_inputs)]
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
        """sha256 over the shape and the three matrices: names a proving key's directory."""
        digest = hashlib.sha256()
        digest.update(np.asarray([self.num_inputs, self.num_aux], dtype="<i8").tobytes())
        for m in (self.a, self.b, self.c):
            for arr in (m.indptr, m.indices, m.data):
                digest.update(np.ascontiguousarray(arr).astype("<u8", copy=False).tobytes())
        return digest.hexdigest()[:32]

    def is_satisfied(self, witness: np.ndarray) -> bool:
        """Check ``(A·w)∘(B·w) = C·w`` row by row (Python ints; for tests)."""
        w = np.asarray(limbs_to_ints(witness), dtype=object)
        a, b, c = (sparse_matvec(m, w) for m in (self.a, self.b, self.c))
        return bool(np.all((a * b - c) % FR_MODULUS == 0))


def sparse_matvec(matrix: SparseMatrix, vector: np.ndarray,
                  data: np.ndarray | None = None) -> np.ndarray:
    """``matrix · vector`` over Fr with object arrays; ``data`` may pass pre-converted values."""
    values = limbs_to_object(matrix.data) if data is None else data
    out = np.zeros(matrix.rows, dtype=object)
    if matrix.nnz == 0:
        return out
    products = values * np.asarray(vector, dtype=object)[matrix.indices]
    # A trailing zero keeps every start index valid, trailing empty rows included.
    sums = np.add.reduceat(np.append(products, 0), matrix.indptr[:-1])
    nonempty = np.diff(matrix.indptr) > 0
    out[nonempty] = sums[nonempty] % FR_MODULUS
    return out


def sparse_transposed_matvec(matrix: SparseMatrix, vector: np.ndarray, columns: int,
                             data: np.ndarray | None = None) -> np.ndarray:
    """``matrixᵀ · vector`` (length ``columns``): column j gets Σ_i M[i, j]·vector[i]."""
    values = limbs_to_object(matrix.data) if data is None else data
    out = np.zeros(columns, dtype=object)
    if matrix.nnz == 0:
        return out
    products = values * np.asarray(vector, dtype=object)[matrix.row_ids()]
    order = np.argsort(matrix.indices, kind="stable")
    cols = matrix.indices[order]
    starts = np.flatnonzero(np.r_[True, cols[1:] != cols[:-1]])
    out[cols[starts]] = np.add.reduceat(products[order], starts) % FR_MODULUS
    return out
