// Host (g++) build of the kernel headers, for tests on machines without a GPU: thin
// extern "C" loops over arrays of raw limbs, one entry per operation.
#include "curve.cuh"
#include "msm_scalar.cuh"

namespace {

enum Op { ADD, SUB, MUL, SQR, TO_MONT, FROM_MONT, INVERSE, NEG };

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
            default: return -1;
        }
        r.store(out + i * words);
    }
    return 0;
}

enum PointOp { P_ADD, P_MADD, P_DBL, P_DBL_AFFINE, P_ADD_PROJ, P_MADD_PROJ, P_MADD_NEG };

// Affine standard-form inputs in, affine standard-form output: the XYZZ formulas are
// exercised with unit and non-unit Z (the *_PROJ ops double first) and the inversion.
template <class F>
int point_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    typedef affine_t<F> A;
    typedef xyzz_t<F> X;
    const int words = 2 * F::WORDS;
    for (long i = 0; i < n; i++) {
        A p = A::load(a + i * words).to_mont(), q = A::load(b + i * words).to_mont();
        X r;
        switch (op) {
            case P_ADD: r = X::from_affine(p) + X::from_affine(q); break;
            case P_MADD: r = X::from_affine(p).add_affine(q); break;
            case P_DBL: r = X::from_affine(p).dbl(); break;
            case P_DBL_AFFINE: r = X::dbl_affine(p); break;
            case P_ADD_PROJ: r = X::from_affine(p).dbl() + X::from_affine(q).dbl(); break;
            case P_MADD_PROJ: r = X::from_affine(p).dbl().add_affine(q); break;
            case P_MADD_NEG: r = X::from_affine(p).add_affine(-q); break;
            default: return -1;
        }
        r.to_affine().from_mont().store(out + i * words);
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
int g1_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return point_apply<fq_t>(op, a, b, out, n);
}
int g2_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return point_apply<fq2_t>(op, a, b, out, n);
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

int fq2_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return apply<fq2_t>(op, a, b, out, n, 12);
}

}
