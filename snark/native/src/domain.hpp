// Roots of unity of Fr (2-adicity 32, generator 7, as snark/fields.py) and powers of an
// element, computed in parallel.
#pragma once

#include "common.hpp"

namespace pq {

constexpr int TWO_ADICITY = 32;
constexpr uint64_t GENERATOR = 7;

inline Fr fr_small(uint64_t v) {
    uint64_t limbs[4] = {v, 0, 0, 0};
    return Fr::load_std(limbs);
}

// The primitive 2^log_n-th root of unity: 7^((r − 1) / 2^32) squared 32 − log_n times
inline Fr root_of_unity(int log_n) {
    static const Fr top = [] {
        uint64_t e[4];
        for (int i = 0; i < 4; i++) e[i] = FrParams::P[i];
        e[0] -= 1;  // r − 1 (the low limb of r is odd)
        for (int i = 0; i < 3; i++) e[i] = (e[i] >> 32) | (e[i + 1] << 32);
        e[3] >>= 32;
        return fr_small(GENERATOR).pow(e, 4);
    }();
    Fr w = top;
    for (int i = log_n; i < TWO_ADICITY; i++) w = w.sqr();
    return w;
}

// out[i] = scale · base^i for i < n (Montgomery form)
inline void powers(const Fr& base, const Fr& scale, Fr* out, int64_t n) {
    parallel_for(n, 1 << 12, [&](int64_t b, int64_t e) {
        uint64_t start = (uint64_t)b;
        Fr acc = scale * base.pow(start);
        for (int64_t i = b; i < e; i++) {
            out[i] = acc;
            acc = acc * base;
        }
    });
}

}  // namespace pq
