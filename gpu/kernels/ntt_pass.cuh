// One pass of the Fr NTT (kernels in ntt.cu), as host/device functions of the thread so
// that gpu/hostlib runs the very same steps on the CPU, phase by phase.
//
// Stage s (0-based, DIT numbering) pairs elements 2^s apart. A pass runs `stages`
// consecutive stages from `first_stage`: with lo = 2^first_stage, the elements
//     i = hi * lo * 2^stages + j * lo + low        (j < 2^stages, low < lo)
// that share (hi, low) only meet each other. A block takes 2^log_cols adjacent values of
// `low` (so that its global accesses come in runs of 2^log_cols elements): block-local
// element e has bits [0, log_cols) of low and bits [log_cols, log_cols + stages) of j.
//
// Each thread holds 2^R elements in registers (R = log_per_thread, a compile-time
// constant of the kernel) and runs the pass's stages in rounds of up to R stages: in a
// round whose window is j's bits [m, m + r), a thread's elements differ in exactly those
// bits, so it runs r stages alone; between rounds the block trades elements through
// shared memory. The first round (lowest window) has the remainder, stages - R * (rounds
// - 1); when it is shorter than R, a thread's extra element bits go to the top of e.
// The first round reads global memory, the last writes it; DIF runs everything downward.
//
// DIT (Cooley-Tukey) runs the stages upward and turns bit-reversed input into natural
// output; DIF (Gentleman-Sande) runs them downward, natural to bit-reversed. Scales by
// natural index (coset shifts, 1/n, leaving Montgomery form) ride on the first pass's
// loads and the last pass's stores: a split power table lo[i & mask] * hi[i >> bits], or
// one constant hi[0] (NTT_*_CONST).
#pragma once
#include "fr_vec.cuh"

#define NTT_MAX_LOG_BLOCK 10  // 2^10 elements = 32 KiB of shared memory per block
#define NTT_DIF 1u
#define NTT_INVERSE 2u
#define NTT_GATHER 4u      // read src at bit-reversed addresses (src must not be dst)
#define NTT_PRE_CONST 8u   // the pre scale is the constant pre_hi[0]
#define NTT_POST_CONST 16u // the post scale is the constant post_hi[0]

static FIELD_FN uint32_t ntt_bit_reverse(uint32_t i, uint32_t log_n) {
#ifdef __CUDA_ARCH__
    return __brev(i) >> (32 - log_n);
#else
    uint32_t r = 0;
    for (uint32_t b = 0; b < log_n; b++) r |= ((i >> b) & 1) << (log_n - 1 - b);
    return r;
#endif
}

// Shared-memory slot of element e: the low three bits XORed with a linear function of
// bits 3..5, so that the eight lanes of each quarter-warp (one 16-byte access each) hit
// eight different bank groups in every round's pattern (lanes differ in the three lowest
// bits of e outside the round's window; checked for every window in the host tests).
static FIELD_FN uint32_t ntt_swizzle(uint32_t e) {
    return e ^ ((0x8ce578u >> (3 * ((e >> 3) & 7))) & 7);
}

// A split power table, or one constant (hi[0]) when `constant`.
struct ntt_scale_t {
    const uint64_t* lo;
    const uint64_t* hi;
    bool constant;
    FIELD_FN bool present() const { return hi != 0; }
    FIELD_FN fr_t apply(const fr_t& x, uint32_t i) const {
        if (constant) return x * fr_load_ro(hi, 0);
        return x * fr_load_ro(lo, i & SCALE_LO_MASK) * fr_load_ro(hi, i >> SCALE_LO_BITS);
    }
};

// The geometry of one pass for one block; R is log2 of a thread's elements.
template <int R>
struct ntt_pass_t {
    uint32_t log_n, first_stage, stages, log_cols, flags, block;

    FIELD_FN bool dif() const { return flags & NTT_DIF; }
    FIELD_FN uint32_t log_elems() const { return stages + log_cols; }
    FIELD_FN uint32_t threads() const { return 1u << (log_elems() - R); }
    FIELD_FN uint32_t col_mask() const { return (1u << log_cols) - 1; }
    // First column (low) of the block, and the position of its element 0.
    FIELD_FN uint32_t col0() const {
        uint32_t col_blocks_log = first_stage - log_cols;
        return (block & ((1u << col_blocks_log) - 1)) << log_cols;
    }
    FIELD_FN uint32_t base() const {
        return ((block >> (first_stage - log_cols)) << (first_stage + stages)) + col0();
    }
    FIELD_FN uint32_t position(uint32_t e) const {
        return base() + ((e >> log_cols) << first_stage) + (e & col_mask());
    }
    FIELD_FN uint32_t rounds() const { return (stages + R - 1) / R; }
    FIELD_FN uint32_t first_round_size() const { return stages - R * (rounds() - 1); }
    // Round i (DIT order) covers j's bits [round_start(i), + round_size(i)).
    FIELD_FN uint32_t round_start(uint32_t i) const {
        return i == 0 ? 0 : first_round_size() + (i - 1) * R;
    }
    FIELD_FN uint32_t round_size(uint32_t i) const { return i == 0 ? first_round_size() : R; }
    // The round executed as the step-th one (DIF runs them downward).
    FIELD_FN uint32_t round_at(uint32_t step) const { return dif() ? rounds() - 1 - step : step; }
    // Block-local element of thread t's register k in round i: k's low bits fill the
    // round's window, its bits beyond a short round's size the top of e, t the rest
    // from the bottom (so that a warp's lanes touch adjacent elements where they can).
    FIELD_FN uint32_t element(uint32_t t, uint32_t k, uint32_t i) const {
        uint32_t a = log_cols + round_start(i), r = round_size(i);
        uint32_t k_lo = k & ((1u << r) - 1), k_hi = k >> r;
        uint32_t t_lo = t & ((1u << a) - 1), t_hi = t >> a;
        return (k_hi << (log_elems() - R + r)) | (t_hi << (a + r)) | (k_lo << a) | t_lo;
    }
};

// The first round's elements from global memory (bit-reversed addresses with GATHER),
// the pre scale applied by natural index.
template <int R>
FIELD_FN void ntt_load_round(fr_t (&x)[1 << R], const ntt_pass_t<R>& p, uint32_t t,
                             const uint64_t* src, const ntt_scale_t& pre) {
    const uint32_t i = p.round_at(0);
#pragma unroll
    for (int k = 0; k < (1 << R); k++) {
        uint32_t pos = p.position(p.element(t, k, i));
        x[k] = fr_load(src, (p.flags & NTT_GATHER) ? ntt_bit_reverse(pos, p.log_n) : pos);
        if (pre.present())
            x[k] = pre.apply(x[k], p.dif() ? pos : ntt_bit_reverse(pos, p.log_n));
    }
}

// The last round's elements to global memory, the post scale applied by natural index.
template <int R>
FIELD_FN void ntt_store_round(fr_t (&x)[1 << R], const ntt_pass_t<R>& p, uint32_t t,
                              uint64_t* dst, const ntt_scale_t& post) {
    const uint32_t i = p.round_at(p.rounds() - 1);
#pragma unroll
    for (int k = 0; k < (1 << R); k++) {
        uint32_t pos = p.position(p.element(t, k, i));
        fr_t v = post.present() ? post.apply(x[k], p.dif() ? ntt_bit_reverse(pos, p.log_n) : pos)
                                : fr_t::reduce_once(x[k]);
        fr_store(dst, pos, v);
    }
}

// Round i's elements to (or from) the block's shared memory, two 16-byte halves apart.
template <int R>
FIELD_FN void ntt_to_shared(const fr_t (&x)[1 << R], const ntt_pass_t<R>& p, uint32_t t,
                            uint32_t i, uint4* s_lo, uint4* s_hi) {
#pragma unroll
    for (int k = 0; k < (1 << R); k++) {
        uint32_t slot = ntt_swizzle(p.element(t, k, i));
        s_lo[slot] = fr_low_word(x[k]);
        s_hi[slot] = fr_high_word(x[k]);
    }
}
template <int R>
FIELD_FN void ntt_from_shared(fr_t (&x)[1 << R], const ntt_pass_t<R>& p, uint32_t t,
                              uint32_t i, const uint4* s_lo, const uint4* s_hi) {
#pragma unroll
    for (int k = 0; k < (1 << R); k++) {
        uint32_t slot = ntt_swizzle(p.element(t, k, i));
        x[k] = fr_from_words(s_lo[slot], s_hi[slot]);
    }
}

// Twiddle of stage s at position modulo its span `low`, scaled to omega_n:
// twiddles[k] = omega^k for k <= n/2 (Montgomery), omega^-k = -omega^(n/2 - k).
template <int R>
FIELD_FN fr_t ntt_twiddle(const ntt_pass_t<R>& p, const uint64_t* twiddles, uint32_t s,
                          uint32_t low) {
    uint32_t k = low << (p.log_n - 1 - s);
    if (p.flags & NTT_INVERSE) return -fr_load_ro(twiddles, (1u << (p.log_n - 1)) - k);
    return fr_load_ro(twiddles, k);
}

// Twiddle w_index of stage q in round i for thread t: stage q of the window pairs registers
// k and k + 2^q, and its twiddle depends on k only through k mod 2^q. The transform's
// stage 0 multiplies by 1 (one(), never used).
template <int R>
FIELD_FN fr_t ntt_stage_twiddle(const ntt_pass_t<R>& p, uint32_t t, uint32_t i, int q,
                                int w_index, const uint64_t* twiddles) {
    const uint32_t m = p.round_start(i), a = p.log_cols + m;
    const uint32_t t_lo = t & ((1u << a) - 1);
    const uint32_t col = p.col0() + (t_lo & p.col_mask()), j_low = t_lo >> p.log_cols;
    const uint32_t s = p.first_stage + m + q;
    if ((uint32_t)q >= p.round_size(i) || s == 0) return fr_t::one();
    return ntt_twiddle(p, twiddles, s, ((j_low + ((uint32_t)w_index << m)) << p.first_stage) + col);
}

// Where a thread has one twiddle a round (R = 1), the kernel loads the next round's ahead
// of the exchange before it, so that the load's latency hides behind the barrier; R = 2's
// three would hold 14 more registers across it (80 against 64: a block fewer per SM), so
// they load in the round, each stage's after the previous stage's butterflies.
template <int R>
struct ntt_twiddles_t {
    static constexpr bool ahead = R == 1;
    fr_t w[ahead ? (1 << R) - 1 : 1];  // stage q's 2^q at [2^q - 1, 2^(q+1) - 1)
};
template <int R>
FIELD_FN void ntt_round_twiddles(ntt_twiddles_t<R>& tw, const ntt_pass_t<R>& p, uint32_t t,
                                 uint32_t i, const uint64_t* twiddles) {
#pragma unroll
    for (int q = 0; q < R; q++)
#pragma unroll
        for (int w_index = 0; w_index < (1 << q); w_index++)
            tw.w[(1 << q) - 1 + w_index] = ntt_stage_twiddle(p, t, i, q, w_index, twiddles);
}

// Round i's stages on thread t's registers, with its twiddles loaded ahead (tw) or here.
// Values stay lazy (below 2r, field.cuh) from the loads, which are reduced, to the stores,
// which reduce: a pass reads and writes reduced values.
template <int R, bool DIF>
FIELD_FN void ntt_round(fr_t (&x)[1 << R], const ntt_pass_t<R>& p, uint32_t t, uint32_t i,
                        const ntt_twiddles_t<R>& tw, const uint64_t* twiddles) {
    const uint32_t m = p.round_start(i), r = p.round_size(i);
#pragma unroll
    for (int step = 0; step < R; step++) {
        const int q = DIF ? R - 1 - step : step;
        if ((uint32_t)q >= r) continue;
        const bool unit = p.first_stage + m + q == 0;
#pragma unroll
        for (int w_index = 0; w_index < (1 << q); w_index++) {
            const fr_t w = ntt_twiddles_t<R>::ahead
                               ? tw.w[(1 << q) - 1 + w_index]
                               : ntt_stage_twiddle(p, t, i, q, w_index, twiddles);
#pragma unroll
            for (int h = 0; h < (1 << (R - 1 - q)); h++) {
                const int k0 = w_index | (h << (q + 1)), k1 = k0 | (1 << q);
                if (DIF) {
                    fr_t u = fr_t::add_lazy(x[k0], x[k1]), v = fr_t::sub_lazy(x[k0], x[k1]);
                    x[k0] = u;
                    x[k1] = unit ? v : fr_t::mul_lazy(v, w);
                } else {
                    fr_t y = unit ? x[k1] : fr_t::mul_lazy(x[k1], w);
                    x[k1] = fr_t::sub_lazy(x[k0], y);
                    x[k0] = fr_t::add_lazy(x[k0], y);
                }
            }
        }
    }
}
