"""The GPU's A·w in chunks of equal work (``gpu/kernels/spmv.cuh``), run on the host with
g++ against the native CPU product: rows of every length around the chunk's, rows without
terms, one row across many chunks, and a Filecoin partition's own matrices."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from snark import native
from snark.fields import FR_MODULUS as R
from snark.fields import fr_to_limbs, limbs_to_ints, random_fr
from snark.r1cs import CodedMatrix

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")
hostlib = pytest.importorskip("gpu.hostlib")
from gpu.spmv_plan import CHUNK  # noqa: E402


def twice_montgomery(table: np.ndarray) -> np.ndarray:
    """d·R² for each coefficient d: the table as the backend keeps it on the device."""
    r2 = pow(2, 512, R)
    return fr_to_limbs([d * r2 % R for d in limbs_to_ints(table)])


def host_product(m: CodedMatrix, witness: np.ndarray, rows_out: int) -> np.ndarray:
    """The kernels' result: Montgomery-form limbs."""
    return hostlib.spmv(m.indptr, m.indices, m.codes, twice_montgomery(m.table), witness,
                        rows_out)


def coded_matrix(lengths, columns: int, np_rng) -> CodedMatrix:
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    nnz = int(indptr[-1])
    table = random_fr(7, np_rng)
    table[0] = fr_to_limbs([1])[0]
    table[1] = fr_to_limbs([R - 1])[0]
    return CodedMatrix(indptr, np_rng.integers(0, columns, nnz, dtype=np.uint32),
                       np_rng.integers(0, 7, nnz).astype(np.uint16), table)


def expected(m: CodedMatrix, witness: np.ndarray, rows_out: int) -> np.ndarray:
    """The native CPU product, in Montgomery form, zero past the matrix's rows."""
    want = np.zeros((rows_out, 4), dtype=np.uint64)
    want[:m.rows] = native.matvec(m, witness)
    return hostlib.apply("fr", "to_mont", want, np.zeros_like(want))


def test_rows_of_every_length_around_the_chunk(np_rng):
    lengths = [0, 0, 1, 2, 3, CHUNK - 1, CHUNK, CHUNK + 1, 0, 2 * CHUNK, 5, 0, 17 * CHUNK + 3,
               1, 1, 0, 3 * CHUNK, 0]
    lengths += list(np_rng.choice([0, 1, 2, 3, 3, 40, 255, 929], 3000))
    m = coded_matrix(lengths, 500, np_rng)
    witness = random_fr(500, np_rng)
    assert np.array_equal(host_product(m, witness, len(lengths) + 9),
                          expected(m, witness, len(lengths) + 9))


def test_one_row_and_no_terms(np_rng):
    witness = random_fr(10, np_rng)
    for lengths in ([5 * CHUNK + 7], [CHUNK], [1], [0, 0, 0], [0, 3 * CHUNK, 0]):
        m = coded_matrix(lengths, 10, np_rng)
        assert np.array_equal(host_product(m, witness, len(lengths)),
                              expected(m, witness, len(lengths))), lengths


def test_a_filecoin_partitions_matrices():
    """A 2 KiB partition's A (packing rows of up to 929 terms among rows of 1–3), B and C
    on a random witness (the product does not need a satisfying one)."""
    from snark.filecoin import registered_proof
    from snark.filecoin.circuit import StackedShape, circuit_r1cs

    r1cs = circuit_r1cs(StackedShape.of(registered_proof("StackedDrg2KiBV1_1")))
    witness = random_fr(r1cs.num_variables, np.random.default_rng(7))
    for name in "abc":
        m = getattr(r1cs, name)
        assert np.array_equal(host_product(m, witness, m.rows), expected(m, witness, m.rows)), name
