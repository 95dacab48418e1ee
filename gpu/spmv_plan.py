"""Where each chunk of ``spmv.cuh`` starts: the row holding its first non-zero.

Made once per matrix when a key becomes resident (numpy on the host, or CuPy on the
device: the same ``searchsorted``), shared by the kernels and their host build."""

from __future__ import annotations

import numpy as np

#: Non-zeros per thread (SPMV_CHUNK in spmv.cuh).
CHUNK = 32


def chunk_rows(indptr, xp=np):
    """uint32 (chunks,): for chunk j, the last row r with indptr[r] <= j·CHUNK (a row with
    terms, since rows without terms share their indptr with the next)."""
    nnz = int(indptr[-1])
    starts = xp.arange(0, nnz, CHUNK, dtype=xp.int64)
    return (xp.searchsorted(indptr, starts, side="right") - 1).astype(xp.uint32)
