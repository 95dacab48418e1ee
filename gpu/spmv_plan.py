"""Where each chunk of ``spmv.cuh`` starts: the row holding its first non-zero.

Made once per matrix when a key becomes resident (numpy on the host, or CuPy on the
device: the same ``searchsorted``), shared by the kernels and their host build."""

from __future__ import annotations

import numpy as np

#: Non-zeros per thread (SPMV_CHUNK in spmv.cuh).
CHUNK = 32
FR_BYTES = 32


def matrix_bytes(m) -> int:
    """Device bytes of a resident R1CS matrix (``gpu.backend``): coded, an int64 row pointer,
    a uint32 column and a uint32 code a term, the coefficient table and a uint32 start row
    per chunk (a matrix with full coefficients counted as if each were distinct)."""
    from snark.r1cs import CodedMatrix

    table_rows = len(m.table) if isinstance(m, CodedMatrix) else m.nnz
    chunks = -(-m.nnz // CHUNK)
    return 8 * (m.rows + 1) + 8 * m.nnz + FR_BYTES * table_rows + 4 * chunks


def chunk_rows(indptr, xp=np):
    """uint32 (chunks,): for chunk j, the last row r with indptr[r] <= j·CHUNK (a row with
    terms, since rows without terms share their indptr with the next)."""
    nnz = int(indptr[-1])
    starts = xp.arange(0, nnz, CHUNK, dtype=xp.int64)
    return (xp.searchsorted(indptr, starts, side="right") - 1).astype(xp.uint32)
