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

// One block of a pass: thread t of it, shared memory from s_lo (2^E low halves, then the
// 2^E high halves); every thread of the block takes part.
template <int R, bool DIF>
__device__ __forceinline__ void ntt_block(const ntt_pass_t<R>& p, uint32_t t, const uint64_t* src,
                                          uint64_t* dst, const uint64_t* __restrict__ twiddles,
                                          const ntt_scale_t& pre, const ntt_scale_t& post,
                                          uint4* s_lo) {
    uint4* s_hi = s_lo + (1u << p.log_elems());
    fr_t x[1 << R];
    ntt_load_round<R>(x, p, t, src, pre);
    for (uint32_t step = 0;; step++) {
        const uint32_t i = p.round_at(step);
        ntt_round<R, DIF>(x, p, t, i, twiddles);
        if (step + 1 == p.rounds()) break;
        if (step > 0) __syncthreads();  // every thread has read the previous exchange
        ntt_to_shared<R>(x, p, t, i, s_lo, s_hi);
        __syncthreads();
        ntt_from_shared<R>(x, p, t, p.round_at(step + 1), s_lo, s_hi);
    }
    ntt_store_round<R>(x, p, t, dst, post);
}

template <int R, bool DIF>
__device__ __forceinline__ void ntt_pass(const uint64_t* src, uint64_t* dst,
                                         const uint64_t* __restrict__ twiddles, uint32_t log_n,
                                         uint32_t first_stage, uint32_t stages,
                                         uint32_t log_cols, uint32_t flags,
                                         ntt_scale_t pre, ntt_scale_t post) {
    extern __shared__ uint4 s_words[];  // 32 bytes a block element (the launch sizes it)
    const ntt_pass_t<R> p = {log_n, first_stage, stages, log_cols, flags, blockIdx.x};
    ntt_block<R, DIF>(p, threadIdx.x, src, dst, twiddles, pre, post, s_words);
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

// Pass k of a fused transform (ntt_pass.cuh ntt_grid_t): this block's sub-blocks stride
// over the pass's blocks; the first pass reads src, the later ones dst in place.
template <int R, bool DIF>
__device__ __forceinline__ void ntt_grid_pass(const ntt_grid_t& g, uint32_t k, const uint64_t* src,
                                              uint64_t* dst, const uint64_t* __restrict__ twiddles,
                                              const ntt_scale_t& pre, const ntt_scale_t& post,
                                              uint32_t log_block) {
    extern __shared__ uint4 s_words[];
    const uint32_t sub = g.sub_block(k, threadIdx.x), t = g.sub_thread(k, threadIdx.x);
    const ntt_scale_t none = {0, 0, false};
    const ntt_scale_t first_pre = k == 0 ? pre : none, last_post = k + 1 == g.count() ? post : none;
    for (uint32_t b = g.first_block(k, blockIdx.x, log_block); b < g.blocks(k);
         b += g.grid_step(k, gridDim.x, log_block)) {
        if (b != g.first_block(k, blockIdx.x, log_block)) __syncthreads();  // shared reused
        ntt_block<R, DIF>(g.pass<R>(k, b + sub), t, k == 0 ? src : dst, dst, twiddles,
                          first_pre, last_post,
                          s_words + g.shared_offset(k, sub));
    }
}

// Every pass of a transform in one cooperative launch; `barrier` is two words (zero at
// first) that no other launch uses at the same time (gpu/ntt.py keeps one per stream).
#define NTT_FUSED_KERNEL(NAME, DIF)                                                            \
    extern "C" __global__ void __launch_bounds__(1 << (NTT_MAX_LOG_BLOCK - 2))                 \
    NAME(const uint64_t* src, uint64_t* dst, const uint64_t* __restrict__ twiddles,            \
         uint32_t log_n, uint32_t flags, uint64_t shape, const uint64_t* pre_lo,               \
         const uint64_t* pre_hi, const uint64_t* post_lo, const uint64_t* post_hi,             \
         uint32_t* barrier) {                                                                  \
        const ntt_grid_t g = {log_n, flags, shape};                                            \
        const ntt_scale_t pre = {pre_lo, pre_hi, (flags & NTT_PRE_CONST) != 0};                \
        const ntt_scale_t post = {post_lo, post_hi, (flags & NTT_POST_CONST) != 0};            \
        const uint32_t log_block = 31 - __clz(blockDim.x);                                     \
        for (uint32_t k = 0; k < g.count(); k++) {                                             \
            if (k > 0) {                                                                       \
                __syncthreads();                                                               \
                if (threadIdx.x == 0) ntt_grid_barrier(barrier, gridDim.x);                    \
                __syncthreads();                                                               \
            }                                                                                  \
            if (g.per_thread(k) == 1)                                                          \
                ntt_grid_pass<1, DIF>(g, k, src, dst, twiddles, pre, post, log_block);         \
            else                                                                               \
                ntt_grid_pass<2, DIF>(g, k, src, dst, twiddles, pre, post, log_block);         \
        }                                                                                      \
    }
NTT_FUSED_KERNEL(ntt_fused_dit, false)
NTT_FUSED_KERNEL(ntt_fused_dif, true)

// out[i] = lo[i & mask] * hi[i >> bits]: expands a split power table (twiddles) on the device.
extern "C" __global__ void fr_expand_powers(uint64_t* out, const uint64_t* __restrict__ lo,
                                            const uint64_t* __restrict__ hi, uint32_t count) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) fr_store(out, i, fr_load_ro(lo, i & SCALE_LO_MASK) * fr_load_ro(hi, i >> SCALE_LO_BITS));
}
