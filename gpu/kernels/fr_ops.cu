// Element-wise Fr vector kernels of the prover: a constant product (form conversions),
// the quotient's pointwise steps and the odd H form's C = A∘B.
#include "fr_vec.cuh"

// x[i] = x[i] * c * R^-1 (a Montgomery product with the raw limbs c): with c = R^2 this
// enters Montgomery form, with c = 1 it leaves it, with c = R^3 it enters twice.
extern "C" __global__ void fr_mul_raw(uint64_t* x, const uint64_t* __restrict__ c, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) fr_store(x, i, fr_load(x, i) * fr_load_ro(c, 0));
}

// a[i] = (a[i] * b[i] - c[i]) * one: the odd H form's h, all Montgomery; one is the raw 1,
// so the product leaves Montgomery form.
extern "C" __global__ void fr_quotient_odd(uint64_t* a, const uint64_t* b, const uint64_t* c,
                                           const uint64_t* __restrict__ one, uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) fr_store(a, i, (fr_load(a, i) * fr_load(b, i) - fr_load(c, i)) * fr_load_ro(one, 0));
}

// h[i] = (h[i] - c[rev(i)]) * z_inv: the coset H form's coefficients. h holds the
// coefficients of A·B on the coset, c those of C in bit-reversed order (a DIF's output),
// both Montgomery; z_inv is 1/(g^n - 1) raw, so the product leaves Montgomery form.
extern "C" __global__ void fr_quotient_coefficients(uint64_t* h, const uint64_t* __restrict__ c,
                                                    const uint64_t* __restrict__ z_inv,
                                                    uint32_t log_n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (1u << log_n)) {
        const uint32_t j = __brev(i) >> (32 - log_n);
        fr_store(h, i, (fr_load(h, i) - fr_load_ro(c, j)) * fr_load_ro(z_inv, 0));
    }
}

// c[i] = a[i] * b[i] (Montgomery): the odd H form's C on the domain (snarkjs keys store no C).
extern "C" __global__ void fr_mul_pointwise(uint64_t* c, const uint64_t* a, const uint64_t* b,
                                            uint32_t n) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) fr_store(c, i, fr_load(a, i) * fr_load(b, i));
}
