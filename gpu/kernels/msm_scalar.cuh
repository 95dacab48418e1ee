// Scalars for the MSM and fixed-base kernels: standard-form Fr values as 8 x 32-bit words,
// cut into c-bit signed digits.
//
// Signed digits halve the buckets: window j reads bits [jc, jc + c) plus the carry from
// window j - 1; a value above 2^(c-1) becomes value - 2^c and carries 1 upward, so every
// digit lies in [-(2^(c-1) - 1), 2^(c-1)] and needs one of 2^(c-1) buckets, the sign
// going to the point (-P is free in affine form). With scalars below r < 2^255 and
// ceil(256 / c) windows, the top window never carries out.
#pragma once
#include "field.cuh"

struct scalar_t {
    uint32_t w[8];

    static FIELD_FN scalar_t load(const uint64_t* p) {
        scalar_t s;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            uint64_t v = p[i];
            s.w[2 * i] = (uint32_t)v;
            s.w[2 * i + 1] = (uint32_t)(v >> 32);
        }
        return s;
    }

    // Any 256-bit value is below 3r: two conditional subtractions reduce it mod r.
    FIELD_FN void reduce() {
        fr_t x, d;
#pragma unroll
        for (int i = 0; i < 8; i++) x.v[i] = w[i];
#pragma unroll
        for (int k = 0; k < 2; k++) {
            uint32_t borrow = fr_t::sub_limbs(d, x, fr_t::modulus());
            if (!borrow) x = d;
        }
#pragma unroll
        for (int i = 0; i < 8; i++) w[i] = x.v[i];
    }

    // After reduce(): a witness's set bits (1) are summed apart from the digit sort.
    FIELD_FN bool is_zero() const { return (w[0] | high_words()) == 0; }
    FIELD_FN bool is_one() const { return w[0] == 1 && high_words() == 0; }
    FIELD_FN uint32_t high_words() const {
        uint32_t r = 0;
#pragma unroll
        for (int i = 1; i < 8; i++) r |= w[i];
        return r;
    }

    // Word k (zero past the top) by a run-time index, without a local-memory array.
    FIELD_FN uint32_t word(int k) const {
        uint32_t r = 0;
#pragma unroll
        for (int i = 0; i < 8; i++) r = (i == k) ? w[i] : r;
        return r;
    }

    // Bits [offset, offset + c) for 1 <= c <= 31.
    FIELD_FN uint32_t bits(int offset, int c) const {
        int k = offset >> 5;
        uint64_t pair = ((uint64_t)word(k + 1) << 32) | word(k);
        return (uint32_t)(pair >> (offset & 31)) & ((1u << c) - 1);
    }
};

// The signed digit of window `window`; `carry` comes in from the window below and goes
// out to the one above (start at 0 and visit windows in increasing order).
static FIELD_FN int signed_digit(const scalar_t& s, int window, int c, uint32_t& carry) {
    uint32_t raw = s.bits(window * c, c) + carry;
    uint32_t half = 1u << (c - 1);
    carry = raw > half;
    return carry ? (int)raw - (int)(1u << c) : (int)raw;
}

// Where the non-zero digit d of window w of scalar i goes in the digit sort. Plain bases
// keep a bucket set per window: key w·2^(c-1) + |d| - 1, entry i; a sort of the window
// group [first_window, …) alone (gpu/msm.py sorts a large MSM's windows a group at a time)
// numbers its sets from first_window. Window tables (rows w·table_stride + i of the bases
// hold 2^(c·w)·P_i, `msm_window_table_*`) let every window share one set: key |d| - 1,
// entry w·table_stride + i, so each digit adds its window's multiple of P_i and no window
// needs its own reduction or weighting. The sign rides in the entry's top bit.
struct digit_slot {
    uint32_t key, entry;
};

static FIELD_FN digit_slot place_digit(uint32_t i, uint32_t window, int d, int c,
                                       uint32_t table_stride, uint32_t first_window) {
    uint32_t magnitude = d < 0 ? (uint32_t)-d : (uint32_t)d;
    digit_slot s;
    s.key = (table_stride ? 0u : (window - first_window) << (c - 1)) + magnitude - 1;
    s.entry = (i + window * table_stride) | (d < 0 ? 0x80000000u : 0u);
    return s;
}
