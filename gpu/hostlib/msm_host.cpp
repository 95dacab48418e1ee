// Host build of the MSM's bucket phase (msm_buckets.cuh), for tests without a GPU; see
// field_host.cpp.
#include <cstddef>
#include <vector>

#include "curve.cuh"
#include "msm_buckets.cuh"
#include "msm_scalar.cuh"

namespace {

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

}
