// Montgomery arithmetic over the BLS12-381 fields: Fr (4 limbs), Fq (6 limbs) and
// Fq2 = Fq[u]/(u² + 1). Values are little-endian 64-bit limbs, kept in Montgomery form
// (a·2^(64N) mod p) inside the library; load_std/store_std convert at the boundary.
#pragma once

#include <cstdint>

// The x86-64 products need BMI2 (mulx) and ADX (adcx, adox); elsewhere, or built with
// PQ_PORTABLE, the C product below runs instead (tests build and check both).
#if defined(__x86_64__) && defined(__BMI2__) && defined(__ADX__) && !defined(PQ_PORTABLE)
#define PQ_MONT_ASM 1
#include "mont_asm.hpp"
#endif

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

// The field operations are small and everywhere: always inlined (GCC otherwise keeps
// the product out of line, a call per multiplication)
#define PQ_INLINE __attribute__((always_inline)) inline

namespace pq {

typedef unsigned __int128 u128;

// a + b + carry and a − b − borrow with the carry in and out: adc and sbb chains on x86-64
// (what unsigned __int128 sums do not compile to)
PQ_INLINE uint64_t add_carry(uint64_t a, uint64_t b, unsigned char& carry) {
#if defined(__x86_64__)
    unsigned long long out;
    carry = _addcarry_u64(carry, a, b, &out);
    return out;
#else
    u128 t = (u128)a + b + carry;
    carry = (unsigned char)(t >> 64);
    return (uint64_t)t;
#endif
}

PQ_INLINE uint64_t sub_borrow(uint64_t a, uint64_t b, unsigned char& borrow) {
#if defined(__x86_64__)
    unsigned long long out;
    borrow = _subborrow_u64(borrow, a, b, &out);
    return out;
#else
    u128 t = (u128)a - b - borrow;
    borrow = (unsigned char)((t >> 64) & 1);
    return (uint64_t)t;
#endif
}

struct FrParams {
    static constexpr int N = 4;
    static constexpr uint64_t P[4] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL,
                                      0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};
    static constexpr uint64_t R[4] = {0x00000001fffffffeULL, 0x5884b7fa00034802ULL,
                                      0x998c4fefecbc4ff5ULL, 0x1824b159acc5056fULL};
    static constexpr uint64_t R2[4] = {0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL,
                                       0x05d314967254398fULL, 0x0748d9d99f59ff11ULL};
    static constexpr uint64_t INV = 0xfffffffeffffffffULL;  // −p⁻¹ mod 2^64
};

struct FqParams {
    static constexpr int N = 6;
    static constexpr uint64_t P[6] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL,
                                      0x6730d2a0f6b0f624ULL, 0x64774b84f38512bfULL,
                                      0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
    static constexpr uint64_t R[6] = {0x760900000002fffdULL, 0xebf4000bc40c0002ULL,
                                      0x5f48985753c758baULL, 0x77ce585370525745ULL,
                                      0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL};
    static constexpr uint64_t R2[6] = {0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL,
                                       0x8de5476c4c95b6d5ULL, 0x67eb88a9939d83c0ULL,
                                       0x9a793e85b519952dULL, 0x11988fe592cae3aaULL};
    static constexpr uint64_t INV = 0x89f3fffcfffcfffdULL;
};

// Both moduli leave the top bit of their top limb clear (and then some), so a sum of two
// reduced values fits N limbs and the CIOS product needs no (N+2)-th word.
template <class C>
struct Mont {
    static constexpr int N = C::N;
    static constexpr int WORDS = N;  // uint64 words of one element at the boundary
    uint64_t v[N];

    static Mont zero() {
        Mont r;
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    static Mont one() { return raw(C::R); }
    static Mont raw(const uint64_t* limbs) {
        Mont r;
        for (int i = 0; i < N; i++) r.v[i] = limbs[i];
        return r;
    }
    // a < p, for values read from outside
    static bool canonical(const uint64_t* a) {
        for (int i = N - 1; i >= 0; i--) {
            if (a[i] != C::P[i]) return a[i] < C::P[i];
        }
        return false;
    }
    static Mont load_std(const uint64_t* a) { return raw(a) * raw(C::R2); }
    void store_std(uint64_t* out) const {
        Mont unit = zero();
        unit.v[0] = 1;
        Mont s = *this * unit;
        for (int i = 0; i < N; i++) out[i] = s.v[i];
    }
    void store_raw(uint64_t* out) const {
        for (int i = 0; i < N; i++) out[i] = v[i];
    }

    PQ_INLINE bool is_zero() const {
        uint64_t acc = 0;
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    PQ_INLINE bool operator==(const Mont& o) const {
        uint64_t acc = 0;
        for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }
    bool operator!=(const Mont& o) const { return !(*this == o); }

    // r − p if that does not borrow, else r (r < 2p); branch-free, as every step below:
    // a data-dependent branch here is mispredicted half the time
    PQ_INLINE static Mont reduce_once(const Mont& r) {
        Mont d;
        unsigned char borrow = 0;
        for (int i = 0; i < N; i++) d.v[i] = sub_borrow(r.v[i], C::P[i], borrow);
        uint64_t keep = 0 - (uint64_t)borrow;  // all ones: r < p, keep r
        for (int i = 0; i < N; i++) {
            asm("" : "+r"(keep));  // a scalar select: vectorised, it goes through the stack
            d.v[i] = (r.v[i] & keep) | (d.v[i] & ~keep);
        }
        return d;
    }

    friend PQ_INLINE Mont operator+(const Mont& a, const Mont& b) {
        Mont r;
        unsigned char carry = 0;
        for (int i = 0; i < N; i++) r.v[i] = add_carry(a.v[i], b.v[i], carry);
        return reduce_once(r);
    }
    friend PQ_INLINE Mont operator-(const Mont& a, const Mont& b) {
        Mont r;
        unsigned char borrow = 0;
        for (int i = 0; i < N; i++) r.v[i] = sub_borrow(a.v[i], b.v[i], borrow);
        const uint64_t add_p = 0 - (uint64_t)borrow;
        unsigned char carry = 0;
        for (int i = 0; i < N; i++) r.v[i] = add_carry(r.v[i], C::P[i] & add_p, carry);
        return r;
    }
    PQ_INLINE Mont operator-() const { return zero() - *this; }
    PQ_INLINE Mont dbl() const { return *this + *this; }
    Mont& operator+=(const Mont& o) { return *this = *this + o; }
    Mont& operator-=(const Mont& o) { return *this = *this - o; }
    Mont& operator*=(const Mont& o) { return *this = *this * o; }

    // Montgomery product a·b·2^(−64N) (CIOS, one final subtraction)
    friend PQ_INLINE Mont operator*(const Mont& a, const Mont& b) {
#ifdef PQ_MONT_ASM
        Mont r;
        if constexpr (N == 4) {
            mont_mul_asm4(r.v, a.v, b.v, C::P, &C::INV);
        } else {
            mont_mul_asm6(r.v, a.v, b.v, C::P, &C::INV);
        }
        return r;
#else
        uint64_t t[N + 1];
        for (int i = 0; i <= N; i++) t[i] = 0;
        for (int i = 0; i < N; i++) {
            u128 c = 0;
            for (int j = 0; j < N; j++) {
                c += (u128)a.v[j] * b.v[i] + t[j];
                t[j] = (uint64_t)c;
                c >>= 64;
            }
            t[N] = (uint64_t)c;
            uint64_t m = t[0] * C::INV;
            c = ((u128)m * C::P[0] + t[0]) >> 64;
            for (int j = 1; j < N; j++) {
                c += (u128)m * C::P[j] + t[j];
                t[j - 1] = (uint64_t)c;
                c >>= 64;
            }
            t[N - 1] = t[N] + (uint64_t)c;
        }
        return reduce_once(raw(t));
#endif
    }
    PQ_INLINE Mont sqr() const { return *this * *this; }

    // this^e for an exponent of `words` limbs, from its highest set bit: a small exponent
    // (Poseidon's x^5) costs its bit length, not 64 squarings a limb. The work depends on
    // the exponent alone, never on the base.
    Mont pow(const uint64_t* e, int words) const {
        Mont r = one();
        bool started = false;
        for (int i = words - 1; i >= 0; i--) {
            for (int bit = 63; bit >= 0; bit--) {
                const bool set = (e[i] >> bit) & 1;
                if (started) r = r.sqr();
                if (set) {
                    r = started ? r * *this : *this;
                    started = true;
                }
            }
        }
        return r;
    }
    Mont pow(uint64_t e) const { return pow(&e, 1); }
    // Fermat: this^(p−2); zero stays zero
    Mont inverse() const {
        uint64_t e[N];
        uint64_t borrow = 2;
        for (int i = 0; i < N; i++) {
            u128 t = (u128)C::P[i] - borrow;
            e[i] = (uint64_t)t;
            borrow = (uint64_t)(t >> 64) & 1;
        }
        return pow(e, N);
    }
};

typedef Mont<FrParams> Fr;
typedef Mont<FqParams> Fq;

struct Fq2 {
    static constexpr int WORDS = 12;
    Fq c0, c1;

    static Fq2 zero() { return {Fq::zero(), Fq::zero()}; }
    static Fq2 one() { return {Fq::one(), Fq::zero()}; }
    static bool canonical(const uint64_t* a) { return Fq::canonical(a) && Fq::canonical(a + 6); }
    static Fq2 load_std(const uint64_t* a) { return {Fq::load_std(a), Fq::load_std(a + 6)}; }
    void store_std(uint64_t* out) const {
        c0.store_std(out);
        c1.store_std(out + 6);
    }
    void store_raw(uint64_t* out) const {
        c0.store_raw(out);
        c1.store_raw(out + 6);
    }
    bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    bool operator==(const Fq2& o) const { return c0 == o.c0 && c1 == o.c1; }
    bool operator!=(const Fq2& o) const { return !(*this == o); }
    friend Fq2 operator+(const Fq2& a, const Fq2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
    friend Fq2 operator-(const Fq2& a, const Fq2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
    Fq2 operator-() const { return {-c0, -c1}; }
    Fq2 dbl() const { return {c0.dbl(), c1.dbl()}; }
    // Karatsuba: three base-field products
    friend Fq2 operator*(const Fq2& a, const Fq2& b) {
        Fq v0 = a.c0 * b.c0, v1 = a.c1 * b.c1;
        return {v0 - v1, (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1};
    }
    Fq2 sqr() const {
        Fq t = c0 * c1;
        return {(c0 + c1) * (c0 - c1), t.dbl()};
    }
    // (c0 − c1·u) / (c0² + c1²)
    Fq2 inverse() const {
        Fq t = (c0.sqr() + c1.sqr()).inverse();
        return {c0 * t, -(c1 * t)};
    }
};

}  // namespace pq
