// What every entry point shares: the error message of the last failed call, and the
// checks of values read from Python (standard-form limbs, canonical).
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

#include "field.hpp"
#include "parallel.hpp"

#define PQ_API extern "C" __attribute__((visibility("default")))

namespace pq {

// Entry points return 0, or 1 after set_error(); Python reads the message.
int set_error(const char* format, ...) __attribute__((format(printf, 1, 2)));

// The first row of `rows` elements (WORDS words each) that is not below the modulus,
// or −1; checked in parallel.
template <class F>
int64_t first_non_canonical(const uint64_t* values, int64_t rows) {
    std::vector<int64_t> first(thread_count(), -1);
    std::atomic<int> part(0);
    parallel_for(rows, 1 << 16, [&](int64_t begin, int64_t end) {
        int me = part++;
        for (int64_t i = begin; i < end; i++) {
            if (!F::canonical(values + i * F::WORDS)) {
                first[me] = i;
                return;
            }
        }
    });
    int64_t found = -1;
    for (int64_t f : first) {
        if (f >= 0 && (found < 0 || f < found)) found = f;
    }
    return found;
}

// set_error for the first non-canonical Fr row of `name`; true if all are canonical
inline bool check_fr(const uint64_t* values, int64_t rows, const char* name) {
    int64_t bad = first_non_canonical<Fr>(values, rows);
    if (bad >= 0) {
        set_error("%s[%lld] is not a canonical Fr element (>= r)", name, (long long)bad);
        return false;
    }
    return true;
}

// Standard form in, Montgomery out (and back), in parallel
inline void fr_load(const uint64_t* in, Fr* out, int64_t n) {
    parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) out[i] = Fr::load_std(in + 4 * i);
    });
}

inline void fr_store(const Fr* in, uint64_t* out, int64_t n) {
    parallel_for(n, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) in[i].store_std(out + 4 * i);
    });
}

}  // namespace pq
