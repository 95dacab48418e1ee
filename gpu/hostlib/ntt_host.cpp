// Host build of the NTT's passes (ntt_pass.cuh), for tests without a GPU; see
// field_host.cpp.
#include <vector>

#include "ntt_pass.cuh"

namespace {

// One NTT pass over every block as the GPU runs it (ntt.cu ntt_pass): each phase by every
// thread of the block before the next, as the block's barriers order them.
template <int R, bool DIF>
void ntt_pass_blocks(const uint64_t* src, uint64_t* dst, const uint64_t* twiddles,
                     uint32_t log_n, uint32_t first_stage, uint32_t stages, uint32_t log_cols,
                     uint32_t flags, ntt_scale_t pre, ntt_scale_t post) {
    struct registers {
        fr_t x[1 << R];
    };
    const uint32_t blocks = 1u << (log_n - stages - log_cols);
    for (uint32_t block = 0; block < blocks; block++) {
        const ntt_pass_t<R> p = {log_n, first_stage, stages, log_cols, flags, block};
        std::vector<registers> regs(p.threads());
        std::vector<uint4> s_lo(1u << p.log_elems()), s_hi(1u << p.log_elems());
        for (uint32_t t = 0; t < p.threads(); t++) ntt_load_round<R>(regs[t].x, p, t, src, pre);
        for (uint32_t step = 0;; step++) {
            const uint32_t i = p.round_at(step);
            for (uint32_t t = 0; t < p.threads(); t++) {
                ntt_twiddles_t<R> tw;
                if (tw.ahead) ntt_round_twiddles<R>(tw, p, t, i, twiddles);
                ntt_round<R, DIF>(regs[t].x, p, t, i, tw, twiddles);
            }
            if (step + 1 == p.rounds()) break;
            for (uint32_t t = 0; t < p.threads(); t++)
                ntt_to_shared<R>(regs[t].x, p, t, i, s_lo.data(), s_hi.data());
            for (uint32_t t = 0; t < p.threads(); t++)
                ntt_from_shared<R>(regs[t].x, p, t, p.round_at(step + 1), s_lo.data(), s_hi.data());
        }
        for (uint32_t t = 0; t < p.threads(); t++) ntt_store_round<R>(regs[t].x, p, t, dst, post);
    }
}

}  // namespace

extern "C" {

// One NTT pass (arguments as the ntt_pass_* kernels, plus the direction and R); -1 for an
// R the kernels do not have.
int ntt_pass_host(int dif, int per_thread, const uint64_t* src, uint64_t* dst,
                  const uint64_t* twiddles, uint32_t log_n, uint32_t first_stage, uint32_t stages,
                  uint32_t log_cols, uint32_t flags, const uint64_t* pre_lo, const uint64_t* pre_hi,
                  const uint64_t* post_lo, const uint64_t* post_hi) {
    ntt_scale_t pre = {pre_lo, pre_hi, (flags & NTT_PRE_CONST) != 0};
    ntt_scale_t post = {post_lo, post_hi, (flags & NTT_POST_CONST) != 0};
#define NTT_HOST_CASE(R)                                                                      \
    if (per_thread == R) {                                                                    \
        (dif ? ntt_pass_blocks<R, true> : ntt_pass_blocks<R, false>)(                         \
            src, dst, twiddles, log_n, first_stage, stages, log_cols, flags, pre, post);      \
        return 0;                                                                             \
    }
    NTT_HOST_CASE(1)
    NTT_HOST_CASE(2)
#undef NTT_HOST_CASE
    return -1;
}

// The shared-memory slot of every (thread, register) of one round of a pass, row-major
// (threads, 2^R); -1 for an R the kernels do not have.
int ntt_shared_slots(int per_thread, uint32_t stages, uint32_t log_cols, uint32_t round,
                     uint32_t* out) {
#define NTT_SLOTS_CASE(R)                                                                     \
    if (per_thread == R) {                                                                    \
        const ntt_pass_t<R> p = {stages + log_cols, log_cols, stages, log_cols, 0, 0};        \
        for (uint32_t t = 0; t < p.threads(); t++)                                            \
            for (uint32_t k = 0; k < (1u << R); k++)                                          \
                out[t * (1u << R) + k] = ntt_swizzle(p.element(t, k, round));                 \
        return 0;                                                                             \
    }
    NTT_SLOTS_CASE(1)
    NTT_SLOTS_CASE(2)
#undef NTT_SLOTS_CASE
    return -1;
}

}
