// Signed c-bit digits of a scalar k < 2^255, in W = ceil(256/c) windows, read from
// k' = k + H with H = Σ_j 2^(cj + c − 1): window j of k' minus 2^(c−1) is digit j, in
// [−2^(c−1), 2^(c−1)) below the top window and [−2^(c−1), 2^(c−1)] in it (its part of
// k' is read whole), and Σ_j d_j 2^(cj) = k. Any window can be read without the others.
#pragma once

#include <cstdint>

namespace pq {

struct SignedDigits {
    int c, windows;
    uint64_t h[5];

    explicit SignedDigits(int bits) : c(bits), windows((256 + bits - 1) / bits) {
        for (auto& limb : h) limb = 0;
        for (int j = 0; j < windows; j++) {
            int bit = c * j + c - 1;
            h[bit / 64] |= uint64_t(1) << (bit % 64);
        }
    }

    // k' = k + H (five limbs)
    void offset(const uint64_t* k, uint64_t* out) const {
        unsigned __int128 carry = 0;
        for (int i = 0; i < 5; i++) {
            carry += (unsigned __int128)(i < 4 ? k[i] : 0) + h[i];
            out[i] = (uint64_t)carry;
            carry >>= 64;
        }
    }

    int digit(const uint64_t* k_offset, int window) const {
        int pos = c * window, width = window == windows - 1 ? c + 1 : c;
        int word = pos / 64, shift = pos % 64;
        uint64_t v = k_offset[word] >> shift;
        if (shift + width > 64 && word < 4) v |= k_offset[word + 1] << (64 - shift);
        v &= (uint64_t(1) << width) - 1;
        return (int)v - (1 << (c - 1));
    }
};

}  // namespace pq
