// BLS12-381 prime fields for the GPU backend: Fr (scalars), Fq (base field) and Fq2.
//
// Values live in Montgomery form on 32-bit limbs (Fr: 8 limbs, R = 2^256; Fq: 12 limbs,
// R = 2^384), least significant first, so one element has the same bytes as the
// little-endian uint64 limbs that `snark.fields` uses: `load`/`store` move raw limbs and
// `to_mont`/`from_mont` convert at the edges.
//
// The same text compiles three ways: NVRTC (CuPy RawModule; no standard headers), nvcc
// (the compile test) and g++ -x c++ (gpu/hostlib, so CI checks the arithmetic without a
// GPU). Device code uses PTX multiply-add carry chains; the host (and a device build with
// -DFIELD_PORTABLE, kept to measure the two against each other) uses 64-bit products.
// Both compute the same fully reduced values.
#pragma once

#if defined(__CUDACC_RTC__)
typedef unsigned char uint8_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#endif

#if !defined(__CUDACC__)
#define __host__
#define __device__
#define __forceinline__ inline __attribute__((always_inline))
#endif

#if defined(__CUDA_ARCH__) && !defined(FIELD_PORTABLE)
#define FIELD_PTX 1
#endif

#define FIELD_FN __host__ __device__ __forceinline__
#if defined(__CUDACC__)
#define FIELD_NOINLINE __host__ __device__ __noinline__
#else
#define FIELD_NOINLINE __attribute__((noinline))
#endif

// Modulus-specific constants as functions of a compile-time limb index: every loop over
// limbs is fully unrolled, so each call folds to an immediate on both compilers.
#ifdef __CUDA_ARCH__
// fr_params::inv() on the device: -r^-1 mod 2^32 read from constant memory, where ptxas
// cannot see that it is -1 (see there).
__constant__ uint32_t fr_montgomery_inv = 0xffffffffu;
#endif

struct fr_params {
    static constexpr int N = 8;
    static constexpr uint32_t INV = 0xffffffffu;  // -r^-1 mod 2^32
    // The factor of each column's m = t0 * inv(). Seeing INV = -1, ptxas rewrites
    // m * r_i as -(t0 * r_i) and splits each into a low IMAD and an IMAD.HI: a kernel of one
    // Fr product had 67 IMAD.WIDE + 64 IMAD.HI + 49 IMAD (336 SASS instructions in all).
    // With the factor opaque each m * r_i is one IMAD.WIDE like a * b's: 115 + 16 + 8 (288).
    static FIELD_FN uint32_t inv() {
#ifdef __CUDA_ARCH__
        return fr_montgomery_inv;
#else
        return INV;
#endif
    }
    static FIELD_FN constexpr uint32_t mod(int i) {
        constexpr uint32_t v[N] = {0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u,
                                   0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
        return v[i];
    }
    static FIELD_FN constexpr uint32_t one(int i) {  // R mod r
        constexpr uint32_t v[N] = {0xfffffffeu, 0x00000001u, 0x00034802u, 0x5884b7fau,
                                   0xecbc4ff5u, 0x998c4fefu, 0xacc5056fu, 0x1824b159u};
        return v[i];
    }
    static FIELD_FN constexpr uint32_t rr(int i) {  // R^2 mod r
        constexpr uint32_t v[N] = {0xf3f29c6du, 0xc999e990u, 0x87925c23u, 0x2b6cedcbu,
                                   0x7254398fu, 0x05d31496u, 0x9f59ff11u, 0x0748d9d9u};
        return v[i];
    }
    static FIELD_FN constexpr uint32_t mod_minus_2(int i) {  // Fermat inversion exponent
        constexpr uint32_t v[N] = {0xffffffffu, 0xfffffffeu, 0xfffe5bfeu, 0x53bda402u,
                                   0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
        return v[i];
    }
};

struct fq_params {
    static constexpr int N = 12;
    static constexpr uint32_t INV = 0xfffcfffdu;  // -q^-1 mod 2^32
    static FIELD_FN constexpr uint32_t inv() { return INV; }  // 279 IMAD.WIDE a product as is
    static FIELD_FN constexpr uint32_t mod(int i) {
        constexpr uint32_t v[N] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu,
                                   0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u,
                                   0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
        return v[i];
    }
    static FIELD_FN constexpr uint32_t one(int i) {
        constexpr uint32_t v[N] = {0x0002fffdu, 0x76090000u, 0xc40c0002u, 0xebf4000bu,
                                   0x53c758bau, 0x5f489857u, 0x70525745u, 0x77ce5853u,
                                   0xa256ec6du, 0x5c071a97u, 0xfa80e493u, 0x15f65ec3u};
        return v[i];
    }
    static FIELD_FN constexpr uint32_t rr(int i) {
        constexpr uint32_t v[N] = {0x1c341746u, 0xf4df1f34u, 0x09d104f1u, 0x0a76e6a6u,
                                   0x4c95b6d5u, 0x8de5476cu, 0x939d83c0u, 0x67eb88a9u,
                                   0xb519952du, 0x9a793e85u, 0x92cae3aau, 0x11988fe5u};
        return v[i];
    }
    static FIELD_FN constexpr uint32_t mod_minus_2(int i) {
        constexpr uint32_t v[N] = {0xffffaaa9u, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu,
                                   0xf6b0f624u, 0x6730d2a0u, 0xf38512bfu, 0x64774b84u,
                                   0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
        return v[i];
    }
};

// Both moduli leave spare top bits (r < 2^255, q < 2^381), so a + b < 2p never overflows
// the limbs and the Montgomery product before its final subtraction stays below 2p.
template <class P>
struct mont_t {
    static constexpr int N = P::N;
    static constexpr int WORDS = N / 2;  // uint64 words in memory
    uint32_t v[N];

    static FIELD_FN mont_t zero() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    static FIELD_FN mont_t one() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = P::one(i);
        return r;
    }
    static FIELD_FN mont_t modulus() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = P::mod(i);
        return r;
    }
    static FIELD_FN mont_t twice_modulus() {  // 2p < 2^(32N): p's top bit is clear
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = (P::mod(i) << 1) | (i ? P::mod(i - 1) >> 31 : 0);
        return r;
    }

    static FIELD_FN mont_t load(const uint64_t* p) {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N / 2; i++) {
            uint64_t w = p[i];
            r.v[2 * i] = (uint32_t)w;
            r.v[2 * i + 1] = (uint32_t)(w >> 32);
        }
        return r;
    }
    FIELD_FN void store(uint64_t* p) const {
#pragma unroll
        for (int i = 0; i < N / 2; i++) p[i] = ((uint64_t)v[2 * i + 1] << 32) | v[2 * i];
    }

    FIELD_FN bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    FIELD_FN bool operator==(const mont_t& b) const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i] ^ b.v[i];
        return acc == 0;
    }
    FIELD_FN bool operator!=(const mont_t& b) const { return !(*this == b); }

    // t - p if t >= p (t < 2p), branch-free.
    static FIELD_FN mont_t reduce_once(const mont_t& t) {
        mont_t d;
        uint32_t borrow = sub_limbs(d, t, modulus());
        mont_t r;
        uint32_t keep = 0u - borrow;  // all ones: t < p, keep t
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = (t.v[i] & keep) | (d.v[i] & ~keep);
        return r;
    }

    // r = a - b over the limbs; returns the final borrow (0 or 1).
    static FIELD_FN uint32_t sub_limbs(mont_t& r, const mont_t& a, const mont_t& b) {
#ifdef FIELD_PTX
        uint32_t borrow;
        asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
        for (int i = 1; i < N; i++)
            asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(a.v[i]), "r"(b.v[i]));
        asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
        return borrow & 1;
#else
        uint64_t borrow = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t d = (uint64_t)a.v[i] - b.v[i] - borrow;
            r.v[i] = (uint32_t)d;
            borrow = (d >> 32) & 1;
        }
        return (uint32_t)borrow;
#endif
    }

    // r = a + b over the limbs; with CARRY_OUT, returns the final carry (0 or 1).
    template <bool CARRY_OUT = false>
    static FIELD_FN uint32_t add_limbs(mont_t& r, const mont_t& a, const mont_t& b) {
#ifdef FIELD_PTX
        asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
        for (int i = 1; i < N; i++)
            asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(a.v[i]), "r"(b.v[i]));
        uint32_t carry = 0;
        if (CARRY_OUT) asm volatile("addc.u32 %0, 0, 0;" : "=r"(carry));
        return carry;
#else
        uint64_t carry = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            uint64_t s = (uint64_t)a.v[i] + b.v[i] + carry;
            r.v[i] = (uint32_t)s;
            carry = s >> 32;
        }
        return (uint32_t)carry;
#endif
    }

    FIELD_FN mont_t operator+(const mont_t& b) const {
        mont_t t;
        add_limbs(t, *this, b);
        return reduce_once(t);
    }
    FIELD_FN mont_t operator-(const mont_t& b) const { return sub_adding(*this, b, modulus()); }
    // a - b, plus m where that went below zero.
    static FIELD_FN mont_t sub_adding(const mont_t& a, const mont_t& b, mont_t m) {
        mont_t t, u;
        uint32_t borrow = sub_limbs(t, a, b);
        uint32_t mask = 0u - borrow;
#pragma unroll
        for (int i = 0; i < N; i++) m.v[i] &= mask;
        add_limbs(u, t, m);
        return u;
    }

    // Lazy values, below 2p rather than p: the NTT's butterflies keep them so, which saves
    // the product's final subtraction (about a twelfth of a butterfly's instructions).
    // Sum and difference of two lazy values, again lazy (a + b < 4p may carry out of the
    // limbs: then, as when it is at least 2p, 2p comes off).
    static FIELD_FN mont_t add_lazy(const mont_t& a, const mont_t& b) {
        mont_t s, d;
        uint32_t carry = add_limbs<true>(s, a, b);
        uint32_t borrow = sub_limbs(d, s, twice_modulus());
        uint32_t keep = 0u - (borrow & ~carry & 1);  // all ones: s < 2p, keep it
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = (s.v[i] & keep) | (d.v[i] & ~keep);
        return r;
    }
    static FIELD_FN mont_t sub_lazy(const mont_t& a, const mont_t& b) {
        return sub_adding(a, b, twice_modulus());
    }
    // The product before its final subtraction: (a·b + m·p) / R < p·(1 + a·b/(p·R)) < 2p
    // wherever a·b < p·R: a lazy value times a reduced one, and for Fq (8p < R) any two lazy
    // values. Fq's products, lazy or not, are out-of-line functions on the device (inlined
    // everywhere, they multiply the code of the G2 kernels and ptxas' time, for a call
    // overhead small next to their ~500 instructions).
    static FIELD_FN mont_t mul_lazy(const mont_t& a, const mont_t& b) {
        return N > 8 ? mul_lazy_outlined(a, b) : scan_product(a, b);
    }
    static FIELD_NOINLINE mont_t mul_lazy_outlined(mont_t a, mont_t b) { return scan_product(a, b); }
    // a·a before its final subtraction (below 2p as mul_lazy's).
    FIELD_FN mont_t sqr_lazy() const { return N > 8 ? sqr_lazy_outlined(*this) : sqr_of(*this); }
    static FIELD_NOINLINE mont_t sqr_lazy_outlined(mont_t a) { return sqr_of(a); }
    FIELD_FN mont_t operator-() const { return zero() - *this; }
    FIELD_FN mont_t dbl() const { return *this + *this; }
    FIELD_FN mont_t& operator+=(const mont_t& b) { return *this = *this + b; }
    FIELD_FN mont_t& operator-=(const mont_t& b) { return *this = *this - b; }
    FIELD_FN mont_t& operator*=(const mont_t& b) { return *this = *this * b; }

    // Montgomery product a·b·R^-1.
    FIELD_FN mont_t operator*(const mont_t& b) const {
        return N > 8 ? mul_outlined(*this, b) : reduce_once(scan_product(*this, b));
    }
    static FIELD_NOINLINE mont_t mul_outlined(mont_t a, mont_t b) {
        return reduce_once(scan_product(a, b));
    }
    static FIELD_FN mont_t scan_product(const mont_t& a, const mont_t& b) {
        const mont_t* as[1] = {&a};
        const mont_t* bs[1] = {&b};
        return scan_products<1>(as, bs);
    }

    // a·b + c·d with one Montgomery reduction instead of two, before its final subtraction:
    // the point formulas' Y3 is such a sum (a difference, with one factor negated), and a
    // reduction is half a product's multiply-adds. Below 2p where a·b + c·d < p·R.
    static FIELD_FN mont_t dot_lazy(const mont_t& a, const mont_t& b, const mont_t& c,
                                    const mont_t& d) {
        return N > 8 ? dot_outlined(a, b, c, d) : dot_of(a, b, c, d);
    }
    static FIELD_NOINLINE mont_t dot_outlined(mont_t a, mont_t b, mont_t c, mont_t d) {
        return dot_of(a, b, c, d);
    }
    static FIELD_FN mont_t dot_of(const mont_t& a, const mont_t& b, const mont_t& c,
                                  const mont_t& d) {
        const mont_t* as[2] = {&a, &c};
        const mont_t* bs[2] = {&b, &d};
        return scan_products<2>(as, bs);
    }
    // a·b - c·d as a·b + c·(p - d), reduced: for reduced values the sum is below 2p², and
    // 2p < R for both fields.
    static FIELD_FN mont_t product_difference(const mont_t& a, const mont_t& b, const mont_t& c,
                                              const mont_t& d) {
        return reduce_once(dot_lazy(a, b, c, -d));
    }
    // The same on lazy values, lazy, as a·b + c·(2p - d): the sum is below 8p², so this
    // holds where 8p < R, Fq's case (p < 2^381).
    static FIELD_FN mont_t product_difference_lazy(const mont_t& a, const mont_t& b,
                                                   const mont_t& c, const mont_t& d) {
        return dot_lazy(a, b, c, sub_lazy(zero(), d));
    }

    // sum_i a_i·b_i·R^-1 by product scanning (FIPS): column k of sum_i a_i·b_i + m·p is
    // summed into a 96-bit accumulator, one multiply-add per product; m_k is chosen from the
    // column's low word so that it clears, and the accumulator moves down one word per
    // column. On sm_90, ptxas turns each product's lo/hi pair in one carry chain into a
    // single IMAD.WIDE.U32, where the row-wise CIOS form of before needed ~4 instructions a
    // product (its lo and hi halves in separate chains: 1260 instructions for an Fq product
    // against ~500). For K = 1 and a, b below 2p and p the result is below 2p; the caller
    // bounds larger K's.
    template <int K>
    static FIELD_FN mont_t scan_products(const mont_t* const (&a)[K], const mont_t* const (&b)[K]) {
        uint32_t m[N], r[N];
        uint32_t t0 = 0, t1 = 0, t2 = 0;
#pragma unroll
        for (int k = 0; k < N; k++) {
#pragma unroll
            for (int j = 0; j < k; j++) {
#pragma unroll
                for (int i = 0; i < K; i++) mac(t0, t1, t2, a[i]->v[j], b[i]->v[k - j]);
                mac(t0, t1, t2, m[j], P::mod(k - j));
            }
#pragma unroll
            for (int i = 0; i < K; i++) mac(t0, t1, t2, a[i]->v[k], b[i]->v[0]);
            m[k] = t0 * P::inv();
            mac(t0, t1, t2, m[k], P::mod(0));  // t0 becomes 0; its carry moves up
            t0 = t1;
            t1 = t2;
            t2 = 0;
        }
#pragma unroll
        for (int k = N; k < 2 * N - 1; k++) {
#pragma unroll
            for (int j = k - N + 1; j < N; j++) {
#pragma unroll
                for (int i = 0; i < K; i++) mac(t0, t1, t2, a[i]->v[j], b[i]->v[k - j]);
                mac(t0, t1, t2, m[j], P::mod(k - j));
            }
            r[k - N] = t0;
            t0 = t1;
            t1 = t2;
            t2 = 0;
        }
        r[N - 1] = t0;  // the result is below 2p < 2^(32N): nothing above this word
        mont_t out;
#pragma unroll
        for (int i = 0; i < N; i++) out.v[i] = r[i];
        return out;
    }

    // (t2, t1, t0) += x·y.
    static FIELD_FN void mac(uint32_t& t0, uint32_t& t1, uint32_t& t2, uint32_t x, uint32_t y) {
#ifdef FIELD_PTX
        asm("mad.lo.cc.u32 %0, %3, %4, %0;\n\t"
            "madc.hi.cc.u32 %1, %3, %4, %1;\n\t"
            "addc.u32 %2, %2, 0;"
            : "+r"(t0), "+r"(t1), "+r"(t2) : "r"(x), "r"(y));
#else
        uint64_t low = (uint64_t)x * y + t0;
        uint64_t high = (uint64_t)t1 + (low >> 32);
        t0 = (uint32_t)low;
        t1 = (uint32_t)high;
        t2 += (uint32_t)(high >> 32);
#endif
    }

    FIELD_FN mont_t sqr() const { return N > 8 ? sqr_outlined(*this) : reduce_once(sqr_of(*this)); }
    static FIELD_NOINLINE mont_t sqr_outlined(mont_t a) { return reduce_once(sqr_of(a)); }

    // a·a·R^-1 before its final subtraction, in the column order of scan_products, with each
    // cross product a_i·a_j (i < j) taken once: a column's cross products are summed apart
    // and added twice, so a square costs N(N+1)/2 products for a·a instead of N².
    static FIELD_FN mont_t sqr_of(const mont_t& a) {
        uint32_t m[N], r[N];
        uint32_t t0 = 0, t1 = 0, t2 = 0;
#pragma unroll
        for (int k = 0; k < 2 * N - 1; k++) {
            uint32_t c0 = 0, c1 = 0, c2 = 0;
#pragma unroll
            for (int i = 0; i < N; i++)
                if (i < k - i && k - i < N) mac(c0, c1, c2, a.v[i], a.v[k - i]);
            add96(t0, t1, t2, c0, c1, c2);
            add96(t0, t1, t2, c0, c1, c2);
            if (k % 2 == 0) mac(t0, t1, t2, a.v[k / 2], a.v[k / 2]);
#pragma unroll
            for (int j = 0; j < N; j++)
                if (j < k && k - j < N) mac(t0, t1, t2, m[j], P::mod(k - j));
            if (k < N) {
                m[k] = t0 * P::inv();
                mac(t0, t1, t2, m[k], P::mod(0));
            } else {
                r[k - N] = t0;
            }
            t0 = t1;
            t1 = t2;
            t2 = 0;
        }
        r[N - 1] = t0;
        mont_t out;
#pragma unroll
        for (int i = 0; i < N; i++) out.v[i] = r[i];
        return out;
    }

    // (t2, t1, t0) += (c2, c1, c0).
    static FIELD_FN void add96(uint32_t& t0, uint32_t& t1, uint32_t& t2, uint32_t c0, uint32_t c1,
                               uint32_t c2) {
#ifdef FIELD_PTX
        asm("add.cc.u32 %0, %0, %3;\n\t"
            "addc.cc.u32 %1, %1, %4;\n\t"
            "addc.u32 %2, %2, %5;"
            : "+r"(t0), "+r"(t1), "+r"(t2) : "r"(c0), "r"(c1), "r"(c2));
#else
        uint64_t low = (uint64_t)t0 + c0;
        uint64_t high = (uint64_t)t1 + c1 + (low >> 32);
        t0 = (uint32_t)low;
        t1 = (uint32_t)high;
        t2 += c2 + (uint32_t)(high >> 32);
#endif
    }

    FIELD_FN mont_t to_mont() const {
        mont_t rr;
#pragma unroll
        for (int i = 0; i < N; i++) rr.v[i] = P::rr(i);
        return *this * rr;
    }
    FIELD_FN mont_t from_mont() const {
        mont_t one_std = zero();
        one_std.v[0] = 1;
        return *this * one_std;
    }

    // a^(p-2) (Fermat); zero maps to zero. Square-and-multiply from the top bit.
    FIELD_FN mont_t inverse() const {
        mont_t r = one();
#pragma unroll 1
        for (int i = N - 1; i >= 0; i--) {
            uint32_t e = exponent_limb(i);
#pragma unroll 1
            for (int bit = 31; bit >= 0; bit--) {
                r = r.sqr();
                if ((e >> bit) & 1) r = r * *this;
            }
        }
        return r;
    }

  private:
    // Exponent limbs by a run-time index without a local-memory array.
    static FIELD_FN uint32_t exponent_limb(int i) {
        uint32_t e = 0;
#pragma unroll
        for (int k = 0; k < N; k++) e = (k == i) ? P::mod_minus_2(k) : e;
        return e;
    }
};

typedef mont_t<fr_params> fr_t;
typedef mont_t<fq_params> fq_t;

// Fq2 = Fq[u] / (u^2 + 1).
struct fq2_t {
    static constexpr int WORDS = 2 * fq_t::WORDS;
    fq_t c0, c1;

    static FIELD_FN fq2_t make(const fq_t& a, const fq_t& b) {
        fq2_t r;
        r.c0 = a;
        r.c1 = b;
        return r;
    }
    static FIELD_FN fq2_t zero() { return make(fq_t::zero(), fq_t::zero()); }
    static FIELD_FN fq2_t one() { return make(fq_t::one(), fq_t::zero()); }
    // Raw limbs c0 then c1, 12 uint64 in all (the layout of `snark.curve` G2 arrays).
    static FIELD_FN fq2_t load(const uint64_t* p) { return make(fq_t::load(p), fq_t::load(p + 6)); }
    FIELD_FN void store(uint64_t* p) const {
        c0.store(p);
        c1.store(p + 6);
    }
    FIELD_FN bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    FIELD_FN bool operator==(const fq2_t& b) const { return c0 == b.c0 && c1 == b.c1; }
    FIELD_FN bool operator!=(const fq2_t& b) const { return !(*this == b); }
    FIELD_FN fq2_t operator+(const fq2_t& b) const { return make(c0 + b.c0, c1 + b.c1); }
    FIELD_FN fq2_t operator-(const fq2_t& b) const { return make(c0 - b.c0, c1 - b.c1); }
    FIELD_FN fq2_t operator-() const { return make(-c0, -c1); }
    FIELD_FN fq2_t dbl() const { return make(c0.dbl(), c1.dbl()); }
    FIELD_FN fq2_t& operator+=(const fq2_t& b) { return *this = *this + b; }
    FIELD_FN fq2_t& operator-=(const fq2_t& b) { return *this = *this - b; }
    FIELD_FN fq2_t& operator*=(const fq2_t& b) { return *this = *this * b; }
    // Karatsuba: three Fq products.
    FIELD_FN fq2_t operator*(const fq2_t& b) const {
        fq_t t0 = c0 * b.c0, t1 = c1 * b.c1;
        fq_t t2 = (c0 + c1) * (b.c0 + b.c1);
        return make(t0 - t1, t2 - t0 - t1);
    }
    // a·b - c·d, as the point formulas ask it of any field; here two products as written
    // (Fq's one reduction, applied per coefficient, would hold more values live than G2's
    // kernels have registers for).
    static FIELD_FN fq2_t product_difference(const fq2_t& a, const fq2_t& b, const fq2_t& c,
                                             const fq2_t& d) {
        return a * b - c * d;
    }
    // The lazy operations the hot point formula asks of its field (field.cuh's lazy values
    // are Fq's): Fq2's are the reduced ones, whose values are lazy too (Karatsuba's sums of
    // lazy values would leave the bound of mul_lazy).
    static FIELD_FN fq2_t reduce_once(const fq2_t& a) { return a; }
    static FIELD_FN fq2_t add_lazy(const fq2_t& a, const fq2_t& b) { return a + b; }
    static FIELD_FN fq2_t sub_lazy(const fq2_t& a, const fq2_t& b) { return a - b; }
    static FIELD_FN fq2_t mul_lazy(const fq2_t& a, const fq2_t& b) { return a * b; }
    FIELD_FN fq2_t sqr_lazy() const { return sqr(); }
    static FIELD_FN fq2_t product_difference_lazy(const fq2_t& a, const fq2_t& b, const fq2_t& c,
                                                  const fq2_t& d) {
        return product_difference(a, b, c, d);
    }
    // (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: two Fq products.
    FIELD_FN fq2_t sqr() const {
        fq_t t = c0 * c1;
        return make((c0 + c1) * (c0 - c1), t.dbl());
    }
    FIELD_FN fq2_t to_mont() const { return make(c0.to_mont(), c1.to_mont()); }
    FIELD_FN fq2_t from_mont() const { return make(c0.from_mont(), c1.from_mont()); }
    // 1 / (a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2).
    FIELD_FN fq2_t inverse() const {
        fq_t n = (c0.sqr() + c1.sqr()).inverse();
        return make(c0 * n, -(c1 * n));
    }
};
