// Fr NTT passes (driven by gpu/ntt.py; the per-thread steps are in ntt_pass.cuh).
//
// A pass is one launch: each block loads its 2^(stages + log_cols) elements straight into
// registers (2^R a thread), runs the pass's stages in rounds of up to R stages on them,
// trading elements through shared memory between rounds, and stores them back in place.
// One kernel per direction and R; blocks have 2^(stages + log_cols - R) threads and
// 32 bytes of dynamic shared memory per element (at most 2^NTT_MAX_LOG_BLOCK of them).
//
// Pairing a DIF inverse with a DIT forward (the quotient's intt -> coset ntt) needs no
// permutation at all; a natural-to-natural DIT reads its first pass from bit-reversed
// addresses (GATHER), which costs nothing extra because every element is a whole 32-byte
// sector anyway.
#include "ntt_pass.cuh"

// Programmatic dependent launch (gpu/launch.py joins a transform's passes with programmatic
// edges): a pass lets the next one's blocks start once all of its own have started, and
// the next one waits for this one's completion and memory before touching the data. Both
// are no-ops for a kernel launched without such an edge.
__device__ __forceinline__ void ntt_let_next_pass_start() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}
__device__ __forceinline__ void ntt_wait_for_previous_pass() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

template <int R, bool DIF>
__device__ __forceinline__ void ntt_pass(const uint64_t* src, uint64_t* dst,
                                         const uint64_t* __restrict__ twiddles, uint32_t log_n,
                                         uint32_t first_stage, uint32_t stages,
                                         uint32_t log_cols, uint32_t flags,
                                         ntt_scale_t pre, ntt_scale_t post) {
    extern __shared__ uint4 s_words[];  // 32 bytes a block element (the launch sizes it)
    const ntt_pass_t<R> p = {log_n, first_stage, stages, log_cols, flags, blockIdx.x};
    uint4 *s_lo = s_words, *s_hi = s_words + (1u << p.log_elems());
    const uint32_t t = threadIdx.x;
    constexpr bool ahead = ntt_twiddles_t<R>::ahead;
    fr_t x[1 << R];
    ntt_twiddles_t<R> tw;
    ntt_let_next_pass_start();
    if (ahead) ntt_round_twiddles<R>(tw, p, t, p.round_at(0), twiddles);
    ntt_wait_for_previous_pass();
    ntt_load_round<R>(x, p, t, src, pre);
    for (uint32_t step = 0;; step++) {
        const uint32_t i = p.round_at(step);
        ntt_round<R, DIF>(x, p, t, i, tw, twiddles);
        if (step + 1 == p.rounds()) break;
        if (ahead) ntt_round_twiddles<R>(tw, p, t, p.round_at(step + 1), twiddles);
        if (step > 0) __syncthreads();  // every thread has read the previous exchange
        ntt_to_shared<R>(x, p, t, i, s_lo, s_hi);
        __syncthreads();
        ntt_from_shared<R>(x, p, t, p.round_at(step + 1), s_lo, s_hi);
    }
    ntt_store_round<R>(x, p, t, dst, post);
}

#define NTT_PASS_KERNEL(NAME, R, DIF)                                                          \
    extern "C" __global__ void __launch_bounds__(1 << (NTT_MAX_LOG_BLOCK - R))                 \
    NAME(const uint64_t* src, uint64_t* dst, const uint64_t* __restrict__ twiddles,            \
         uint32_t log_n, uint32_t first_stage, uint32_t stages, uint32_t log_cols,             \
         uint32_t flags, const uint64_t* pre_lo, const uint64_t* pre_hi,                       \
         const uint64_t* post_lo, const uint64_t* post_hi) {                                   \
        ntt_pass<R, DIF>(src, dst, twiddles, log_n, first_stage, stages, log_cols, flags,      \
                         ntt_scale_t{pre_lo, pre_hi, (flags & NTT_PRE_CONST) != 0},            \
                         ntt_scale_t{post_lo, post_hi, (flags & NTT_POST_CONST) != 0});        \
    }
NTT_PASS_KERNEL(ntt_pass_dit_r1, 1, false)
NTT_PASS_KERNEL(ntt_pass_dit_r2, 2, false)
NTT_PASS_KERNEL(ntt_pass_dif_r1, 1, true)
NTT_PASS_KERNEL(ntt_pass_dif_r2, 2, true)

// out[i] = lo[i & mask] * hi[i >> bits]: expands a split power table (twiddles) on the device.
extern "C" __global__ void fr_expand_powers(uint64_t* out, const uint64_t* __restrict__ lo,
                                            const uint64_t* __restrict__ hi, uint32_t count) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) fr_store(out, i, fr_load_ro(lo, i & SCALE_LO_MASK) * fr_load_ro(hi, i >> SCALE_LO_BITS));
}
