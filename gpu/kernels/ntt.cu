// Radix-2 NTT over Fr, several stages per launch in shared memory.
//
// Stage s (0-based, DIT numbering) pairs elements 2^s apart. A pass runs `stages`
// consecutive stages starting at `first_stage`: with lo = 2^first_stage, the elements
//     i = hi * lo * 2^stages + j * lo + low        (j < 2^stages, low < lo)
// that share (hi, low) only meet each other, so one block loads such groups into shared
// memory, runs the stages there and writes back in place. A block takes 2^log_cols
// adjacent values of `low` so that its global accesses come in runs of 2^log_cols
// elements rather than single 32-byte sectors.
//
// DIT (Cooley-Tukey) runs the stages upward and turns bit-reversed input into natural
// output; DIF (Gentleman-Sande) runs them downward, natural to bit-reversed. Pairing a DIF
// inverse with a DIT forward (the quotient's intt -> coset ntt) needs no permutation at
// all; a natural-to-natural DIT reads its first pass from bit-reversed addresses (GATHER),
// which costs nothing extra because every element is a whole 32-byte sector anyway.
//
// Scales by index (coset shifts, 1/n, conversion out of Montgomery form) ride on the
// first pass's loads and the last pass's stores, indexed by each element's natural index.
#include "fr_vec.cuh"

#define NTT_MAX_LOG_BLOCK 10  // 2^10 elements = 32 KiB of shared memory per block
#define NTT_THREADS 256

#define NTT_DIF 1u
#define NTT_INVERSE 2u
#define NTT_GATHER 4u  // read src at bit-reversed addresses (src must not be dst)

__device__ __forceinline__ uint32_t bit_reverse(uint32_t i, uint32_t log_n) {
    return __brev(i) >> (32 - log_n);
}

// twiddles[k] = omega^k for k <= n/2 (Montgomery); omega^-k = -omega^(n/2 - k).
extern "C" __global__ void __launch_bounds__(NTT_THREADS)
ntt_pass(const uint64_t* src, uint64_t* dst, const uint64_t* __restrict__ twiddles,
         uint32_t log_n, uint32_t first_stage, uint32_t stages, uint32_t log_cols, uint32_t flags,
         const uint64_t* pre_lo, const uint64_t* pre_hi,
         const uint64_t* post_lo, const uint64_t* post_hi) {
    __shared__ uint4 s_lo[1 << NTT_MAX_LOG_BLOCK];
    __shared__ uint4 s_hi[1 << NTT_MAX_LOG_BLOCK];

    const bool dif = flags & NTT_DIF;
    const bool inverse = flags & NTT_INVERSE;
    const uint32_t elems = 1u << (stages + log_cols);
    const uint32_t col_mask = (1u << log_cols) - 1;
    const uint32_t col_blocks_log = first_stage - log_cols;
    const uint32_t col0 = (blockIdx.x & ((1u << col_blocks_log) - 1)) << log_cols;
    const uint32_t base = ((blockIdx.x >> col_blocks_log) << (first_stage + stages)) + col0;

    for (uint32_t e = threadIdx.x; e < elems; e += blockDim.x) {
        const uint32_t pos = base + ((e >> log_cols) << first_stage) + (e & col_mask);
        fr_t x = fr_load(src, (flags & NTT_GATHER) ? bit_reverse(pos, log_n) : pos);
        if (pre_lo) x = fr_scale(x, pre_lo, pre_hi, dif ? pos : bit_reverse(pos, log_n));
        s_lo[e] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
        s_hi[e] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
    }
    __syncthreads();

    const uint32_t half_n = 1u << (log_n - 1);
    for (uint32_t step = 0; step < stages; step++) {
        const uint32_t m = dif ? stages - 1 - step : step;
        const uint32_t low_mask = (1u << m) - 1;
        const bool unit_twiddles = first_stage + m == 0;  // the span-1 stage: every w is 1
        for (uint32_t q = threadIdx.x; q < elems / 2; q += blockDim.x) {
            const uint32_t c = q & col_mask, r = q >> log_cols;
            const uint32_t j_low = r & low_mask;
            const uint32_t e0 = ((((r >> m) << (m + 1)) | j_low) << log_cols) | c;
            const uint32_t e1 = e0 + (1u << (m + log_cols));
            // Position modulo the butterfly span 2^(first_stage+m), scaled to omega_n.
            const uint32_t t = (j_low << first_stage) + col0 + c;
            const uint32_t k = t << (log_n - 1 - first_stage - m);
            const fr_t w = inverse ? -fr_load_ro(twiddles, half_n - k) : fr_load_ro(twiddles, k);
            const fr_t x = fr_from_words(s_lo[e0], s_hi[e0]);
            fr_t y = fr_from_words(s_lo[e1], s_hi[e1]);
            fr_t u, v;
            if (dif) {
                u = x + y;
                v = unit_twiddles ? x - y : (x - y) * w;
            } else {
                if (!unit_twiddles) y = y * w;
                u = x + y;
                v = x - y;
            }
            s_lo[e0] = make_uint4(u.v[0], u.v[1], u.v[2], u.v[3]);
            s_hi[e0] = make_uint4(u.v[4], u.v[5], u.v[6], u.v[7]);
            s_lo[e1] = make_uint4(v.v[0], v.v[1], v.v[2], v.v[3]);
            s_hi[e1] = make_uint4(v.v[4], v.v[5], v.v[6], v.v[7]);
        }
        __syncthreads();
    }

    for (uint32_t e = threadIdx.x; e < elems; e += blockDim.x) {
        const uint32_t pos = base + ((e >> log_cols) << first_stage) + (e & col_mask);
        fr_t x = fr_from_words(s_lo[e], s_hi[e]);
        if (post_lo) x = fr_scale(x, post_lo, post_hi, dif ? bit_reverse(pos, log_n) : pos);
        fr_store(dst, pos, x);
    }
}

// out[i] = lo[i & mask] * hi[i >> bits]: expands a split power table (twiddles) on the device.
extern "C" __global__ void fr_expand_powers(uint64_t* out, const uint64_t* __restrict__ lo,
                                            const uint64_t* __restrict__ hi, uint32_t count) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) fr_store(out, i, fr_load_ro(lo, i & SCALE_LO_MASK) * fr_load_ro(hi, i >> SCALE_LO_BITS));
}
