"""Sparse products in native code against dense object-array products, for both matrix
layouts; the coded layout's conversions, and R1CS behaviour that must not depend on it."""

from __future__ import annotations

import numpy as np
import pytest

from snark import native
from snark.fields import FR_MODULUS as R
from snark.fields import fr_to_limbs, limbs_to_ints, random_fr
from snark.r1cs import R1CS, CodedMatrix, SparseMatrix
from tests.circuits import random_circuit


def _random_matrix(np_rng, rows: int, columns: int, per_row: int) -> SparseMatrix:
    """Random CSR with empty rows, repeated columns in a row, and coefficients that are
    often 1, −1 or 0 (a stored zero) beside random ones."""
    counts = np_rng.integers(0, per_row + 1, rows)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    nnz = int(indptr[-1])
    indices = np_rng.integers(0, columns, nnz).astype(np.int64)
    pick = np_rng.integers(0, 4, nnz)
    data = random_fr(nnz, np_rng)
    data[pick == 0] = fr_to_limbs([1])[0]
    data[pick == 1] = fr_to_limbs([R - 1])[0]
    data[(pick == 2) & (np_rng.random(nnz) < 0.1)] = 0
    return SparseMatrix(indptr, indices, data)


def _dense(m, columns: int) -> np.ndarray:
    dense = np.zeros((m.rows, columns), dtype=object)
    coefficients = limbs_to_ints(m.coefficients(0, m.nnz))
    for r, c, v in zip(m.row_ids(), np.asarray(m.indices, dtype=np.int64), coefficients):
        dense[r, c] = (dense[r, c] + v) % R
    return dense


def _layouts(m: SparseMatrix) -> list:
    coded = CodedMatrix.from_sparse(m)
    wide = CodedMatrix(coded.indptr, coded.indices, coded.codes.astype(np.uint32), coded.table)
    narrow_index = SparseMatrix(m.indptr, m.indices.astype(np.uint32), m.data)
    return [m, narrow_index, coded, wide]


@pytest.mark.parametrize("rows, columns, per_row", [(1, 1, 1), (50, 20, 4), (9000, 3000, 3)])
def test_products_match_dense_in_every_layout(rows, columns, per_row, np_rng):
    m = _random_matrix(np_rng, rows, columns, per_row)
    dense = _dense(m, columns)
    x, u = random_fr(columns, np_rng), random_fr(rows, np_rng)
    want = list(dense.dot(np.asarray(limbs_to_ints(x), dtype=object)) % R)
    want_t = list(dense.T.dot(np.asarray(limbs_to_ints(u), dtype=object)) % R)
    for layout in _layouts(m):
        assert limbs_to_ints(native.matvec(layout, x)) == want, type(layout).__name__
        assert limbs_to_ints(native.matvec_transposed(layout, u, columns)) == want_t


def test_circuit_matrices_and_satisfaction_in_both_layouts(rng, monkeypatch):
    import snark.r1cs

    cs = random_circuit(num_inputs=2, num_constraints=60, rng=rng)
    r1cs = cs.compile()
    coded = R1CS(r1cs.num_inputs, r1cs.num_aux,
                 *(CodedMatrix.from_sparse(m) for m in (r1cs.a, r1cs.b, r1cs.c)))
    assert coded.circuit_id() == r1cs.circuit_id()
    w = cs.witness()
    assert r1cs.is_satisfied(w) and coded.is_satisfied(w)
    bad = w.copy()
    row = rng.randrange(r1cs.num_inputs, len(w))
    bad[row] = fr_to_limbs([(limbs_to_ints(w[row:row + 1])[0] + 1) % R])[0]
    assert not coded.is_satisfied(bad)
    whole = r1cs.unsatisfied(bad)
    assert whole.size >= 1 and np.array_equal(coded.unsatisfied(bad), whole)
    monkeypatch.setattr(snark.r1cs, "CHECK_ROWS", 7)  # row blocks: the same rows found
    assert np.array_equal(coded.unsatisfied(bad), whole)
    assert np.array_equal(r1cs.unsatisfied(bad), whole) and coded.is_satisfied(w)
    for d1, d2 in zip(r1cs.density(), coded.density()):
        assert np.array_equal(d1, d2)


def test_coded_conversion_round_trips(np_rng):
    m = _random_matrix(np_rng, 300, 100, 5)
    coded = CodedMatrix.from_sparse(m)
    assert coded.codes.dtype == np.uint16 and coded.indices.dtype == np.uint32
    assert len({tuple(row) for row in coded.table.tolist()}) == coded.table.shape[0]
    back = coded.to_sparse()
    assert np.array_equal(back.data, m.data) and np.array_equal(back.indices, m.indices)
    assert np.array_equal(back.indptr, m.indptr)
    assert np.array_equal(coded.coefficients(5, 40), m.data[5:40])


def test_many_distinct_coefficients_take_32_bit_codes(np_rng):
    m = _random_matrix(np_rng, 100_000, 10, 2)
    m = SparseMatrix(m.indptr, m.indices, random_fr(m.nnz, np_rng))
    coded = CodedMatrix.from_sparse(m)
    assert coded.codes.dtype == np.uint32 and coded.table.shape[0] > 1 << 16
    x = random_fr(10, np_rng)
    assert np.array_equal(native.matvec(coded, x), native.matvec(m, x))


def test_density_is_structural():
    """A stored term counts even with coefficient 0 (bellperson counts terms)."""
    zero, one = fr_to_limbs([0])[0], fr_to_limbs([1])[0]
    a = SparseMatrix(np.array([0, 2, 2]), np.array([0, 3]), np.array([one, zero]))
    b = SparseMatrix(np.array([0, 1, 1]), np.array([2]), np.array([one]))
    r1cs = R1CS(1, 3, a, b, SparseMatrix(np.zeros(3, dtype=np.int64), np.zeros(0, dtype=np.int64),
                                         np.zeros((0, 4), dtype=np.uint64)))
    a_mask, b_mask = r1cs.density()
    assert a_mask.tolist() == [True, False, False, True]
    assert b_mask.tolist() == [False, False, True, False]


def test_structural_errors_name_the_field(np_rng):
    m = _random_matrix(np_rng, 20, 10, 3)
    x = random_fr(10, np_rng)
    cases = [
        (SparseMatrix(m.indptr, np.where(np.arange(m.nnz) == 4, 10, m.indices), m.data),
         r"indices\[4\] = 10 is not below the 10 columns"),
        (SparseMatrix(np.concatenate([m.indptr[:-1], [m.nnz + 1]]), m.indices, m.data),
         "indptr: starts at 0 and ends at"),
        (SparseMatrix(m.indptr, m.indices,
                      np.where((np.arange(m.nnz) == 2)[:, None], fr_to_limbs([R]), m.data)),
         r"data\[2\] is not a canonical Fr element"),
    ]
    coded = CodedMatrix.from_sparse(m)
    codes = coded.codes.copy()
    codes[3] = coded.table.shape[0]
    cases.append((CodedMatrix(coded.indptr, coded.indices, codes, coded.table),
                  r"codes\[3\] = \d+ is not below the \d+ table rows"))
    for matrix, message in cases:
        with pytest.raises(ValueError, match=message):
            native.matvec(matrix, x)
    with pytest.raises(ValueError, match=r"vector\[1\] is not a canonical Fr"):
        native.matvec(m, np.where((np.arange(10) == 1)[:, None], fr_to_limbs([R]), x))
    with pytest.raises(ValueError, match="vector: 10 rows for a matrix of 20"):
        native.matvec_transposed(m, x, 10)
