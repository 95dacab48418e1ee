// Vector operations on standard-form Fr limbs: elementwise sums, differences, products,
// batch inversion, powers, and the Lagrange basis of a domain at a point.
#include "domain.hpp"

using namespace pq;

namespace {

enum FrOp { ADD, SUB, MUL };

// Inverses of a chunk in Montgomery form with one inversion; false at a zero (its index
// is in *zero_at)
bool invert_chunk(Fr* values, int64_t n, int64_t* zero_at) {
    std::vector<Fr> prefix(n);
    Fr acc = Fr::one();
    for (int64_t i = 0; i < n; i++) {
        if (values[i].is_zero()) {
            *zero_at = i;
            return false;
        }
        prefix[i] = acc;
        acc = acc * values[i];
    }
    Fr inv = acc.inverse();
    for (int64_t i = n - 1; i >= 0; i--) {
        Fr v = values[i];
        values[i] = inv * prefix[i];
        inv = inv * v;
    }
    return true;
}

// Batch inversion in parallel chunks; −1, or the index of the first zero
int64_t invert_all(Fr* values, int64_t n) {
    const int64_t chunk = 1 << 14;
    int64_t chunks = (n + chunk - 1) / chunk;
    std::vector<int64_t> zero(chunks, -1);
    parallel_tasks(chunks, [&](int64_t c, int) {
        int64_t begin = c * chunk, len = std::min(chunk, n - begin), at;
        if (!invert_chunk(values + begin, len, &at)) zero[c] = begin + at;
    });
    for (int64_t z : zero) {
        if (z >= 0) return z;
    }
    return -1;
}

}  // namespace

// out = a ∘ b elementwise (op: 0 add, 1 sub, 2 mul); b has n rows or one (broadcast)
PQ_API int pq_fr_op(int op, const uint64_t* a, const uint64_t* b, int64_t b_rows,
                    uint64_t* out, int64_t n) {
    if (op < ADD || op > MUL) return set_error("unknown Fr operation %d", op);
    if (b_rows != n && b_rows != 1) return set_error("b: %lld rows for %lld", (long long)b_rows,
                                                     (long long)n);
    if (!check_fr(a, n, "a") || !check_fr(b, b_rows, "b")) return 1;
    const int64_t step = b_rows == 1 ? 0 : 4;
    parallel_for(n, 1 << 14, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; i++) {
            Fr x = Fr::raw(a + 4 * i), y = Fr::raw(b + step * i), r;
            // sums and differences act on standard form alike; a·(b·R)·R⁻¹ is a·b
            if (op == ADD) {
                r = x + y;
            } else if (op == SUB) {
                r = x - y;
            } else {
                r = x * Fr::load_std(y.v);
            }
            r.store_raw(out + 4 * i);
        }
    });
    return 0;
}

// out[i] = 1 / a[i]; a zero is an error naming its index
PQ_API int pq_fr_batch_inverse(const uint64_t* a, uint64_t* out, int64_t n) {
    if (!check_fr(a, n, "values")) return 1;
    std::vector<Fr> values(n);
    fr_load(a, values.data(), n);
    int64_t zero = invert_all(values.data(), n);
    if (zero >= 0) return set_error("values[%lld] is zero (it has no inverse)", (long long)zero);
    fr_store(values.data(), out, n);
    return 0;
}

// out[i] = scale · base^i
PQ_API int pq_fr_powers(const uint64_t* base, const uint64_t* scale, uint64_t* out, int64_t n) {
    if (!check_fr(base, 1, "base") || !check_fr(scale, 1, "scale")) return 1;
    std::vector<Fr> values(n);
    powers(Fr::load_std(base), Fr::load_std(scale), values.data(), n);
    fr_store(values.data(), out, n);
    return 0;
}

// out[i] = L_i(τ) = (τ^n − 1)·ω^i / (n·(τ − ω^i)) for i < count, on the 2^log_n domain
PQ_API int pq_fr_lagrange(int log_n, const uint64_t* tau_std, uint64_t* out, int64_t count) {
    if (log_n < 0 || log_n > TWO_ADICITY) return set_error("log_n %d is not in [0, 32]", log_n);
    const int64_t n = int64_t(1) << log_n;
    if (count < 0 || count > n) return set_error("count %lld exceeds the domain", (long long)count);
    if (!check_fr(tau_std, 1, "tau")) return 1;
    Fr tau = Fr::load_std(tau_std), omega = root_of_unity(log_n);
    Fr z = tau.pow((uint64_t)n) - Fr::one();
    if (z.is_zero()) return set_error("tau is in the domain (tau^n = 1)");
    Fr scale = z * fr_small((uint64_t)n).inverse();
    std::vector<Fr> omegas(count), den(count);
    powers(omega, Fr::one(), omegas.data(), count);
    parallel_for(count, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) den[i] = tau - omegas[i];
    });
    invert_all(den.data(), count);  // τ − ω^i ≠ 0: τ^n ≠ 1
    parallel_for(count, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) (scale * omegas[i] * den[i]).store_std(out + 4 * i);
    });
    return 0;
}
