// Multi-scalar multiplication Σ k_i·P_i over G1 and G2 (affine bases in Montgomery form,
// standard-form scalars), for a Groth16 witness that is mostly bits: scalars 0 are
// skipped, the bases of scalars 1 are summed with plain additions (a tree of affine
// additions sharing inversions), and the rest go through Pippenger's bucket method with
// signed digits.
//
// Pippenger runs one task per (window, chunk of points), each with its own buckets. A
// bucket is an affine point while it can be (additions batched, one inversion per batch);
// a point whose bucket is already in the pending batch goes to that bucket's XYZZ
// overflow instead, and small bucket sets use XYZZ throughout.
#include "common.hpp"
#include "curve.hpp"
#include "digits.hpp"

using namespace pq;

namespace {

constexpr int AFFINE_MIN_BUCKETS = 1024;
constexpr size_t BATCH = 2048;

template <class F>
Xyzz<F> tree_sum(std::vector<Affine<F>>& points) {
    std::vector<uint8_t> finite(points.size(), 1);
    size_t m = points.size();
    AffineBatch<F> batch(BATCH);
    while (m > 16) {
        for (size_t k = 0; 2 * k + 1 < m; k++) {
            batch.add(&points[2 * k], &finite[2 * k], points[2 * k + 1], false);
            if (batch.full()) batch.flush();
        }
        batch.flush();
        size_t kept = 0;
        for (size_t k = 0; k < m; k += 2) {
            if (finite[k]) {
                points[kept] = points[k];
                finite[kept++] = 1;
            }
        }
        m = kept;
    }
    Xyzz<F> sum = Xyzz<F>::inf();
    for (size_t k = 0; k < m; k++) sum.add_affine(points[k]);
    return sum;
}

// The sum of the bases at `which`, in parallel ranges
template <class F>
Xyzz<F> sum_of(const Affine<F>* bases, const std::vector<int64_t>& which) {
    int64_t n = (int64_t)which.size();
    int parts = workers_for(n / 4096);
    std::vector<Xyzz<F>> partial(parts, Xyzz<F>::inf());
    parallel_tasks(parts, [&](int64_t part, int) {
        int64_t begin = n * part / parts, end = n * (part + 1) / parts;
        std::vector<Affine<F>> points(end - begin);
        for (int64_t i = begin; i < end; i++) points[i - begin] = bases[which[i]];
        partial[part] = tree_sum(points);
    });
    Xyzz<F> total = Xyzz<F>::inf();
    for (auto& p : partial) total.add(p);
    return total;
}

// The window size that minimises the additions: m per window into buckets, about two
// per bucket (of three times the cost) to sum them
int window_bits(int64_t m) {
    int best = 2;
    double best_cost = 1e300;
    for (int c = 2; c <= 20; c++) {
        double windows = (256 + c - 1) / c;
        double cost = windows * ((double)m + 3.0 * double(int64_t(1) << (c - 1)));
        if (cost < best_cost) {
            best_cost = cost;
            best = c;
        }
    }
    return best;
}

template <class F>
struct Pippenger {
    const Affine<F>* bases;
    const std::vector<int64_t>& which;     // base of each point
    const std::vector<uint64_t>& offsets;  // k' of each point (5 limbs)
    SignedDigits digits;

    // Σ_b (b + 1)·bucket_b of one window over points [begin, end)
    Xyzz<F> window_sum(int window, int64_t begin, int64_t end) const {
        const int64_t buckets = int64_t(1) << (digits.c - 1);
        const bool affine = buckets >= AFFINE_MIN_BUCKETS;
        std::vector<Affine<F>> bucket(affine ? buckets : 0);
        std::vector<uint8_t> finite(affine ? buckets : 0, 0), busy(affine ? buckets : 0, 0);
        std::vector<Xyzz<F>> overflow(buckets, Xyzz<F>::inf());
        std::vector<int64_t> pending;
        AffineBatch<F> batch(std::min<size_t>(BATCH, buckets / 4));
        for (int64_t i = begin; i < end; i++) {
            int d = digits.digit(&offsets[5 * i], window);
            if (d == 0) continue;
            int64_t b = (d < 0 ? -d : d) - 1;
            const Affine<F>& p = bases[which[i]];
            if (!affine || busy[b]) {
                overflow[b].add_affine(d < 0 ? p.neg() : p);
                continue;
            }
            if (finite[b]) {
                busy[b] = 1;
                pending.push_back(b);
            }
            batch.add(&bucket[b], &finite[b], p, d < 0);
            if (batch.full()) {
                batch.flush();
                for (int64_t q : pending) busy[q] = 0;
                pending.clear();
            }
        }
        batch.flush();
        Xyzz<F> running = Xyzz<F>::inf(), sum = Xyzz<F>::inf();
        for (int64_t b = buckets - 1; b >= 0; b--) {
            if (affine && finite[b]) running.add_affine(bucket[b]);
            running.add(overflow[b]);
            sum.add(running);
        }
        return sum;
    }

    Xyzz<F> run() const {
        const int64_t m = (int64_t)which.size();
        const int windows = digits.windows;
        const int64_t chunks = std::max<int64_t>(1, (2 * thread_count() + windows - 1) / windows);
        std::vector<Xyzz<F>> sums(windows * chunks, Xyzz<F>::inf());
        parallel_tasks(windows * chunks, [&](int64_t task, int) {
            int64_t window = task / chunks, chunk = task % chunks;
            sums[task] = window_sum((int)window, m * chunk / chunks, m * (chunk + 1) / chunks);
        });
        Xyzz<F> total = Xyzz<F>::inf();
        for (int j = windows - 1; j >= 0; j--) {
            for (int s = 0; s < digits.c; s++) total.dbl();
            for (int64_t q = 0; q < chunks; q++) total.add(sums[j * chunks + q]);
        }
        return total;
    }
};

template <class F>
int msm(const uint64_t* bases_mont, const uint8_t* infinity, const uint64_t* scalars,
        int64_t scalar_rows, const int64_t* index, int64_t n, uint64_t* out, uint8_t* out_inf) {
    if (!check_fr(scalars, scalar_rows, "scalars")) return 1;
    if (!index && scalar_rows != n) {
        return set_error("%lld scalars for %lld bases", (long long)scalar_rows, (long long)n);
    }
    const Affine<F>* bases = (const Affine<F>*)bases_mont;
    // Which bases count, and how: scalar 1 or another non-zero one
    int parts = workers_for(n / 65536);
    std::vector<std::vector<int64_t>> ones(parts), dense(parts);
    std::vector<int64_t> bad_index(parts, -1);
    parallel_tasks(parts, [&](int64_t part, int) {
        for (int64_t i = n * part / parts; i < n * (part + 1) / parts; i++) {
            int64_t s = index ? index[i] : i;
            if (s < 0 || s >= scalar_rows) {
                bad_index[part] = i;
                return;
            }
            if (infinity[i]) continue;
            const uint64_t* k = scalars + 4 * s;
            if ((k[1] | k[2] | k[3]) == 0 && k[0] <= 1) {
                if (k[0] == 1) ones[part].push_back(i);
            } else {
                dense[part].push_back(i);
            }
        }
    });
    for (int64_t bad : bad_index) {
        if (bad >= 0) {
            return set_error("index[%lld] = %lld is not below the %lld scalars", (long long)bad,
                             (long long)index[bad], (long long)scalar_rows);
        }
    }
    std::vector<int64_t> one_list, dense_list;
    for (int p = 0; p < parts; p++) {
        one_list.insert(one_list.end(), ones[p].begin(), ones[p].end());
        dense_list.insert(dense_list.end(), dense[p].begin(), dense[p].end());
    }
    Xyzz<F> total = sum_of(bases, one_list);
    if (!dense_list.empty()) {
        SignedDigits digits(window_bits((int64_t)dense_list.size()));
        std::vector<uint64_t> offsets(5 * dense_list.size());
        parallel_for((int64_t)dense_list.size(), 1 << 14, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; i++) {
                int64_t s = index ? index[dense_list[i]] : dense_list[i];
                digits.offset(scalars + 4 * s, &offsets[5 * i]);
            }
        });
        total.add(Pippenger<F>{bases, dense_list, offsets, digits}.run());
    }
    Affine<F> result;
    *out_inf = !total.to_affine(result);
    if (*out_inf) {
        for (int i = 0; i < Affine<F>::WORDS; i++) out[i] = 0;
    } else {
        result.store_std(out);
    }
    return 0;
}

// Affine standard-form coordinates → Montgomery form, rows at infinity (inf[i]) zero
template <class F>
int points_to_mont(const uint64_t* xy, const uint8_t* inf, int64_t n, uint64_t* out) {
    const int words = Affine<F>::WORDS;
    std::vector<int64_t> bad(thread_count(), -1);
    std::atomic<int> next(0);
    parallel_for(n, 1 << 12, [&](int64_t b, int64_t e) {
        int me = next++;
        for (int64_t i = b; i < e; i++) {
            const uint64_t* p = xy + words * i;
            if (inf[i]) {
                for (int w = 0; w < words; w++) out[words * i + w] = 0;
                continue;
            }
            if (!F::canonical(p) || !F::canonical(p + F::WORDS)) {
                if (bad[me] < 0) bad[me] = i;
                continue;
            }
            Affine<F> a = Affine<F>::load_std(p);
            a.x.store_raw(out + words * i);
            a.y.store_raw(out + words * i + F::WORDS);
        }
    });
    for (int64_t i : bad) {
        if (i >= 0) return set_error("points[%lld] has a coordinate that is not below q", (long long)i);
    }
    return 0;
}

}  // namespace

// bases (n points, Montgomery, from pq_points_to_mont) · scalars; scalar of base i is
// scalars[index[i]] (index may be null: scalars[i]); writes the affine standard-form sum
PQ_API int pq_msm(int group, const uint64_t* bases, const uint8_t* inf, const uint64_t* scalars,
                  int64_t scalar_rows, const int64_t* index, int64_t n, uint64_t* out,
                  uint8_t* out_inf) {
    if (group == 1) return msm<Fq>(bases, inf, scalars, scalar_rows, index, n, out, out_inf);
    if (group == 2) return msm<Fq2>(bases, inf, scalars, scalar_rows, index, n, out, out_inf);
    return set_error("group %d is not 1 or 2", group);
}

PQ_API int pq_points_to_mont(int group, const uint64_t* xy, const uint8_t* inf, int64_t n,
                             uint64_t* out) {
    if (group == 1) return points_to_mont<Fq>(xy, inf, n, out);
    if (group == 2) return points_to_mont<Fq2>(xy, inf, n, out);
    return set_error("group %d is not 1 or 2", group);
}
