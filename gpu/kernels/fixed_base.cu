// Batch fixed-base scalar multiplication kernels (gpu/fixed_base.py): one launch makes n
// points, gridDim.x * blockDim.x threads of fixed_base_thread (fixed_base.cuh) each.
#include "fixed_base.cuh"

#define FIXED_BASE_KERNEL(name, F, MONT_OUT)                                                \
    extern "C" __global__ void name(const uint64_t* table, uint32_t c,                     \
                                    const uint64_t* scalars, uint32_t n,                   \
                                    uint32_t per_thread, uint64_t* scratch, uint64_t* out, \
                                    uint8_t* inf) {                                         \
        fixed_base_thread<F, MONT_OUT>(table, c, scalars, n, per_thread,                   \
                                       blockIdx.x * blockDim.x + threadIdx.x,               \
                                       gridDim.x * blockDim.x, scratch, out, inf);          \
    }

FIXED_BASE_KERNEL(fixed_base_mul_g1, fq_t, false)
FIXED_BASE_KERNEL(fixed_base_mul_g2, fq2_t, false)
FIXED_BASE_KERNEL(fixed_base_table_g1, fq_t, true)
FIXED_BASE_KERNEL(fixed_base_table_g2, fq2_t, true)
