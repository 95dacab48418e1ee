// a = A·w, b = B·w, c = C·w for one CSR matrix per launch, one thread per row.
//
// Coefficients are codes into a small table (snark.r1cs.CodedMatrix: a 130 M-row Filecoin
// partition has a few thousand distinct coefficients; a matrix with full coefficients is
// coded at prepare). The table is stored as d·R^2 (Montgomery form applied twice) and the
// witness stays in standard form (the MSMs read it as is): the Montgomery product
// d·R^2 · w · R^-1 = d·w·R is then the Montgomery form of the product, with no conversion
// of the witness. Rows past the matrix (up to the domain size) are written as zero.
#include "fr_vec.cuh"

extern "C" __global__ void spmv_coded(const long long* __restrict__ indptr,
                                      const uint32_t* __restrict__ indices,
                                      const uint32_t* __restrict__ codes,
                                      const uint64_t* __restrict__ table,
                                      const uint64_t* __restrict__ witness,
                                      uint64_t* out, uint32_t rows, uint32_t padded_rows) {
    const uint32_t row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= padded_rows) return;
    fr_t acc = fr_t::zero();
    if (row < rows) {
        const long long end = indptr[row + 1];
        for (long long k = indptr[row]; k < end; k++)
            acc += fr_load_ro(table, codes[k]) * fr_load_ro(witness, indices[k]);
    }
    fr_store(out, row, acc);
}
