// Pippenger multi-scalar multiplication over G1 and G2 (driven by gpu/msm.py).
//
// Scalars are cut into `windows` signed c-bit digits (msm_scalar.cuh); each non-zero digit
// puts ±P_i into bucket |d| - 1 of its window (B = 2^(c-1) buckets a window). The steps,
// one launch each, all on the caller's stream:
//   msm_split_ones the indices of the scalars equal to 1 (a witness's set bits), and how
//                  many are neither 0 nor 1: the host plans the windows for those alone, and
//                  count and scatter give the ones no digits (msm_ones_* sums their bases)
//   msm_count      histogram of bucket keys (key = window * B + bucket; with window
//                  tables one set of B buckets, key = bucket: place_digit)
//   (host: prefix sum of the histogram -> bucket offsets)
//   msm_scatter    counting sort: entry = point index | sign << 31, by bucket; its cursors
//                  (the offsets) end at the buckets' ends, from which level 0 derives each
//                  slot's key (bucket_ends), so no key is stored per digit; for many digits
//                  staged instead (msm_scatter_bins, then msm_scatter_staged)
//   bucket_level*  bucket sums in chunks of equal work, a few levels (see below)
//   reduce_segments  one thread per run of L buckets: the run's share of
//                  sum (k + 1) * bucket_k (suffix sums, plus the run's offset by double-and-add)
//   reduce_windows one block per window: tree sum of its runs
//   msm_ones_*     the bases of the ones listed by msm_split_ones, summed without buckets
//                  (partial sums a thread, then reduce_windows over them)
// The host weights the window sums by 2^(c·w): that is a chain of ~255 dependent
// doublings, which one GPU thread runs at the latency of its carry chains (gpu/msm.py).
// Points in device memory: affine bases in Montgomery form (infinity = (0, 0)); XYZZ
// (Montgomery) everywhere after; zero-filled XYZZ is infinity.
#include "curve.cuh"
#include "msm_buckets.cuh"
#include "msm_scalar.cuh"

__device__ __forceinline__ uint32_t thread_index() { return blockIdx.x * blockDim.x + threadIdx.x; }

template <class F>
__device__ __forceinline__ void bases_to_mont(uint64_t* xy, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t* p = xy + (uint64_t)i * 2 * F::WORDS;
    affine_t<F>::load(p).to_mont().store(p);
}

extern "C" __global__ void msm_bases_to_mont_g1(uint64_t* xy, uint32_t n) { bases_to_mont<fq_t>(xy, n); }
extern "C" __global__ void msm_bases_to_mont_g2(uint64_t* xy, uint32_t n) { bases_to_mont<fq2_t>(xy, n); }

// counts has one slot per bucket key plus one; key k is counted in slot k + 1, so an
// inclusive prefix sum of counts gives each bucket's start at its key and its end at key + 1.
// table_stride: 0 for plain bases, the rows per window of a window table (place_digit).
//
// Window 0 is counted and placed a warp at a time: a witness is mostly bits, and every bit
// is the digit 1 of window 0, one bucket key for ~90% of the scalars. One atomic per digit
// on that key serialises at its L2 slice; grouping the warp's lanes by key
// (__match_any_sync) makes it one atomic per key a warp. The lanes are converged there
// (every thread that passed the bounds check runs window 0 first).
#define MSM_NO_DIGIT 0xFFFFFFFFu  // a lane with no window-0 digit in the group

struct warp_peers {
    uint32_t mask, leader, rank;  // lanes sharing this lane's key; the lowest; this lane's place
};

static __device__ __forceinline__ warp_peers peers_by_key(uint32_t key) {
    warp_peers p;
    p.mask = __match_any_sync(__activemask(), key);
    p.leader = __ffs(p.mask) - 1;
    uint32_t lane = threadIdx.x & 31;
    p.rank = __popc(p.mask & ((1u << lane) - 1));
    return p;
}

// counts[0] += the scalars equal to 1 (their indices appended to `ones`, in no particular
// order), counts[1] += those neither 0 nor 1; one atomic per warp for each.
extern "C" __global__ void msm_split_ones(const uint64_t* scalars, uint32_t n, uint32_t* ones,
                                          uint32_t* counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    scalar_t s = scalar_t::load(scalars + 4 * (uint64_t)i);
    s.reduce();
    bool one = s.is_one(), other = !one && !s.is_zero();
    uint32_t active = __activemask();
    uint32_t one_mask = __ballot_sync(active, one), other_mask = __ballot_sync(active, other);
    uint32_t lane = threadIdx.x & 31, leader = __ffs(active) - 1, start = 0;
    if (lane == leader) {
        if (one_mask) start = atomicAdd(&counts[0], __popc(one_mask));
        if (other_mask) atomicAdd(&counts[1], __popc(other_mask));
    }
    start = __shfl_sync(active, start, leader);
    if (one) ones[start + __popc(one_mask & ((1u << lane) - 1))] = i;
}

// Window 0's digit; 0 for a scalar equal to 1 when `ones_apart` (msm_split_ones listed it,
// msm_ones_* add its basis), which then has no digit at all.
static __device__ __forceinline__ int first_digit(const scalar_t& s, uint32_t c, uint32_t ones_apart,
                                                  uint32_t& carry) {
    return ones_apart && s.is_one() ? 0 : signed_digit(s, 0, c, carry);
}

// Both kernels sort the digits of windows [w_lo, w_hi) only (a window group: gpu/msm.py
// sorts a large MSM's windows a group at a time, so that its digits and partial sums fit a
// smaller scratch); the windows below w_lo still run for their carries.
//
// Window 0's key, or MSM_NO_DIGIT where it has no digit in the group; the carry goes on.
static __device__ __forceinline__ uint32_t window0_key(const scalar_t& s, uint32_t i, uint32_t c,
                                                       uint32_t w_lo, uint32_t table_stride,
                                                       uint32_t ones_apart, uint32_t& carry,
                                                       uint32_t& entry) {
    int d0 = first_digit(s, c, ones_apart, carry);
    digit_slot first = place_digit(i, 0, d0, c, table_stride, w_lo);
    entry = first.entry;
    return d0 && w_lo == 0 ? first.key : MSM_NO_DIGIT;
}

// fn(slot) for each non-zero digit of scalar i in the group's windows above window 0
// (carry: window 0's, from window0_key).
template <class Fn>
static __device__ __forceinline__ void later_digits(const scalar_t& s, uint32_t i, uint32_t c,
                                                    uint32_t w_lo, uint32_t w_hi,
                                                    uint32_t table_stride, uint32_t carry,
                                                    Fn fn) {
    for (uint32_t w = 1; w < w_hi; w++) {
        int d = signed_digit(s, w, c, carry);
        if (d != 0 && w >= w_lo) fn(place_digit(i, w, d, c, table_stride, w_lo));
    }
}

extern "C" __global__ void msm_count(const uint64_t* scalars, uint32_t n, uint32_t c,
                                     uint32_t w_lo, uint32_t w_hi, uint32_t table_stride,
                                     uint32_t ones_apart, uint32_t* counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    scalar_t s = scalar_t::load(scalars + 4 * (uint64_t)i);
    s.reduce();
    uint32_t carry = 0, entry;
    uint32_t key0 = window0_key(s, i, c, w_lo, table_stride, ones_apart, carry, entry);
    warp_peers peers = peers_by_key(key0);
    if (key0 != MSM_NO_DIGIT && peers.rank == 0) atomicAdd(&counts[key0 + 1], __popc(peers.mask));
    later_digits(s, i, c, w_lo, w_hi, table_stride, carry,
                 [&](digit_slot d) { atomicAdd(&counts[d.key + 1], 1u); });
}

extern "C" __global__ void msm_scatter(const uint64_t* scalars, uint32_t n, uint32_t c,
                                       uint32_t w_lo, uint32_t w_hi, uint32_t table_stride,
                                       uint32_t ones_apart, uint32_t* cursor, uint32_t* entries) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    scalar_t s = scalar_t::load(scalars + 4 * (uint64_t)i);
    s.reduce();
    uint32_t carry = 0, entry0;
    uint32_t key0 = window0_key(s, i, c, w_lo, table_stride, ones_apart, carry, entry0);
    warp_peers peers = peers_by_key(key0);
    uint32_t start = 0;
    if (key0 != MSM_NO_DIGIT && peers.rank == 0) start = atomicAdd(&cursor[key0], __popc(peers.mask));
    start = __shfl_sync(peers.mask, start, peers.leader);
    if (key0 != MSM_NO_DIGIT) entries[start + peers.rank] = entry0;
    later_digits(s, i, c, w_lo, w_hi, table_stride, carry,
                 [&](digit_slot d) { entries[atomicAdd(&cursor[d.key], 1u)] = d.entry; });
}

// The staged scatter (gpu/msm.py sort_digits, for sorts of many digits). msm_scatter writes
// each 4-byte entry to a random slot among gigabytes, a partial sector of device memory
// each: 150 ms for a dense 2^27 G1 MSM's 1.7 G digits on an H100, against the count's 21.
// Staged, msm_scatter_bins first moves the digits into bins of 2^bin_shift consecutive
// keys, each block's digits of a bin (per_thread scalars a thread) as one run of
// (key << 32 | entry); bin_cursor[b] starts at bin b's first slot (the bucket offset of its
// first key). msm_scatter_staged then places them bin after bin, so that its writes fall
// within one bin's slots at a time, and leaves the cursors at the buckets' ends, as
// msm_scatter does.
#define MSM_BIN_THREADS 256
#define MSM_MAX_BINS 1024

extern "C" __global__ void __launch_bounds__(MSM_BIN_THREADS)
msm_scatter_bins(const uint64_t* scalars, uint32_t n, uint32_t c, uint32_t w_lo, uint32_t w_hi,
                 uint32_t table_stride, uint32_t ones_apart, uint32_t per_thread,
                 uint32_t bin_shift, uint32_t bins, uint32_t* bin_cursor, uint64_t* staged) {
    __shared__ uint32_t fill[MSM_MAX_BINS], start[MSM_MAX_BINS];
    for (uint32_t b = threadIdx.x; b < bins; b += MSM_BIN_THREADS) fill[b] = 0;
    __syncthreads();
    const uint64_t first = (uint64_t)blockIdx.x * MSM_BIN_THREADS * per_thread + threadIdx.x;
    auto each_digit = [&](auto fn) {  // the block's digits, the same in both passes
        for (uint32_t k = 0; k < per_thread; k++) {
            uint64_t at = first + (uint64_t)k * MSM_BIN_THREADS;
            if (at >= n) return;
            uint32_t i = (uint32_t)at;
            scalar_t s = scalar_t::load(scalars + 4 * (uint64_t)i);
            s.reduce();
            uint32_t carry = 0, entry;
            uint32_t key0 = window0_key(s, i, c, w_lo, table_stride, ones_apart, carry, entry);
            if (key0 != MSM_NO_DIGIT) fn(digit_slot{key0, entry});
            later_digits(s, i, c, w_lo, w_hi, table_stride, carry, fn);
        }
    };
    each_digit([&](digit_slot d) { atomicAdd(&fill[d.key >> bin_shift], 1u); });
    __syncthreads();
    for (uint32_t b = threadIdx.x; b < bins; b += MSM_BIN_THREADS) {
        start[b] = fill[b] ? atomicAdd(&bin_cursor[b], fill[b]) : 0;
        fill[b] = 0;
    }
    __syncthreads();
    each_digit([&](digit_slot d) {
        uint32_t b = d.key >> bin_shift;
        staged[start[b] + atomicAdd(&fill[b], 1u)] = (uint64_t)d.key << 32 | d.entry;
    });
}

// Thread j places staged digit j of the `*total` (the bucket offsets' last: every digit);
// lanes of a warp that share a key (a witness's hot bucket) take one atomic.
extern "C" __global__ void msm_scatter_staged(const uint64_t* staged, const uint32_t* total,
                                              uint32_t* cursor, uint32_t* entries) {
    uint32_t j = thread_index();
    bool live = j < *total;
    uint64_t v = live ? staged[j] : 0;
    uint32_t key = live ? (uint32_t)(v >> 32) : MSM_NO_DIGIT;
    warp_peers peers = peers_by_key(key);
    uint32_t at = 0;
    if (live && peers.rank == 0) at = atomicAdd(&cursor[key], __popc(peers.mask));
    at = __shfl_sync(peers.mask, at, peers.leader);
    if (live) entries[at + peers.rank] = (uint32_t)v;
}

// Window tables: rows w·n + i = 2^(c·w)·P_i for 0 < w < windows, from rows 0..n-1 (the
// bases, Montgomery form, already in place).
extern "C" __global__ void msm_window_table_g1(uint64_t* xy, uint32_t n, uint32_t c, uint32_t windows) {
    uint32_t i = thread_index();
    if (i < n) window_table_rows<fq_t>(i, xy, n, c, windows);
}
extern "C" __global__ void msm_window_table_g2(uint64_t* xy, uint32_t n, uint32_t c, uint32_t windows) {
    uint32_t i = thread_index();
    if (i < n) window_table_rows<fq2_t>(i, xy, n, c, windows);
}

// Level 0 takes the scatter's cursors as the bucket ends (bucket_ends: `keys` buckets,
// `len` slots), later levels the previous level's keys.
extern "C" __global__ void msm_bucket_level0_g1(const uint64_t* bases, const uint32_t* entries,
                                                const uint32_t* ends, uint32_t keys, uint32_t len,
                                                uint32_t chunk, uint64_t* buckets,
                                                uint64_t* next_points, uint32_t* next_keys) {
    affine_entries<fq_t> source = {bases, entries};
    bucket_ends walk = {ends, keys, len};
    bucket_level<fq_t>(thread_index(), source, walk, chunk, buckets, next_points, next_keys);
}
extern "C" __global__ void msm_bucket_level0_g2(const uint64_t* bases, const uint32_t* entries,
                                                const uint32_t* ends, uint32_t keys, uint32_t len,
                                                uint32_t chunk, uint64_t* buckets,
                                                uint64_t* next_points, uint32_t* next_keys) {
    affine_entries<fq2_t> source = {bases, entries};
    bucket_ends walk = {ends, keys, len};
    bucket_level<fq2_t>(thread_index(), source, walk, chunk, buckets, next_points, next_keys);
}
extern "C" __global__ void msm_bucket_level_g1(const uint64_t* points, const uint32_t* keys,
                                               uint32_t len, uint32_t chunk, uint64_t* buckets,
                                               uint64_t* next_points, uint32_t* next_keys) {
    xyzz_partials<fq_t> source = {points};
    slot_keys listed = {keys, len};
    bucket_level<fq_t>(thread_index(), source, listed, chunk, buckets, next_points, next_keys);
}
extern "C" __global__ void msm_bucket_level_g2(const uint64_t* points, const uint32_t* keys,
                                               uint32_t len, uint32_t chunk, uint64_t* buckets,
                                               uint64_t* next_points, uint32_t* next_keys) {
    xyzz_partials<fq2_t> source = {points};
    slot_keys listed = {keys, len};
    bucket_level<fq2_t>(thread_index(), source, listed, chunk, buckets, next_points, next_keys);
}

extern "C" __global__ void msm_ones_g1(const uint64_t* bases, const uint32_t* ones, uint32_t count,
                                       uint32_t per, uint64_t* partials) {
    ones_partial<fq_t>(thread_index(), bases, ones, count, per, partials);
}
extern "C" __global__ void msm_ones_g2(const uint64_t* bases, const uint32_t* ones, uint32_t count,
                                       uint32_t per, uint64_t* partials) {
    ones_partial<fq2_t>(thread_index(), bases, ones, count, per, partials);
}

extern "C" __global__ void msm_reduce_segments_g1(uint64_t* buckets, uint32_t bucket_bits,
                                                  uint32_t run_bits, uint32_t runs_total,
                                                  uint64_t* run_sums) {
    reduce_segments<fq_t>(thread_index(), buckets, bucket_bits, run_bits, runs_total, run_sums);
}
extern "C" __global__ void msm_reduce_segments_g2(uint64_t* buckets, uint32_t bucket_bits,
                                                  uint32_t run_bits, uint32_t runs_total,
                                                  uint64_t* run_sums) {
    reduce_segments<fq2_t>(thread_index(), buckets, bucket_bits, run_bits, runs_total, run_sums);
}

#define MSM_REDUCE_THREADS 128  // G2: 128 XYZZ points fill the 48 KiB of static shared memory

// One block per window: each thread sums a strided share of the window's runs, then a
// shared-memory tree halves the partial sums.
template <class F>
__device__ __forceinline__ void reduce_windows(const uint64_t* run_sums, uint32_t runs_per_window,
                                               uint64_t* window_sums) {
    __shared__ xyzz_t<F> partial[MSM_REDUCE_THREADS];
    uint32_t w = blockIdx.x, t = threadIdx.x;
    const uint64_t* base = run_sums + (uint64_t)w * runs_per_window * 4 * F::WORDS;
    xyzz_t<F> acc = xyzz_t<F>::infinity();
    for (uint32_t j = t; j < runs_per_window; j += MSM_REDUCE_THREADS)
        acc += xyzz_t<F>::load(base + (uint64_t)j * 4 * F::WORDS);
    partial[t] = acc;
    __syncthreads();
    for (uint32_t half = MSM_REDUCE_THREADS / 2; half > 0; half >>= 1) {
        if (t < half) partial[t] = partial[t] + partial[t + half];
        __syncthreads();
    }
    if (t == 0) partial[0].store(window_sums + (uint64_t)w * 4 * F::WORDS);
}

extern "C" __global__ void __launch_bounds__(MSM_REDUCE_THREADS)
msm_reduce_windows_g1(const uint64_t* run_sums, uint32_t runs_per_window, uint64_t* window_sums) {
    reduce_windows<fq_t>(run_sums, runs_per_window, window_sums);
}
extern "C" __global__ void __launch_bounds__(MSM_REDUCE_THREADS)
msm_reduce_windows_g2(const uint64_t* run_sums, uint32_t runs_per_window, uint64_t* window_sums) {
    reduce_windows<fq2_t>(run_sums, runs_per_window, window_sums);
}
