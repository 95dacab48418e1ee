// Loads and stores of Fr vectors held as (n, 4) uint64 limb arrays, and the split power
// tables that fold a per-index scale into a kernel's load or store.
//
// An element is 32 bytes; moving it as two 16-byte words keeps a warp's accesses
// coalesced (CuPy allocations are 256-byte aligned, so every element is 16-byte aligned).
#pragma once

#include "field.cuh"

// A power table f(i) = lo[i & LO_MASK] * hi[i >> LO_BITS] (both Montgomery) replaces an
// n-entry table by 2^14 + n/2^14 entries: one extra product per element, no big table.
#define SCALE_LO_BITS 14
#define SCALE_LO_MASK ((1u << SCALE_LO_BITS) - 1)

__device__ __forceinline__ fr_t fr_from_words(uint4 a, uint4 b) {
    fr_t r;
    r.v[0] = a.x; r.v[1] = a.y; r.v[2] = a.z; r.v[3] = a.w;
    r.v[4] = b.x; r.v[5] = b.y; r.v[6] = b.z; r.v[7] = b.w;
    return r;
}

__device__ __forceinline__ fr_t fr_load(const uint64_t* base, uint64_t idx) {
    const uint4* p = reinterpret_cast<const uint4*>(base) + 2 * idx;
    return fr_from_words(p[0], p[1]);
}

// Read-only tables (twiddles, scales, matrix data) go through the non-coherent cache.
__device__ __forceinline__ fr_t fr_load_ro(const uint64_t* base, uint64_t idx) {
    const uint4* p = reinterpret_cast<const uint4*>(base) + 2 * idx;
    return fr_from_words(__ldg(p), __ldg(p + 1));
}

__device__ __forceinline__ void fr_store(uint64_t* base, uint64_t idx, const fr_t& x) {
    uint4* p = reinterpret_cast<uint4*>(base) + 2 * idx;
    p[0] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
    p[1] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
}

__device__ __forceinline__ fr_t fr_scale(const fr_t& x, const uint64_t* lo,
                                                const uint64_t* hi, uint32_t i) {
    return x * fr_load_ro(lo, i & SCALE_LO_MASK) * fr_load_ro(hi, i >> SCALE_LO_BITS);
}
