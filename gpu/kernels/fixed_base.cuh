// Batch fixed-base scalar multiplication k_i * G (gpu/fixed_base.py), the per-thread
// code: kernels in fixed_base.cu, a host build in gpu/hostlib.
//
// A window table of width c holds d * 2^(c w) * G for the 256 / c windows w and the
// magnitudes d in [1, 2^(c-1)], row w * 2^(c-1) + d - 1, affine, Montgomery form. A
// scalar's signed c-bit digits (msm_scalar.cuh) pick one row per non-zero digit, negated for
// a negative one: at most 256 / c - 1 mixed additions a point and no doublings (c = 16: 15).
//
// Affine results by Montgomery's trick: a thread makes `per_thread` points
// (i = t + k * threads, so a warp's rows are adjacent), parks each XYZZ sum's ZZ, ZZZ and
// the running product of the ZZ * ZZZ before it in `scratch` (X, Y wait in `out`), inverts
// the product once and walks back, turning each point affine with 7 products (9 to
// standard form). A Fermat inversion is ~570 products against the additions' ~150: one
// per point would make a point ~4x dearer.
#pragma once
#include "curve.cuh"
#include "msm_scalar.cuh"

// Sum of the table rows picked by the signed c-bit digits of `s` (reduced mod r).
template <class F>
FIELD_FN xyzz_t<F> fixed_base_sum(const uint64_t* __restrict__ table, uint32_t c,
                                  const scalar_t& s) {
    const uint32_t half = 1u << (c - 1);
    const int windows = 256 / c;
    xyzz_t<F> acc = xyzz_t<F>::infinity();
    uint32_t carry = 0;
#pragma unroll 1
    for (int w = 0; w < windows; w++) {
        int d = signed_digit(s, w, c, carry);
        if (d == 0) continue;
        uint32_t magnitude = d < 0 ? (uint32_t)-d : (uint32_t)d;
        const uint64_t* row = table + ((uint64_t)w * half + magnitude - 1) * 2 * F::WORDS;
        affine_t<F> a = affine_t<F>::load(row);
        acc = acc.add_affine(d < 0 ? -a : a);
    }
    return acc;
}

// MONT_OUT: rows stay in Montgomery form (a wider table being made); else standard form.
// `inf` gets 1 for a point at infinity (its row all zeros), else 0.
// Thread t of `threads` makes points t, t + threads, ... (at most per_thread of them).
template <class F, bool MONT_OUT>
FIELD_FN void fixed_base_thread(const uint64_t* __restrict__ table, uint32_t c,
                                const uint64_t* __restrict__ scalars, uint32_t n,
                                uint32_t per_thread, uint32_t t, uint32_t threads,
                                uint64_t* scratch, uint64_t* out, uint8_t* inf) {
    const int W = F::WORDS;
    uint32_t count = 0;
#pragma unroll 1
    for (uint32_t k = 0; k < per_thread; k++) {
        uint64_t i = t + (uint64_t)k * threads;
        if (i >= n) break;
        scalar_t s = scalar_t::load(scalars + 4 * i);
        s.reduce();
        xyzz_t<F> acc = fixed_base_sum<F>(table, c, s);
        acc.ZZ.store(scratch + i * 3 * W);
        acc.ZZZ.store(scratch + i * 3 * W + W);
        acc.X.store(out + i * 2 * W);
        acc.Y.store(out + i * 2 * W + W);
        count = k + 1;
    }
    // The running products in a pass of their own: kept live across the sums above, they
    // made G2 spill.
    F running = F::one();  // product of the ZZ * ZZZ of this thread's points so far
#pragma unroll 1
    for (uint32_t k = 0; k < count; k++) {
        uint64_t* park = scratch + (t + (uint64_t)k * threads) * 3 * W;
        running.store(park + 2 * W);
        F ZZ = F::load(park);
        if (!ZZ.is_zero()) running = running * (ZZ * F::load(park + W));
    }
    F inv = running.inverse();  // 1 / (product of this thread's ZZ * ZZZ)
#pragma unroll 1
    for (uint32_t k = count; k-- > 0;) {
        uint64_t i = t + (uint64_t)k * threads;
        const uint64_t* park = scratch + i * 3 * W;
        F ZZ = F::load(park);
        uint64_t* row = out + i * 2 * W;
        if (ZZ.is_zero()) {
            affine_t<F>::infinity().store(row);
            inf[i] = 1;
            continue;
        }
        F ZZZ = F::load(park + W);
        F v = ZZ * ZZZ;
        F v_inv = inv * F::load(park + 2 * W);  // 1 / Z^5
        inv = inv * v;
        affine_t<F> p;
        p.x = F::load(row) * (v_inv * ZZZ);   // X / Z^2
        p.y = F::load(row + W) * (v_inv * ZZ);  // Y / Z^3
        if (!MONT_OUT) p = p.from_mont();
        p.store(row);
        inf[i] = 0;
    }
}
