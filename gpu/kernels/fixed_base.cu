// Batch fixed-base scalar multiplication k_i * G (driven by gpu/fixed_base.py).
//
// The table holds d * 2^(8w) * G for 32 byte-windows w and bytes d (row d = 0 unused),
// affine, Montgomery form. One thread per scalar adds one table entry per non-zero byte
// (at most 32 mixed additions, no doublings), then converts to affine with one inversion
// and writes standard form (zeros for infinity).
#include "curve.cuh"
#include "msm_scalar.cuh"

#define FIXED_BASE_WINDOWS 32
#define FIXED_BASE_ENTRIES 256

template <class F>
__device__ __forceinline__ void fixed_base_mul(const uint64_t* table, const uint64_t* scalars,
                                               uint32_t n, uint64_t* out) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    scalar_t s = scalar_t::load(scalars + 4 * (uint64_t)i);
    s.reduce();
    xyzz_t<F> acc = xyzz_t<F>::infinity();
    for (int w = 0; w < FIXED_BASE_WINDOWS; w++) {
        uint32_t d = s.bits(8 * w, 8);
        if (d == 0) continue;
        const uint64_t* entry = table + (uint64_t)(w * FIXED_BASE_ENTRIES + d) * 2 * F::WORDS;
        acc = acc.add_affine(affine_t<F>::load(entry));
    }
    acc.to_affine().from_mont().store(out + (uint64_t)i * 2 * F::WORDS);
}

extern "C" __global__ void fixed_base_mul_g1(const uint64_t* table, const uint64_t* scalars,
                                             uint32_t n, uint64_t* out) {
    fixed_base_mul<fq_t>(table, scalars, n, out);
}
extern "C" __global__ void fixed_base_mul_g2(const uint64_t* table, const uint64_t* scalars,
                                             uint32_t n, uint64_t* out) {
    fixed_base_mul<fq2_t>(table, scalars, n, out);
}
