// a = A·w, b = B·w, c = C·w for one coded CSR matrix per pair of launches, in chunks of
// equal work (spmv.cuh).
//
// Coefficients are codes into a small table (snark.r1cs.CodedMatrix: a 130 M-row Filecoin
// partition has a few thousand distinct coefficients; a matrix with full coefficients is
// coded at prepare). The table is stored as d·R^2 (Montgomery form applied twice) and the
// witness stays in standard form (the MSMs read it as is): the Montgomery product
// d·R^2 · w · R^-1 = d·w·R is then the Montgomery form of the product, with no conversion
// of the witness. `out` is zero-filled by the caller up to the domain size.
#include "spmv.cuh"

extern "C" __global__ void spmv_chunks(const long long* indptr, const uint32_t* indices,
                                       const uint32_t* codes, const uint64_t* table,
                                       long long nnz, const uint32_t* chunk_rows,
                                       const uint64_t* witness, uint64_t* out,
                                       uint32_t* carry_rows, uint64_t* carry_values,
                                       unsigned long long chunks) {
    const unsigned long long j = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= chunks) return;
    const coded_csr m = {indptr, indices, codes, table, nnz};
    spmv_chunk(j, m, chunk_rows[j], witness, out, carry_rows, carry_values);
}

extern "C" __global__ void spmv_fixups(const uint32_t* carry_rows, const uint64_t* carry_values,
                                       uint64_t* out, unsigned long long chunks) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < 2 * chunks) spmv_fixup(i, chunks, carry_rows, carry_values, out);
}
