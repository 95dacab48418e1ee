// Fixed-base batch multiplication k_i·G (key setup): a table of d·2^(wj)·G for every
// window j and digit 1 ≤ d ≤ 2^(w−1), then per point one table addition per signed
// w-bit digit. Points run in chunks; a chunk's accumulators stay affine and each window's
// additions share one inversion, so the results come out affine. Tables are built once
// per (group, base, w) and kept: w = 16 for large batches (16 additions a point; tables of
// 50 MiB for G1, 100 MiB for G2), w = 8 below (32 additions, tables of 4096 points).
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "common.hpp"
#include "curve.hpp"
#include "digits.hpp"

using namespace pq;

namespace {

constexpr int64_t CHUNK = 4096;
constexpr int64_t LARGE_BATCH = 1 << 14;

template <class F>
struct Table {
    std::vector<uint64_t> base;   // the base point's standard-form coordinates
    SignedDigits digits;
    int64_t per_window;           // 2^(w−1)
    std::vector<Affine<F>> entries;  // window-major: entries[j·per_window + d − 1]

    Table(const uint64_t* base_std, int w)
        : base(base_std, base_std + Affine<F>::WORDS), digits(w), per_window(int64_t(1) << (w - 1)),
          entries(digits.windows * per_window) {
        // 2^(wj)·G for every window, then each window's multiples in parallel
        std::vector<Affine<F>> starts(digits.windows);
        Xyzz<F> p = Xyzz<F>::from_affine(Affine<F>::load_std(base_std));
        for (int j = 0; j < digits.windows; j++) {
            p.to_affine(starts[j]);
            for (int s = 0; s < w; s++) p.dbl();
        }
        parallel_tasks(digits.windows, [&](int64_t j, int) {
            std::vector<Xyzz<F>> multiples(per_window);
            Xyzz<F> acc = Xyzz<F>::inf();
            for (int64_t d = 0; d < per_window; d++) {
                acc.add_affine(starts[j]);
                multiples[d] = acc;
            }
            to_affine_all(multiples, &entries[j * per_window]);
        });
    }

    // Batch conversion (none of the multiples is infinity: d·2^(wj) < r·2, r prime)
    static void to_affine_all(const std::vector<Xyzz<F>>& in, Affine<F>* out) {
        size_t n = in.size();
        std::vector<F> prefix(n);
        F acc = F::one();
        for (size_t i = 0; i < n; i++) {
            prefix[i] = acc;
            acc = acc * in[i].ZZZ;
        }
        F inv = acc.inverse();
        for (size_t i = n; i-- > 0;) {
            F zzz_inv = inv * prefix[i];
            inv = inv * in[i].ZZZ;
            F z_inv = in[i].ZZ * zzz_inv;
            out[i] = {in[i].X * z_inv.sqr(), in[i].Y * zzz_inv};
        }
    }

    const Affine<F>& entry(int window, int magnitude) const {
        return entries[window * per_window + magnitude - 1];
    }
};

// The table of (base, w), built on first use; one per w is kept (another base replaces it,
// while calls still using the old one keep it alive)
template <class F>
std::shared_ptr<const Table<F>> table_for(const uint64_t* base_std, int w) {
    static std::mutex lock;
    static std::map<int, std::shared_ptr<const Table<F>>> tables;
    std::lock_guard<std::mutex> guard(lock);
    auto& slot = tables[w];
    if (!slot || std::memcmp(slot->base.data(), base_std, 8 * Affine<F>::WORDS) != 0) {
        slot = std::make_shared<const Table<F>>(base_std, w);
    }
    return slot;
}

template <class F>
int fixed_base(const uint64_t* base_std, const uint64_t* scalars, int64_t n, uint64_t* out,
               uint8_t* out_inf) {
    if (!F::canonical(base_std) || !F::canonical(base_std + F::WORDS)) {
        return set_error("base: a coordinate is not below q");
    }
    if (!check_fr(scalars, n, "scalars")) return 1;
    std::shared_ptr<const Table<F>> held = table_for<F>(base_std, n >= LARGE_BATCH ? 16 : 8);
    const Table<F>& table = *held;
    const SignedDigits& digits = table.digits;
    parallel_tasks((n + CHUNK - 1) / CHUNK, [&](int64_t task, int) {
        int64_t begin = task * CHUNK, count = std::min(CHUNK, n - begin);
        std::vector<Affine<F>> acc(count);
        std::vector<uint8_t> finite(count, 0);
        std::vector<uint64_t> offsets(5 * count);
        for (int64_t i = 0; i < count; i++) digits.offset(scalars + 4 * (begin + i), &offsets[5 * i]);
        AffineBatch<F> batch(count);
        for (int j = 0; j < digits.windows; j++) {
            for (int64_t i = 0; i < count; i++) {
                int d = digits.digit(&offsets[5 * i], j);
                if (d != 0) batch.add(&acc[i], &finite[i], table.entry(j, d < 0 ? -d : d), d < 0);
            }
            batch.flush();
        }
        for (int64_t i = 0; i < count; i++) {
            uint64_t* row = out + Affine<F>::WORDS * (begin + i);
            out_inf[begin + i] = !finite[i];
            if (finite[i]) {
                acc[i].store_std(row);
            } else {
                for (int w = 0; w < Affine<F>::WORDS; w++) row[w] = 0;
            }
        }
    });
    return 0;
}

}  // namespace

// out[i] = scalars[i]·base (affine standard form, zeros and out_inf[i] = 1 at infinity)
PQ_API int pq_fixed_base(int group, const uint64_t* base, const uint64_t* scalars, int64_t n,
                         uint64_t* out, uint8_t* out_inf) {
    if (group == 1) return fixed_base<Fq>(base, scalars, n, out, out_inf);
    if (group == 2) return fixed_base<Fq2>(base, scalars, n, out, out_inf);
    return set_error("group %d is not 1 or 2", group);
}
