// Host (g++) build of the kernel headers, for tests on machines without a GPU: thin
// extern "C" loops over arrays of raw limbs, one entry per operation.
#include <cstddef>
#include <vector>

#include "curve.cuh"
#include "fixed_base.cuh"
#include "msm_buckets.cuh"
#include "msm_scalar.cuh"
#include "ntt_pass.cuh"
#include "porep_witness.cuh"
#include "spmv.cuh"
#include "tape.cuh"

namespace {

enum Op { ADD, SUB, MUL, SQR, TO_MONT, FROM_MONT, INVERSE, NEG, PRODUCT_DIFFERENCE };

template <class F>
int apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n, int words) {
    for (long i = 0; i < n; i++) {
        F x = F::load(a + i * words), y = F::load(b + i * words), r;
        switch (op) {
            case ADD: r = x + y; break;
            case SUB: r = x - y; break;
            case MUL: r = x * y; break;
            case SQR: r = x.sqr(); break;
            case TO_MONT: r = x.to_mont(); break;
            case FROM_MONT: r = x.from_mont(); break;
            case INVERSE: r = x.inverse(); break;
            case NEG: r = -x; break;
            case PRODUCT_DIFFERENCE: r = F::product_difference(x, y, y, y); break;  // x·y - y²
            default: return -1;
        }
        r.store(out + i * words);
    }
    return 0;
}

enum LazyOp { ADD_LAZY, SUB_LAZY, MUL_LAZY };

// The lazy operations (values below 2p; field.cuh) of a prime field.
template <class F>
int lazy_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n, int words) {
    for (long i = 0; i < n; i++) {
        F x = F::load(a + i * words), y = F::load(b + i * words), r;
        switch (op) {
            case ADD_LAZY: r = F::add_lazy(x, y); break;
            case SUB_LAZY: r = F::sub_lazy(x, y); break;
            case MUL_LAZY: r = F::mul_lazy(x, y); break;
            default: return -1;
        }
        r.store(out + i * words);
    }
    return 0;
}

enum PointOp { P_ADD, P_MADD, P_DBL, P_DBL_AFFINE, P_ADD_PROJ, P_MADD_PROJ, P_MADD_NEG };

// Affine standard-form inputs in, affine standard-form output: the XYZZ formulas are
// exercised with unit and non-unit Z (the *_PROJ ops double first) and the inversion.
template <class F>
int point_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    typedef affine_t<F> A;
    typedef xyzz_t<F> X;
    const int words = 2 * F::WORDS;
    for (long i = 0; i < n; i++) {
        A p = A::load(a + i * words).to_mont(), q = A::load(b + i * words).to_mont();
        X r;
        switch (op) {
            case P_ADD: r = X::from_affine(p) + X::from_affine(q); break;
            case P_MADD: r = X::from_affine(p).add_affine(q); break;
            case P_DBL: r = X::from_affine(p).dbl(); break;
            case P_DBL_AFFINE: r = X::dbl_affine(p); break;
            case P_ADD_PROJ: r = X::from_affine(p).dbl() + X::from_affine(q).dbl(); break;
            case P_MADD_PROJ: r = X::from_affine(p).dbl().add_affine(q); break;
            case P_MADD_NEG: r = X::from_affine(p).add_affine(-q); break;
            default: return -1;
        }
        r.to_affine().from_mont().store(out + i * words);
    }
    return 0;
}

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

// The MSM's bucket phase on the CPU with msm_buckets.cuh's per-thread functions, run for
// every thread index in turn: with `tabled`, the window table first (window_table_rows);
// counting sort of the signed digits (padding slots to n * windows, as on the device),
// bucket levels until one chunk remains, reduce_segments, then a plain sum of each bucket
// set's runs, for the digits of windows [w_lo, w_hi) (a window group; 0 and `windows` for
// all). Writes the XYZZ sums (Montgomery form): one per window of the group, or one in all
// when tabled. With ones_per > 0 the ones are summed apart as msm_split_ones and msm_ones_* do
// (listed in index order here, ones_per a thread, the partials added in turn): they get no
// digits, the slots are for the other scalars' digits alone, and their sum is one more row.
template <class F>
void msm_window_sums(const uint64_t* bases_std, const uint64_t* scalars, long n, int c,
                     int windows, int w_lo, int w_hi, int run_bits, int chunk, int tabled,
                     int ones_per, uint64_t* out) {
    const int stride = 4 * F::WORDS, bucket_bits = c - 1, sets = tabled ? 1 : w_hi - w_lo;
    const uint32_t keys_total = (uint32_t)sets << bucket_bits;
    const uint32_t table_stride = tabled ? (uint32_t)n : 0;
    std::vector<uint64_t> bases(bases_std, bases_std + n * 2 * F::WORDS);
    bases.resize((tabled ? windows : 1) * n * 2 * F::WORDS);
    for (long i = 0; i < n; i++)
        affine_t<F>::load(&bases[i * 2 * F::WORDS]).to_mont().store(&bases[i * 2 * F::WORDS]);
    if (tabled)
        for (long i = 0; i < n; i++)
            window_table_rows<F>((uint32_t)i, bases.data(), (uint32_t)n, c, windows);

    // count[k + 1]: bucket k's digits; as on the device, the prefix sum's cursors end as
    // the bucket ends that level 0 reads (bucket_ends)
    std::vector<uint32_t> count(keys_total + 1, 0), entry_of, key_of, ones;
    uint32_t others = 0;
    for (long i = 0; i < n; i++) {
        scalar_t s = scalar_t::load(scalars + 4 * i);
        s.reduce();
        if (ones_per && s.is_one()) {
            ones.push_back((uint32_t)i);
            continue;
        }
        others += !s.is_zero();
        uint32_t carry = 0;
        for (int w = 0; w < w_hi; w++) {
            int d = signed_digit(s, w, c, carry);
            if (d == 0 || w < w_lo) continue;
            digit_slot placed = place_digit((uint32_t)i, w, d, c, table_stride, w_lo);
            key_of.push_back(placed.key);
            entry_of.push_back(placed.entry);
            count[placed.key + 1]++;
        }
    }
    for (uint32_t k = 0; k < keys_total; k++) count[k + 1] += count[k];
    uint32_t len = (uint32_t)((ones_per ? others : n) * (w_hi - w_lo));
    std::vector<uint32_t> entries(len, 0);
    for (std::size_t j = 0; j < key_of.size(); j++) entries[count[key_of[j]]++] = entry_of[j];

    if (ones_per) {
        uint32_t count_ones = (uint32_t)ones.size(), threads = (count_ones + ones_per - 1) / ones_per;
        std::vector<uint64_t> partials((std::size_t)threads * stride, 0);
        for (uint32_t t = 0; t < threads; t++)
            ones_partial<F>(t, bases.data(), ones.data(), count_ones, ones_per, partials.data());
        xyzz_t<F> acc = xyzz_t<F>::infinity();
        for (uint32_t t = 0; t < threads; t++) acc += xyzz_t<F>::load(&partials[(std::size_t)t * stride]);
        acc.store(out + (std::size_t)sets * stride);
    }
    if (len == 0) return;  // no digits: the device launches no bucket phase either

    std::vector<uint64_t> buckets((std::size_t)keys_total * stride, 0), points;
    std::vector<uint32_t> keys;
    bool first_level = true;
    while (true) {
        uint32_t chunks = (len + chunk - 1) / chunk;
        std::vector<uint64_t> next_points((std::size_t)2 * chunks * stride);
        std::vector<uint32_t> next_keys(2 * chunks);
        for (uint32_t t = 0; t < chunks; t++) {
            if (first_level) {
                affine_entries<F> source = {bases.data(), entries.data()};
                bucket_ends walk = {count.data(), keys_total, len};
                bucket_level<F>(t, source, walk, chunk, buckets.data(), next_points.data(),
                                next_keys.data());
            } else {
                xyzz_partials<F> source = {points.data()};
                slot_keys listed = {keys.data(), len};
                bucket_level<F>(t, source, listed, chunk, buckets.data(), next_points.data(),
                                next_keys.data());
            }
        }
        if (chunks == 1) break;
        points.swap(next_points);
        keys.swap(next_keys);
        len = 2 * chunks;
        first_level = false;
    }

    uint32_t runs_per_window = 1u << (bucket_bits - run_bits), runs = sets * runs_per_window;
    std::vector<uint64_t> run_sums((std::size_t)runs * stride);
    for (uint32_t t = 0; t < runs; t++)
        reduce_segments<F>(t, buckets.data(), bucket_bits, run_bits, runs, run_sums.data());
    for (int w = 0; w < sets; w++) {
        xyzz_t<F> acc = xyzz_t<F>::infinity();
        for (uint32_t j = 0; j < runs_per_window; j++)
            acc += xyzz_t<F>::load(&run_sums[((std::size_t)w * runs_per_window + j) * stride]);
        acc.store(out + (std::size_t)w * stride);
    }
}

}  // namespace

extern "C" {

int fr_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return apply<fr_t>(op, a, b, out, n, 4);
}
int fq_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return apply<fq_t>(op, a, b, out, n, 6);
}
int fr_lazy_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return lazy_apply<fr_t>(op, a, b, out, n, 4);
}
int fq_lazy_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return lazy_apply<fq_t>(op, a, b, out, n, 6);
}
int g1_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return point_apply<fq_t>(op, a, b, out, n);
}
int g2_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return point_apply<fq2_t>(op, a, b, out, n);
}

// Signed digits of n scalars (reduced mod r first), row-major (n, windows).
void signed_digits(const uint64_t* scalars, long n, int c, int windows, int32_t* out) {
    for (long i = 0; i < n; i++) {
        scalar_t s = scalar_t::load(scalars + 4 * i);
        s.reduce();
        uint32_t carry = 0;
        for (int w = 0; w < windows; w++) out[i * windows + w] = signed_digit(s, w, c, carry);
    }
}

void msm_window_sums_g1(const uint64_t* bases, const uint64_t* scalars, long n, int c,
                        int windows, int w_lo, int w_hi, int run_bits, int chunk, int tabled,
                        int ones_per, uint64_t* out) {
    msm_window_sums<fq_t>(bases, scalars, n, c, windows, w_lo, w_hi, run_bits, chunk, tabled,
                         ones_per, out);
}
void msm_window_sums_g2(const uint64_t* bases, const uint64_t* scalars, long n, int c,
                        int windows, int w_lo, int w_hi, int run_bits, int chunk, int tabled,
                        int ones_per, uint64_t* out) {
    msm_window_sums<fq2_t>(bases, scalars, n, c, windows, w_lo, w_hi, run_bits, chunk, tabled,
                         ones_per, out);
}

// Level 0's slot keys as each of its threads walks them (bucket_ends): keys[s] for every
// slot of every `chunk`-slot chunk, and per chunk t whether its first run continues from
// the slot before (open[2t]) and its last run into the slot after (open[2t + 1]).
void bucket_ends_walk(const uint32_t* ends, uint32_t count, uint32_t len, uint32_t chunk,
                      uint32_t* keys, uint8_t* open) {
    for (uint32_t t = 0; t * chunk < len; t++) {
        uint32_t start = t * chunk, end = len - start < chunk ? len : start + chunk;
        const bucket_ends walk = {ends, count, len};
        uint32_t key = walk.first(start);
        for (uint32_t s = start; s < end; s++) keys[s] = key = walk.next(s, key);
        open[2 * t] = start > 0 && walk.holds(start - 1, keys[start]);
        open[2 * t + 1] = walk.holds(end, keys[end - 1]);
    }
}

// The fixed-base kernels' threads run one after another: `threads` threads of
// fixed_base_thread over n points (`scratch` 3 field elements a point).
void fixed_base_host(int group, int mont_out, const uint64_t* table, uint32_t c,
                     const uint64_t* scalars, uint32_t n, uint32_t per_thread, uint32_t threads,
                     uint64_t* scratch, uint64_t* out, uint8_t* inf) {
    for (uint32_t t = 0; t < threads; t++) {
        if (group == 1 && mont_out)
            fixed_base_thread<fq_t, true>(table, c, scalars, n, per_thread, t, threads, scratch, out, inf);
        else if (group == 1)
            fixed_base_thread<fq_t, false>(table, c, scalars, n, per_thread, t, threads, scratch, out, inf);
        else if (mont_out)
            fixed_base_thread<fq2_t, true>(table, c, scalars, n, per_thread, t, threads, scratch, out, inf);
        else
            fixed_base_thread<fq2_t, false>(table, c, scalars, n, per_thread, t, threads, scratch, out, inf);
    }
}

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

int fq2_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return apply<fq2_t>(op, a, b, out, n, 12);
}

// The porep witness kernel's threads, one after another (arguments as in porep_witness.cu).
void porep_witness_host(const uint64_t* schedule, uint32_t half, uint32_t partial,
                        const uint64_t* commitments, const uint64_t* index,
                        const uint64_t* leaves, const uint64_t* siblings, const int32_t* slots,
                        uint32_t depth, uint32_t sboxes, uint32_t challenges, uint32_t stride,
                        uint64_t aux_offset, uint64_t* witness, uint32_t* flags) {
    porep_witness_args a{{schedule, half, partial}, commitments, index, leaves, siblings, slots,
                         {depth, sboxes}, challenges, stride, aux_offset, witness, flags};
    for (uint32_t t = 0; t < 3 * challenges; t++) porep_witness_thread(t, a);
}

// The tape kernel's calls one after another, each step's ops in order (tape.cu's
// arguments, the call count instead of the grid).
void tape_run_host(const tape_op* ops, const int32_t* step_ends, int32_t steps,
                   const int32_t* terms, const uint64_t* consts, const int32_t* num_index,
                   const uint8_t* slot_is_num, int32_t slots, int32_t registers, int32_t numbers,
                   int32_t sums, int32_t aux_count, int32_t input_count, int32_t data_words,
                   const int64_t* refs, const uint64_t* data, const int64_t* aux_base,
                   const int64_t* input_base, int64_t calls, uint64_t* aux, uint64_t* inputs) {
    const tape_program p{ops, step_ends, steps, terms, consts, num_index, slot_is_num,
                         slots, registers, numbers, sums, aux_count, input_count, data_words};
    std::vector<uint8_t> bits(registers);
    std::vector<fr_t> nums(numbers > 0 ? numbers : 1);
    std::vector<uint64_t> sum_regs(sums > 0 ? sums : 1);
    for (int64_t c = 0; c < calls; c++) {
        const tape_call call{refs + c * slots, data + 4 * c * data_words, aux_base[c],
                             input_base[c]};
        const tape_registers r = tape_bind(p, call, bits.data(), nums.data(), sum_regs.data());
        tape_load(p, call, r, aux, inputs, 0, 1);
        for (int32_t i = 0; i < (steps ? step_ends[steps - 1] : 0); i++) tape_apply(ops[i], r);
        tape_store(p, call, r, aux, inputs, 0, 1);
    }
}

// The two spmv launches one after the other: every chunk, then every carry (spmv.cu's
// arguments; `out` zero-filled by the caller).
void spmv_host(const long long* indptr, const uint32_t* indices, const uint32_t* codes,
               const uint64_t* table, long long nnz, const uint32_t* chunk_rows,
               const uint64_t* witness, uint64_t* out, uint32_t* carry_rows,
               uint64_t* carry_values, uint64_t chunks) {
    const coded_csr m = {indptr, indices, codes, table, nnz};
    for (uint64_t j = 0; j < chunks; j++)
        spmv_chunk(j, m, chunk_rows[j], witness, out, carry_rows, carry_values);
    for (uint64_t i = 0; i < 2 * chunks; i++) spmv_fixup(i, chunks, carry_rows, carry_values, out);
}

}
