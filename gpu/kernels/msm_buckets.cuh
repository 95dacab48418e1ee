// Per-thread steps of the MSM's bucket phase (kernels in msm.cu), written as host/device
// functions of the thread index so that gpu/hostlib runs the very same logic on the CPU.
#pragma once
#include "curve.cuh"

// Index of the highest set bit (0 for k <= 1).
static FIELD_FN int top_bit(uint32_t k) {
#ifdef __CUDA_ARCH__
    return 31 - __clz(k | 1);
#else
    return 31 - __builtin_clz(k | 1);
#endif
}

// Bucket sums by levels, so that no thread's work depends on how the digits fall (a
// witness full of 0s and 1s puts half of all points into one bucket). A level reads a list
// of (key, point) sorted by key and gives each thread a chunk of CHUNK consecutive slots.
// A run of one key that lies wholly inside the chunk is that bucket's final sum: it is
// stored (if not infinity) into the zero-initialised buckets. The chunk's first run, if
// its key continues from the previous chunk, and its last run, if it continues into the
// next, are emitted instead as slots 2t and 2t + 1 of the next level's list (infinity,
// keyed like their neighbours, where there is nothing to pass on), which stays sorted.
// Each level shrinks the list CHUNK/2-fold; the host repeats until one chunk holds it all.
// Level 0 reads affine bases through the sorted entries (index | sign << 31); later
// levels read XYZZ partial sums. Slots with key MSM_PAD_KEY (past the digits' end) are
// skipped. Level 0's sums are lazy (add_affine_lazy) until they are stored.
#define MSM_PAD_KEY 0xffffffffu
#define MSM_NO_KEY 0xfffffffeu  // past a chunk's last slot: equals no key

// A level's `len` keys as a thread reads them: first(start) for its chunk's first slot,
// then next(s, key of slot s - 1) for s = start, start + 1, … in turn; holds(s, key):
// whether slot s has key (false for s >= len). Later levels list them (slot_keys); level 0
// derives them from the digit sort's bucket ends (bucket_ends), so that the sort writes no
// key per digit.
struct slot_keys {
    const uint32_t* keys;
    uint32_t len;
    FIELD_FN uint32_t first(uint32_t s) const { return keys[s]; }
    FIELD_FN uint32_t next(uint32_t s, uint32_t) const { return keys[s]; }
    FIELD_FN bool holds(uint32_t s, uint32_t key) const { return s < len && keys[s] == key; }
};

// Smallest k in [lo, hi) with ends[k] > s, or hi (ends never decreases).
static FIELD_FN uint32_t first_end_above(const uint32_t* ends, uint32_t lo, uint32_t hi,
                                         uint32_t s) {
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ends[mid] > s) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

// The counting sort's cursors after its scatter: ends[k] is one past bucket k's last slot
// (bucket k starts at ends[k - 1], or 0) for the `count` keys, and the slots from
// ends[count - 1] to len are padding (MSM_PAD_KEY). A chunk's first key is a binary
// search; the walk moves on where s reaches its bucket's end (re-read from ends, an L1 hit:
// held in a register, it made ptxas spill in G2's Fq products), galloping over empty
// buckets: one load when the next bucket has digits, about 2·log2(gap) over a gap.
struct bucket_ends {
    const uint32_t* ends;
    uint32_t count, len;

    FIELD_FN uint32_t key_of(uint32_t k) const { return k < count ? k : MSM_PAD_KEY; }
    FIELD_FN uint32_t first(uint32_t s) const {
        return key_of(first_end_above(ends, 0, count, s));
    }
    FIELD_FN uint32_t next(uint32_t s, uint32_t key) const {
        if (key == MSM_PAD_KEY || s < ends[key]) return key;  // padding runs to len
        uint32_t lo = key + 1, step = 1;
        while (count - lo > step && ends[lo + step - 1] <= s) {  // buckets below lo end by s
            lo += step;
            step *= 2;
        }
        return key_of(first_end_above(ends, lo, count - lo > step ? lo + step : count, s));
    }
    FIELD_FN bool holds(uint32_t s, uint32_t key) const {
        uint32_t i = key == MSM_PAD_KEY ? count : key;
        uint32_t begin = i ? ends[i - 1] : 0, end = i < count ? ends[i] : len;
        return begin <= s && s < end;
    }
};

template <class F>
struct affine_entries {
    const uint64_t* bases;
    const uint32_t* entries;
    FIELD_FN xyzz_t<F> add(const xyzz_t<F>& acc, uint32_t slot) const {
        uint32_t e = entries[slot];
        affine_t<F> p = affine_t<F>::load(bases + (uint64_t)(e & 0x7fffffffu) * 2 * F::WORDS);
        return acc.add_affine_lazy((e >> 31) ? -p : p);
    }
};

template <class F>
struct xyzz_partials {
    const uint64_t* points;
    FIELD_FN xyzz_t<F> add(const xyzz_t<F>& acc, uint32_t slot) const {
        return acc + xyzz_t<F>::load(points + (uint64_t)slot * 4 * F::WORDS);
    }
};

template <class F, class Source, class Keys>
FIELD_FN void bucket_level(uint32_t t, Source source, Keys keys, uint32_t chunk,
                           uint64_t* buckets, uint64_t* next_points, uint32_t* next_keys) {
    const uint32_t stride = 4 * F::WORDS, len = keys.len;
    uint32_t start = t * chunk;
    if (start >= len) return;
    uint32_t end = start + chunk < len ? start + chunk : len;
    uint64_t* head = next_points + (uint64_t)(2 * t) * stride;
    uint64_t* tail = head + stride;
    xyzz_t<F>::infinity().store(tail);

    uint32_t run_key = keys.first(start);
    next_keys[2 * t] = run_key;
    // 2: the first run, continuing from the previous chunk; 1: the first run; 0: a later
    // one (one value, not two flags: then ptxas spills nothing in G2's level 0)
    uint32_t first = start > 0 && keys.holds(start - 1, run_key) ? 2 : 1;
    xyzz_t<F> acc = xyzz_t<F>::infinity();
    for (uint32_t s = start;; s++) {
        uint32_t key = s < end ? keys.next(s, run_key) : MSM_NO_KEY;
        if (key != run_key) {  // the run of run_key ends at s
            bool open_start = first == 2;
            bool open_end = s == end && keys.holds(end, run_key);
            if (first) (open_start ? acc.reduced() : xyzz_t<F>::infinity()).store(head);
            if (open_end && !open_start) acc.reduced().store(tail);
            if (!open_start && !open_end && run_key != MSM_PAD_KEY && !acc.is_inf())
                acc.reduced().store(buckets + (uint64_t)run_key * stride);
            if (s == end) break;
            first = 0;
            run_key = key;
            acc = xyzz_t<F>::infinity();
        }
        if (key != MSM_PAD_KEY) acc = source.add(acc, s);
    }
    next_keys[2 * t + 1] = run_key;
}

// The bases of the scalars equal to 1 need no buckets: thread t adds those of entries
// [t·per, (t + 1)·per) of their index list (msm_split_ones) into one XYZZ partial sum,
// stored at row t; msm_reduce_windows then sums the partials. Threads past the list
// store nothing (the partials start zeroed: infinity).
template <class F>
FIELD_FN void ones_partial(uint32_t t, const uint64_t* bases, const uint32_t* ones,
                           uint32_t count, uint32_t per, uint64_t* partials) {
    uint32_t start = t * per;
    if (start >= count) return;
    uint32_t end = count - start < per ? count : start + per;
    xyzz_t<F> acc = xyzz_t<F>::infinity();
    for (uint32_t j = start; j < end; j++)
        acc = acc.add_affine_lazy(affine_t<F>::load(bases + (uint64_t)ones[j] * 2 * F::WORDS));
    acc.reduced().store(partials + (uint64_t)t * 4 * F::WORDS);
}

// Thread (window w, run j) over buckets jL .. jL + L - 1 of window w computes the run's
// share sum_k (jL + k + 1) * bucket_{jL+k} of the window sum. Only one point is ever live
// in registers (G2 points are 96 registers each): a first pass turns the run's buckets
// into suffix sums S_k in place, then jL * S_0 (double-and-add, S_0 re-read from memory)
// plus sum_k S_k gives the share.
template <class F>
FIELD_FN void reduce_segments(uint32_t t, uint64_t* buckets, uint32_t bucket_bits,
                              uint32_t run_bits, uint32_t runs_total, uint64_t* run_sums) {
    const uint32_t stride = 4 * F::WORDS;
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
    for (int bit = top_bit(offset); bit >= 0; bit--) {
        acc = acc.dbl();
        if ((offset >> bit) & 1) acc += xyzz_t<F>::load(run);
    }
    for (int k = 0; k < len; k++) acc += xyzz_t<F>::load(run + (uint64_t)k * stride);
    acc.store(run_sums + (uint64_t)t * stride);
}

// Thread i's rows of a window table (msm_window_table_*): P_i doubled c times per window
// (XYZZ), each stored affine; infinity stays (0, 0).
template <class F>
FIELD_FN void window_table_rows(uint32_t i, uint64_t* xy, uint32_t n, uint32_t c,
                                uint32_t windows) {
    const uint32_t stride = 2 * F::WORDS;
    affine_t<F> p = affine_t<F>::load(xy + (uint64_t)i * stride);
    for (uint32_t w = 1; w < windows; w++) {
        xyzz_t<F> acc = xyzz_t<F>::from_affine(p);
        for (uint32_t k = 0; k < c; k++) acc = acc.dbl();
        p = acc.to_affine();
        p.store(xy + ((uint64_t)w * n + i) * stride);
    }
}
