// NTTs over Fr with snark/domain.py's conventions (natural order in and out, ω the
// 2^log_n-th root of unity of fields.py, coset g = 7, odd points ψ^(2i+1) with ψ² = ω),
// and the Groth16 quotient of both H forms of snark/keys.py.
//
// The transform is radix-2 decimation in time: bit reversal, then the first stages
// inside cache-sized blocks (one block per task), then the remaining stages as whole
// passes split among the threads. The inverse is the forward transform read backwards
// (a_{−i}), scaled by 1/n, so one table of ω^i (i < n/2) per size serves both.
#include <map>
#include <memory>
#include <mutex>

#include "domain.hpp"

using namespace pq;

namespace {

constexpr int BLOCK_LOG = 12;  // 2^12 elements (128 KiB): the stages done inside a block

// ω^i for i < n/2, cached per size
const std::vector<Fr>& roots(int log_n) {
    static std::mutex lock;
    static std::map<int, std::unique_ptr<std::vector<Fr>>> cache;
    std::lock_guard<std::mutex> guard(lock);
    auto& slot = cache[log_n];
    if (!slot) {
        int64_t half = log_n ? (int64_t(1) << (log_n - 1)) : 0;
        slot.reset(new std::vector<Fr>(half));
        powers(root_of_unity(log_n), Fr::one(), slot->data(), half);
    }
    return *slot;
}

PQ_INLINE void butterfly(Fr& lo, Fr& hi, const Fr& w) {
    Fr t = hi * w;
    hi = lo - t;
    lo = lo + t;
}

inline uint64_t reverse_bits(uint64_t x, int bits) {
    x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
    x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
    x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((x & 0x0F0F0F0F0F0F0F0FULL) << 4);
    return bits ? __builtin_bswap64(x) >> (64 - bits) : 0;
}

void bit_reverse(Fr* a, int log_n) {
    parallel_for(int64_t(1) << log_n, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) {
            int64_t j = (int64_t)reverse_bits((uint64_t)i, log_n);
            if (i < j) std::swap(a[i], a[j]);
        }
    });
}

// The forward transform in place (Montgomery form)
void forward(Fr* a, int log_n) {
    if (log_n == 0) return;
    const int64_t n = int64_t(1) << log_n;
    const std::vector<Fr>& w = roots(log_n);
    bit_reverse(a, log_n);
    const int block_log = std::min(log_n, BLOCK_LOG);
    const int64_t block = int64_t(1) << block_log;
    // the twiddles of the in-block stages, contiguous: stage half h at [h − 1, 2h − 1)
    std::vector<Fr> local(block);
    for (int64_t h = 1; h < block; h *= 2) {
        for (int64_t j = 0; j < h; j++) local[h - 1 + j] = w[j * (n / (2 * h))];
    }
    parallel_tasks(n / block, [&](int64_t task, int) {
        Fr* x = a + task * block;
        for (int64_t h = 1; h < block; h *= 2) {
            const Fr* tw = local.data() + h - 1;
            for (int64_t start = 0; start < block; start += 2 * h) {
                for (int64_t j = 0; j < h; j++) butterfly(x[start + j], x[start + j + h], tw[j]);
            }
        }
    });
    // whole-array stages, each with its twiddles gathered first: read in place they are
    // n/(2h) elements apart, a page (and a TLB miss) per butterfly at the first stages
    std::unique_ptr<Fr[]> stage(block < n ? new Fr[n / 4] : nullptr);  // stride 1 needs none
    for (int64_t h = block; h < n; h *= 2) {
        const int64_t stride = n / (2 * h);
        const Fr* tw = w.data();
        if (stride > 1) {
            parallel_for(h, 1 << 14, [&](int64_t b, int64_t e) {
                for (int64_t j = b; j < e; j++) stage[j] = w[j * stride];
            });
            tw = stage.get();
        }
        parallel_for(n / 2, 1 << 12, [&](int64_t b, int64_t e) {
            for (int64_t k = b; k < e; k++) {
                int64_t j = k & (h - 1), i = ((k - j) << 1) + j;
                butterfly(a[i], a[i + h], tw[j]);
            }
        });
    }
}

// n · (the inverse transform): the forward one, then a_i ↔ a_{n−i}
void inverse_unscaled(Fr* a, int log_n) {
    forward(a, log_n);
    const int64_t n = int64_t(1) << log_n;
    parallel_for(n / 2, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = std::max<int64_t>(b, 1); i < e; i++) std::swap(a[i], a[n - i]);
    });
}

// a_i *= scale · base^i
void scale_by_powers(Fr* a, int64_t n, const Fr& base, const Fr& scale) {
    parallel_for(n, 1 << 12, [&](int64_t b, int64_t e) {
        Fr acc = scale * base.pow((uint64_t)b);
        for (int64_t i = b; i < e; i++) {
            a[i] = a[i] * acc;
            acc = acc * base;
        }
    });
}

Fr domain_inverse(int log_n) { return fr_small(uint64_t(1) << log_n).inverse(); }

enum Kind { NTT, INTT, COSET_NTT, COSET_INTT, ODD_NTT };

// Coefficients → the transform `kind` of snark/domain.py (Montgomery form, in place)
void transform(Fr* a, int log_n, int kind) {
    const int64_t n = int64_t(1) << log_n;
    const Fr g = fr_small(GENERATOR);
    switch (kind) {
        case NTT: forward(a, log_n); break;
        case INTT:
            inverse_unscaled(a, log_n);
            scale_by_powers(a, n, Fr::one(), domain_inverse(log_n));
            break;
        case COSET_NTT:
            scale_by_powers(a, n, g, Fr::one());
            forward(a, log_n);
            break;
        case COSET_INTT:
            inverse_unscaled(a, log_n);
            scale_by_powers(a, n, g.inverse(), domain_inverse(log_n));
            break;
        case ODD_NTT:
            scale_by_powers(a, n, root_of_unity(log_n + 1), Fr::one());
            forward(a, log_n);
            break;
    }
}

// Evaluations on the domain → evaluations on the points base·ω^i (the coefficients
// scaled by base^i / n, then the forward transform)
void reevaluate(Fr* a, int log_n, const Fr& base) {
    inverse_unscaled(a, log_n);
    scale_by_powers(a, int64_t(1) << log_n, base, domain_inverse(log_n));
    forward(a, log_n);
}

bool check_log_n(int log_n, int most) {
    if (log_n < 1 || log_n > most) {
        set_error("log_n %d is not in [1, %d]", log_n, most);
        return false;
    }
    return true;
}

}  // namespace

// In place on standard-form limbs: kind 0 ntt, 1 intt, 2 coset_ntt, 3 coset_intt, 4 odd_ntt
PQ_API int pq_ntt(int kind, uint64_t* data, int log_n) {
    if (kind < NTT || kind > ODD_NTT) return set_error("unknown transform %d", kind);
    if (!check_log_n(log_n, kind == ODD_NTT ? TWO_ADICITY - 1 : TWO_ADICITY)) return 1;
    const int64_t n = int64_t(1) << log_n;
    if (!check_fr(data, n, "values")) return 1;
    Fr* a = reinterpret_cast<Fr*>(data);  // the same four limbs: converted in place
    fr_load(data, a, n);
    transform(a, log_n, kind);
    fr_store(a, data, n);
    return 0;
}

// The H MSM's scalars from A·w, B·w, C·w on the domain (n rows each, standard form).
// form 0 (coset): the n − 1 coefficients of (A·B − C)/Z through the coset g·⟨ω⟩. C has
// degree < n, so its part of the coset inverse is its own coefficients: one inverse
// transform of c instead of a forward and an inverse one.
// form 1 (odd): A·B − C at the n odd points ψ^(2i+1), C interpolating A∘B (c unused).
PQ_API int pq_quotient(int form, const uint64_t* a_std, const uint64_t* b_std,
                       const uint64_t* c_std, uint64_t* out, int log_n) {
    if (form != 0 && form != 1) return set_error("unknown H form %d", form);
    if (!check_log_n(log_n, form == 1 ? TWO_ADICITY - 1 : TWO_ADICITY)) return 1;
    const int64_t n = int64_t(1) << log_n;
    if (!check_fr(a_std, n, "a") || !check_fr(b_std, n, "b")) return 1;
    if (form == 0 && !check_fr(c_std, n, "c")) return 1;
    std::unique_ptr<Fr[]> a(new Fr[n]), b(new Fr[n]), c(new Fr[n]);  // not zeroed: all written
    fr_load(a_std, a.get(), n);
    fr_load(b_std, b.get(), n);
    const Fr g = fr_small(GENERATOR);
    if (form == 0) {
        fr_load(c_std, c.get(), n);
        transform(c.get(), log_n, INTT);
        for (Fr* v : {a.get(), b.get()}) reevaluate(v, log_n, g);
        // divided by Z(gω^i) = g^n − 1, the same at every point
        const Fr z_inv = (g.pow((uint64_t)n) - Fr::one()).inverse();
        parallel_for(n, 1 << 14, [&](int64_t s, int64_t e) {
            for (int64_t i = s; i < e; i++) a[i] = a[i] * b[i] * z_inv;
        });
        transform(a.get(), log_n, COSET_INTT);
        parallel_for(n - 1, 1 << 14, [&](int64_t s, int64_t e) {
            for (int64_t i = s; i < e; i++) a[i] = a[i] - c[i] * z_inv;
        });
        fr_store(a.get(), out, n - 1);
    } else {
        parallel_for(n, 1 << 14, [&](int64_t s, int64_t e) {
            for (int64_t i = s; i < e; i++) c[i] = a[i] * b[i];
        });
        const Fr psi = root_of_unity(log_n + 1);
        for (Fr* v : {a.get(), b.get(), c.get()}) reevaluate(v, log_n, psi);
        parallel_for(n, 1 << 14, [&](int64_t s, int64_t e) {
            for (int64_t i = s; i < e; i++) a[i] = a[i] * b[i] - c[i];
        });
        fr_store(a.get(), out, n);
    }
    return 0;
}
