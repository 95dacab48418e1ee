// Pippenger multi-scalar multiplication over G1 and G2 (driven by gpu/msm.py).
//
// Scalars are cut into `windows` signed c-bit digits (msm_scalar.cuh); each non-zero digit
// puts ±P_i into bucket |d| - 1 of its window (B = 2^(c-1) buckets a window). The steps,
// one launch each, all on the caller's stream:
//   msm_count      histogram of bucket keys (key = window * B + bucket)
//   (host: exclusive prefix sum of the histogram -> bucket offsets)
//   msm_scatter    counting sort: entry = point index | sign << 31, grouped by bucket
//   accumulate     one thread per bucket: mixed additions of its affine points
//   reduce_segments  one thread per run of L buckets: the run's share of
//                  sum (k + 1) * bucket_k (suffix sums, plus the run's offset by double-and-add)
//   reduce_windows one block per window: tree sum of its runs
//   combine        one thread: Horner over windows (c doublings each), to affine, standard form
// Points in device memory: affine bases in Montgomery form (infinity = (0, 0)); XYZZ
// intermediates; the result as standard-form affine x, y (zeros = infinity).
#include "curve.cuh"
#include "msm_scalar.cuh"

template <class F>
__device__ __forceinline__ void bases_to_mont(uint64_t* xy, uint32_t n) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t* p = xy + (uint64_t)i * 2 * F::WORDS;
    affine_t<F>::load(p).to_mont().store(p);
}

extern "C" __global__ void msm_bases_to_mont_g1(uint64_t* xy, uint32_t n) { bases_to_mont<fq_t>(xy, n); }
extern "C" __global__ void msm_bases_to_mont_g2(uint64_t* xy, uint32_t n) { bases_to_mont<fq2_t>(xy, n); }

// counts has windows * B + 1 slots; key k is counted in slot k + 1, so an inclusive prefix
// sum of counts gives each bucket's start at its key and its end at key + 1.
extern "C" __global__ void msm_count(const uint64_t* scalars, uint32_t n, uint32_t c,
                                     uint32_t windows, uint32_t* counts) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    scalar_t s = scalar_t::load(scalars + 4 * (uint64_t)i);
    s.reduce();
    uint32_t carry = 0, buckets = 1u << (c - 1);
    for (uint32_t w = 0; w < windows; w++) {
        int d = signed_digit(s, w, c, carry);
        if (d != 0) atomicAdd(&counts[w * buckets + (d < 0 ? -d : d)], 1u);
    }
}

extern "C" __global__ void msm_scatter(const uint64_t* scalars, uint32_t n, uint32_t c,
                                       uint32_t windows, uint32_t* cursor, uint32_t* entries) {
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    scalar_t s = scalar_t::load(scalars + 4 * (uint64_t)i);
    s.reduce();
    uint32_t carry = 0, buckets = 1u << (c - 1);
    for (uint32_t w = 0; w < windows; w++) {
        int d = signed_digit(s, w, c, carry);
        if (d == 0) continue;
        uint32_t slot = atomicAdd(&cursor[w * buckets + (d < 0 ? -d : d) - 1], 1u);
        entries[slot] = i | (d < 0 ? 0x80000000u : 0u);
    }
}

template <class F>
__device__ __forceinline__ void accumulate(const uint64_t* bases, const uint32_t* entries,
                                           const uint32_t* offsets, uint32_t nbuckets,
                                           uint64_t* buckets) {
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nbuckets) return;
    xyzz_t<F> acc = xyzz_t<F>::infinity();
    uint32_t end = offsets[b + 1];
    for (uint32_t k = offsets[b]; k < end; k++) {
        uint32_t e = entries[k];
        affine_t<F> p = affine_t<F>::load(bases + (uint64_t)(e & 0x7fffffffu) * 2 * F::WORDS);
        acc = acc.add_affine((e >> 31) ? -p : p);
    }
    acc.store(buckets + (uint64_t)b * 4 * F::WORDS);
}

extern "C" __global__ void msm_accumulate_g1(const uint64_t* bases, const uint32_t* entries,
                                             const uint32_t* offsets, uint32_t nbuckets,
                                             uint64_t* buckets) {
    accumulate<fq_t>(bases, entries, offsets, nbuckets, buckets);
}
extern "C" __global__ void msm_accumulate_g2(const uint64_t* bases, const uint32_t* entries,
                                             const uint32_t* offsets, uint32_t nbuckets,
                                             uint64_t* buckets) {
    accumulate<fq2_t>(bases, entries, offsets, nbuckets, buckets);
}

// Thread (window w, run j) over buckets jL .. jL + L - 1 of window w computes the run's
// share sum_k (jL + k + 1) * bucket_{jL+k} of the window sum. Only one point is ever live
// in registers (G2 points are 96 registers each): a first pass turns the run's buckets
// into suffix sums S_k in place, then jL * S_0 (double-and-add, S_0 re-read from memory)
// plus sum_k S_k gives the share.
template <class F>
__device__ __forceinline__ void reduce_segments(uint64_t* buckets, uint32_t bucket_bits,
                                                uint32_t run_bits, uint32_t runs_total,
                                                uint64_t* run_sums) {
    const uint32_t stride = 4 * F::WORDS;
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= runs_total) return;
    uint32_t runs_per_window = 1u << (bucket_bits - run_bits);
    uint32_t w = t / runs_per_window, j = t % runs_per_window;
    int len = 1 << run_bits;
    uint64_t* run = buckets + (((uint64_t)w << bucket_bits) + ((uint64_t)j << run_bits)) * stride;
    xyzz_t<F> acc = xyzz_t<F>::infinity();
    for (int k = len - 1; k >= 0; k--) {
        acc += xyzz_t<F>::load(run + (uint64_t)k * stride);
        acc.store(run + (uint64_t)k * stride);
    }
    uint32_t offset = j << run_bits;
    acc = xyzz_t<F>::infinity();
    for (int bit = 31 - __clz(offset | 1); bit >= 0; bit--) {
        acc = acc.dbl();
        if ((offset >> bit) & 1) acc += xyzz_t<F>::load(run);
    }
    for (int k = 0; k < len; k++) acc += xyzz_t<F>::load(run + (uint64_t)k * stride);
    acc.store(run_sums + (uint64_t)t * stride);
}

extern "C" __global__ void msm_reduce_segments_g1(uint64_t* buckets, uint32_t bucket_bits,
                                                  uint32_t run_bits, uint32_t runs_total,
                                                  uint64_t* run_sums) {
    reduce_segments<fq_t>(buckets, bucket_bits, run_bits, runs_total, run_sums);
}
extern "C" __global__ void msm_reduce_segments_g2(uint64_t* buckets, uint32_t bucket_bits,
                                                  uint32_t run_bits, uint32_t runs_total,
                                                  uint64_t* run_sums) {
    reduce_segments<fq2_t>(buckets, bucket_bits, run_bits, runs_total, run_sums);
}

#define MSM_REDUCE_THREADS 64

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

// Single thread: sum_w 2^(cw) * window_w by Horner, then affine, standard form.
template <class F>
__device__ __forceinline__ void combine(const uint64_t* window_sums, uint32_t windows, uint32_t c,
                                        uint64_t* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    xyzz_t<F> acc = xyzz_t<F>::load(window_sums + (uint64_t)(windows - 1) * 4 * F::WORDS);
    for (int w = (int)windows - 2; w >= 0; w--) {
        for (uint32_t k = 0; k < c; k++) acc = acc.dbl();
        acc += xyzz_t<F>::load(window_sums + (uint64_t)w * 4 * F::WORDS);
    }
    acc.to_affine().from_mont().store(out);
}

extern "C" __global__ void msm_combine_g1(const uint64_t* window_sums, uint32_t windows, uint32_t c,
                                          uint64_t* out) {
    combine<fq_t>(window_sums, windows, c, out);
}
extern "C" __global__ void msm_combine_g2(const uint64_t* window_sums, uint32_t windows, uint32_t c,
                                          uint64_t* out) {
    combine<fq2_t>(window_sums, windows, c, out);
}
