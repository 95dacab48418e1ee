// Loads and stores of Fr vectors held as (n, 4) uint64 limb arrays, on the device and in
// the host build (gpu/hostlib), and the split power tables that fold a per-index scale into
// a kernel's load or store.
//
// An element is 32 bytes; on the device it moves as two 16-byte words, which keeps a warp's
// accesses coalesced (CuPy allocations are 256-byte aligned, so every element is 16-byte
// aligned).
#pragma once

#include "field.cuh"

// A power table f(i) = lo[i & LO_MASK] * hi[i >> LO_BITS] (both Montgomery) replaces an
// n-entry table by 2^14 + n/2^14 entries: one extra product per element, no big table.
#define SCALE_LO_BITS 14
#define SCALE_LO_MASK ((1u << SCALE_LO_BITS) - 1)

#if !defined(__CUDACC__)
struct uint4 {
    uint32_t x, y, z, w;
};
static inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
    uint4 r = {x, y, z, w};
    return r;
}
#endif

static FIELD_FN fr_t fr_from_words(uint4 a, uint4 b) {
    fr_t r;
    r.v[0] = a.x; r.v[1] = a.y; r.v[2] = a.z; r.v[3] = a.w;
    r.v[4] = b.x; r.v[5] = b.y; r.v[6] = b.z; r.v[7] = b.w;
    return r;
}
static FIELD_FN uint4 fr_low_word(const fr_t& x) { return make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]); }
static FIELD_FN uint4 fr_high_word(const fr_t& x) { return make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]); }

static FIELD_FN fr_t fr_load(const uint64_t* base, uint64_t idx) {
#ifdef __CUDA_ARCH__
    const uint4* p = reinterpret_cast<const uint4*>(base) + 2 * idx;
    return fr_from_words(p[0], p[1]);
#else
    return fr_t::load(base + 4 * idx);
#endif
}

// Read-only tables (twiddles, scales, matrix data) go through the non-coherent cache.
static FIELD_FN fr_t fr_load_ro(const uint64_t* base, uint64_t idx) {
#ifdef __CUDA_ARCH__
    const uint4* p = reinterpret_cast<const uint4*>(base) + 2 * idx;
    return fr_from_words(__ldg(p), __ldg(p + 1));
#else
    return fr_t::load(base + 4 * idx);
#endif
}

static FIELD_FN void fr_store(uint64_t* base, uint64_t idx, const fr_t& x) {
#ifdef __CUDA_ARCH__
    uint4* p = reinterpret_cast<uint4*>(base) + 2 * idx;
    p[0] = fr_low_word(x);
    p[1] = fr_high_word(x);
#else
    x.store(base + 4 * idx);
#endif
}
