// Host build of the curves' point formulas (curve.cuh), for tests without a GPU; see
// field_host.cpp.
#include "curve.cuh"

namespace {

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

int g1_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return point_apply<fq_t>(op, a, b, out, n);
}
int g2_apply(int op, const uint64_t* a, const uint64_t* b, uint64_t* out, long n) {
    return point_apply<fq2_t>(op, a, b, out, n);
}

}
