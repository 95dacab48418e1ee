// BLS12-381 G1 (over Fq) and G2 (over Fq2) point arithmetic, for any field type F of
// field.cuh. Both curves are y^2 = x^3 + b with a = 0 (b = 4 and 4(1 + u)); the formulas
// below never use b.
//
// Affine points mark infinity as (0, 0), which is on neither curve: the standard-form zero
// rows of `snark.curve.PointArray` stay zero under to_mont, so no extra flag travels.
// Projective points are XYZZ (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2), infinity when ZZ = 0:
// mixed addition costs 8M + 2S and needs no inversion, and the exceptional cases (P + P,
// P + (-P), either operand at infinity) are branches, not wrong answers. Each formula's Y3,
// a difference of two products, takes one reduction for both in Fq (F::product_difference).
#pragma once
#include "field.cuh"

template <class F>
struct affine_t {
    F x, y;

    static FIELD_FN affine_t infinity() {
        affine_t r;
        r.x = F::zero();
        r.y = F::zero();
        return r;
    }
    FIELD_FN bool is_inf() const { return x.is_zero() && y.is_zero(); }
    // Raw limbs x then y (no Montgomery conversion).
    static FIELD_FN affine_t load(const uint64_t* p) {
        affine_t r;
        r.x = F::load(p);
        r.y = F::load(p + F::WORDS);
        return r;
    }
    FIELD_FN void store(uint64_t* p) const {
        x.store(p);
        y.store(p + F::WORDS);
    }
    FIELD_FN affine_t operator-() const {
        affine_t r;
        r.x = x;
        r.y = -y;
        return r;
    }
    FIELD_FN affine_t to_mont() const {
        affine_t r;
        r.x = x.to_mont();
        r.y = y.to_mont();
        return r;
    }
    FIELD_FN affine_t from_mont() const {
        affine_t r;
        r.x = x.from_mont();
        r.y = y.from_mont();
        return r;
    }
};

template <class F>
struct xyzz_t {
    F X, Y, ZZ, ZZZ;

    static FIELD_FN xyzz_t infinity() {
        xyzz_t r;
        r.X = F::zero();
        r.Y = F::zero();
        r.ZZ = F::zero();
        r.ZZZ = F::zero();
        return r;
    }
    static FIELD_FN xyzz_t from_affine(const affine_t<F>& a) {
        if (a.is_inf()) return infinity();
        xyzz_t r;
        r.X = a.x;
        r.Y = a.y;
        r.ZZ = F::one();
        r.ZZZ = F::one();
        return r;
    }
    FIELD_FN bool is_inf() const { return ZZ.is_zero(); }

    static FIELD_FN xyzz_t load(const uint64_t* p) {
        xyzz_t r;
        r.X = F::load(p);
        r.Y = F::load(p + F::WORDS);
        r.ZZ = F::load(p + 2 * F::WORDS);
        r.ZZZ = F::load(p + 3 * F::WORDS);
        return r;
    }
    FIELD_FN void store(uint64_t* p) const {
        X.store(p);
        Y.store(p + F::WORDS);
        ZZ.store(p + 2 * F::WORDS);
        ZZZ.store(p + 3 * F::WORDS);
    }

    FIELD_FN xyzz_t operator-() const {
        xyzz_t r = *this;
        r.Y = -Y;
        return r;
    }

    // Doubling and the general addition are out of line: they run in the bucket and window
    // reductions, where two or three live points would otherwise crowd the registers; the
    // hot bucket accumulation uses the inlined mixed addition only.
    FIELD_FN xyzz_t dbl() const { return dbl_of(*this); }
    FIELD_FN xyzz_t operator+(const xyzz_t& q) const { return sum_of(*this, q); }

    // 2P (dbl-2008-s-1 with a = 0); a point with Y = 0 doubles to ZZ = 0, i.e. infinity.
    static FIELD_NOINLINE xyzz_t dbl_of(xyzz_t p) {
        const F &X = p.X, &Y = p.Y, &ZZ = p.ZZ, &ZZZ = p.ZZZ;
        F U = Y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = X * V;
        F XX = X.sqr();
        F M = XX.dbl() + XX;
        xyzz_t r;
        r.X = M.sqr() - S.dbl();
        r.Y = F::product_difference(M, S - r.X, W, Y);
        r.ZZ = V * ZZ;
        r.ZZZ = W * ZZZ;
        return r;
    }

    // 2A for an affine A (ZZ = ZZZ = 1 folded in).
    static FIELD_FN xyzz_t dbl_affine(const affine_t<F>& a) {
        F U = a.y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = a.x * V;
        F XX = a.x.sqr();
        F M = XX.dbl() + XX;
        xyzz_t r;
        r.X = M.sqr() - S.dbl();
        r.Y = F::product_difference(M, S - r.X, W, a.y);
        r.ZZ = V;
        r.ZZZ = W;
        return r;
    }

    // P + A for an affine A (madd-2008-s).
    FIELD_FN xyzz_t add_affine(const affine_t<F>& a) const { return add_affine_lazy(a).reduced(); }

    // The same with this point's coordinates lazy (below 2p, field.cuh; A's reduced), the
    // result lazy: the bucket sums' addition, run ~13 times a base, skips each product's
    // final subtraction (about a twelfth of its instructions) and reduces only the two values
    // it compares with zero.
    FIELD_FN xyzz_t add_affine_lazy(const affine_t<F>& a) const {
        if (a.is_inf()) return *this;
        if (is_inf()) return from_affine(a);
        F P = F::sub_lazy(F::mul_lazy(a.x, ZZ), X);
        F R = F::sub_lazy(F::mul_lazy(a.y, ZZZ), Y);
        if (F::reduce_once(P).is_zero())
            return F::reduce_once(R).is_zero() ? dbl_affine(a) : infinity();
        F PP = P.sqr_lazy();
        F PPP = F::mul_lazy(P, PP);
        F Q = F::mul_lazy(X, PP);
        xyzz_t r;
        r.X = F::sub_lazy(F::sub_lazy(R.sqr_lazy(), PPP), F::add_lazy(Q, Q));
        r.Y = F::product_difference_lazy(R, F::sub_lazy(Q, r.X), Y, PPP);
        r.ZZ = F::mul_lazy(ZZ, PP);
        r.ZZZ = F::mul_lazy(ZZZ, PPP);
        return r;
    }

    // Lazy coordinates reduced (a lazy ZZ is 0 only at infinity: the products of nonzero
    // values are not multiples of p).
    FIELD_FN xyzz_t reduced() const {
        xyzz_t r;
        r.X = F::reduce_once(X);
        r.Y = F::reduce_once(Y);
        r.ZZ = F::reduce_once(ZZ);
        r.ZZZ = F::reduce_once(ZZZ);
        return r;
    }

    // P + Q (add-2008-s).
    static FIELD_NOINLINE xyzz_t sum_of(xyzz_t p, xyzz_t q) {
        if (q.is_inf()) return p;
        if (p.is_inf()) return q;
        const F &X = p.X, &Y = p.Y, &ZZ = p.ZZ, &ZZZ = p.ZZZ;
        F U1 = X * q.ZZ;
        F S1 = Y * q.ZZZ;
        F P = q.X * ZZ - U1;
        F R = q.Y * ZZZ - S1;
        if (P.is_zero()) return R.is_zero() ? dbl_of(p) : infinity();
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = U1 * PP;
        xyzz_t r;
        r.X = R.sqr() - PPP - Q.dbl();
        r.Y = F::product_difference(R, Q - r.X, S1, PPP);
        r.ZZ = ZZ * q.ZZ * PP;
        r.ZZZ = ZZZ * q.ZZZ * PPP;
        return r;
    }
    FIELD_FN xyzz_t& operator+=(const xyzz_t& q) { return *this = *this + q; }

    // One field inversion: 1/ZZZ, then 1/Z = ZZ/ZZZ and 1/ZZ = (1/Z)^2.
    FIELD_FN affine_t<F> to_affine() const {
        if (is_inf()) return affine_t<F>::infinity();
        F zzz_inv = ZZZ.inverse();
        F z_inv = ZZ * zzz_inv;
        affine_t<F> r;
        r.x = X * z_inv.sqr();
        r.y = Y * zzz_inv;
        return r;
    }
};

typedef affine_t<fq_t> g1_affine_t;
typedef xyzz_t<fq_t> g1_xyzz_t;
typedef affine_t<fq2_t> g2_affine_t;
typedef xyzz_t<fq2_t> g2_xyzz_t;
