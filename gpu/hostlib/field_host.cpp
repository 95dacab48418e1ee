// Host (g++) build of the kernel headers, for tests on machines without a GPU: thin
// extern "C" loops over arrays of raw limbs, one entry per operation. This file: the
// fields and the scalars' digits. The other *_host.cpp files build the other kernels'
// headers: one file each, so that a first build compiles them in parallel.
#include "field.cuh"
#include "msm_scalar.cuh"

namespace {

enum Op { ADD, SUB, MUL, SQR, TO_MONT, FROM_MONT, INVERSE, NEG, PRODUCT_DIFFERENCE };

template <class F>
int apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n, int words) {
    for (long i = 0; i < n; i++) {
        F x = F::load(a + i * words), y = F::load(b + i * words), r;
        switch (op) {
            case ADD: r = x + y; break;
            case SUB: r = x - y; break;
            case MUL: r = x * y; break;
            case SQR: r = x.sqr(); break;
            case TO_MONT: r = x.to_mont(); break;
            case FROM_MONT: r = x.from_mont(); break;
            case INVERSE: r = x.inverse(); break;
            case NEG: r = -x; break;
            case PRODUCT_DIFFERENCE: r = F::product_difference(x, y, y, y); break;  // x·y - y²
            default: return -1;
        }
        r.store(out + i * words);
    }
    return 0;
}

enum LazyOp { ADD_LAZY, SUB_LAZY, MUL_LAZY };

// The lazy operations (values below 2p; field.cuh) of a prime field.
template <class F>
int lazy_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n, int words) {
    for (long i = 0; i < n; i++) {
        F x = F::load(a + i * words), y = F::load(b + i * words), r;
        switch (op) {
            case ADD_LAZY: r = F::add_lazy(x, y); break;
            case SUB_LAZY: r = F::sub_lazy(x, y); break;
            case MUL_LAZY: r = F::mul_lazy(x, y); break;
            default: return -1;
        }
        r.store(out + i * words);
    }
    return 0;
}

}  // namespace

extern "C" {

int fr_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return apply<fr_t>(op, a, b, out, n, 4);
}
int fq_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return apply<fq_t>(op, a, b, out, n, 6);
}
int fr_lazy_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return lazy_apply<fr_t>(op, a, b, out, n, 4);
}
int fq_lazy_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return lazy_apply<fq_t>(op, a, b, out, n, 6);
}
int fq2_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return apply<fq2_t>(op, a, b, out, n, 12);
}

// Signed digits of n scalars (reduced mod r first), row-major (n, windows).
void signed_digits(const uint64_t* scalars, long n, int c, int windows, int32_t* out) {
    for (long i = 0; i < n; i++) {
        scalar_t s = scalar_t::load(scalars + 4 * i);
        s.reduce();
        uint32_t carry = 0;
        for (int w = 0; w < windows; w++) out[i * windows + w] = signed_digit(s, w, c, carry);
    }
}

}
