"""Sparse matrix × vector over Fr in native code, for both matrix layouts of
``snark.r1cs`` (``SparseMatrix``: a coefficient per non-zero; ``CodedMatrix``: a code per
non-zero into a coefficient table), and the transposed product that setup needs."""

from __future__ import annotations

import numpy as np

from snark.native.field import fr_limbs
from snark.native.library import call, ptr

_INDEX_TYPES = {np.dtype(np.int64): 8, np.dtype(np.uint32): 4}
_CODE_TYPES = {np.dtype(np.uint16): 2, np.dtype(np.uint32): 4}


def _layout(matrix) -> tuple:
    """The pointers and widths ``pq_matvec`` takes, int64 or uint32 indices passed as they
    are (other integer types are converted)."""
    indptr = np.ascontiguousarray(matrix.indptr, dtype=np.int64)
    indices = np.asarray(matrix.indices)
    if indices.dtype not in _INDEX_TYPES:
        indices = indices.astype(np.int64)
    indices = np.ascontiguousarray(indices)
    codes = getattr(matrix, "codes", None)
    if codes is None:
        values, width, rows = fr_limbs(np.asarray(matrix.data), "data"), 0, indices.shape[0]
        if values.shape[0] != indices.shape[0]:
            raise ValueError(f"data: {values.shape[0]} rows for {indices.shape[0]} indices")
    else:
        codes = np.asarray(codes)
        if codes.dtype not in _CODE_TYPES:
            raise ValueError(f"codes: expected uint16 or uint32, got {codes.dtype}")
        codes = np.ascontiguousarray(codes)
        if codes.shape != indices.shape:
            raise ValueError(f"codes: {codes.shape[0]} codes for {indices.shape[0]} indices")
        values = fr_limbs(np.asarray(matrix.table), "table")
        width, rows = _CODE_TYPES[codes.dtype], values.shape[0]
    arrays = (indptr, indices, codes, values)  # alive while the pointers are used
    return arrays, (ptr(indptr), indptr.shape[0] - 1, ptr(indices), _INDEX_TYPES[indices.dtype],
                  indices.shape[0], ptr(codes), width, ptr(values), rows)


def matvec(matrix, vector: np.ndarray) -> np.ndarray:
    """``matrix · vector`` (one entry per row); ``vector`` has a row per column."""
    vector = fr_limbs(vector, "vector")
    _arrays, layout = _layout(matrix)
    out = np.empty((layout[1], 4), dtype=np.uint64)
    call("pq_matvec", *layout, vector.shape[0], ptr(vector), ptr(out), 0)
    return out


def matvec_transposed(matrix, vector: np.ndarray, columns: int) -> np.ndarray:
    """``matrixᵀ · vector`` of length ``columns``: entry j is Σ_i M[i, j]·vector[i]."""
    vector = fr_limbs(vector, "vector")
    _arrays, layout = _layout(matrix)
    if vector.shape[0] != layout[1]:
        raise ValueError(f"vector: {vector.shape[0]} rows for a matrix of {layout[1]}")
    out = np.empty((columns, 4), dtype=np.uint64)
    call("pq_matvec", *layout, columns, ptr(vector), ptr(out), 1)
    return out
