// Points of y² = x³ + b over F (Fq for G1, Fq2 for G2): affine points and XYZZ
// coordinates (x = X/ZZ, y = Y/ZZZ, ZZ³ = ZZZ²; ZZ = 0 is infinity), with the a = 0
// formulas of the explicit-formulas database (add-2008-s, madd-2008-s, dbl-2008-s-1), and
// batches of affine additions that share one inversion (Montgomery's trick).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "field.hpp"

namespace pq {

template <class F>
struct Affine {
    F x, y;
    static constexpr int WORDS = 2 * F::WORDS;

    Affine neg() const { return {x, -y}; }
    static Affine load_std(const uint64_t* p) { return {F::load_std(p), F::load_std(p + F::WORDS)}; }
    void store_std(uint64_t* p) const {
        x.store_std(p);
        y.store_std(p + F::WORDS);
    }
};

template <class F>
struct Xyzz {
    F X, Y, ZZ, ZZZ;

    static Xyzz inf() { return {F::zero(), F::zero(), F::zero(), F::zero()}; }
    static Xyzz from_affine(const Affine<F>& p) { return {p.x, p.y, F::one(), F::one()}; }
    bool is_inf() const { return ZZ.is_zero(); }

    // 2·(x, y) of an affine point
    static Xyzz dbl_affine(const Affine<F>& p) {
        if (p.y.is_zero()) return inf();
        F u = p.y.dbl(), v = u.sqr(), w = u * v, s = p.x * v;
        F xx = p.x.sqr(), m = xx.dbl() + xx;
        F x3 = m.sqr() - s.dbl();
        return {x3, m * (s - x3) - w * p.y, v, w};
    }

    void dbl() {
        if (is_inf()) return;
        F u = Y.dbl(), v = u.sqr(), w = u * v, s = X * v;
        F xx = X.sqr(), m = xx.dbl() + xx;
        F x3 = m.sqr() - s.dbl();
        Y = m * (s - x3) - w * Y;
        X = x3;
        ZZ = ZZ * v;
        ZZZ = ZZZ * w;
    }

    void add_affine(const Affine<F>& q) {
        if (is_inf()) {
            *this = from_affine(q);
            return;
        }
        F p = q.x * ZZ - X, r = q.y * ZZZ - Y;
        if (p.is_zero()) {
            *this = r.is_zero() ? dbl_affine(q) : inf();
            return;
        }
        F pp = p.sqr(), ppp = p * pp, s = X * pp;
        F x3 = r.sqr() - ppp - s.dbl();
        Y = r * (s - x3) - Y * ppp;
        X = x3;
        ZZ = ZZ * pp;
        ZZZ = ZZZ * ppp;
    }

    void add(const Xyzz& q) {
        if (q.is_inf()) return;
        if (is_inf()) {
            *this = q;
            return;
        }
        F u1 = X * q.ZZ, u2 = q.X * ZZ, s1 = Y * q.ZZZ, s2 = q.Y * ZZZ;
        F p = u2 - u1, r = s2 - s1;
        if (p.is_zero()) {
            if (r.is_zero()) {
                dbl();
            } else {
                *this = inf();
            }
            return;
        }
        F pp = p.sqr(), ppp = p * pp, s = u1 * pp;
        F x3 = r.sqr() - ppp - s.dbl();
        Y = r * (s - x3) - s1 * ppp;
        X = x3;
        ZZ = ZZ * q.ZZ * pp;
        ZZZ = ZZZ * q.ZZZ * ppp;
    }

    // (affine, finite?)
    bool to_affine(Affine<F>& out) const {
        if (is_inf()) return false;
        F zzz_inv = ZZZ.inverse(), z_inv = ZZ * zzz_inv;
        out = {X * z_inv.sqr(), Y * zzz_inv};
        return true;
    }
};

// Accumulators dst[k] += q[k] for a batch of k, all with one inversion: λ = Δy/Δx per
// addition, 3x²/2y where the points are equal, infinity where they are opposite. An
// accumulator is an affine point with a byte that says it is finite; every dst in one
// batch must differ (the caller keeps a second addition to the same dst for later).
template <class F>
class AffineBatch {
  public:
    explicit AffineBatch(size_t capacity) : capacity_(capacity) {
        ops_.reserve(capacity);
        prefix_.reserve(capacity);
        den_.reserve(capacity);
    }

    bool full() const { return ops_.size() >= capacity_; }

    // *dst += q (negated if neg); an infinite dst takes q without an inversion
    void add(Affine<F>* dst, uint8_t* finite, const Affine<F>& q, bool neg) {
        if (!*finite) {
            *dst = neg ? q.neg() : q;
            *finite = 1;
            return;
        }
        ops_.push_back({dst, finite, &q, neg, ADD});
    }

    void flush() {
        size_t n = ops_.size();
        if (n == 0) return;
        prefix_.resize(n);
        den_.resize(n);
        F acc = F::one();
        for (size_t k = 0; k < n; k++) {
            if (k + PREFETCH < n) {  // the points are scattered (tables, buckets): ask early
                const char* q = reinterpret_cast<const char*>(ops_[k + PREFETCH].q);
                const char* dst = reinterpret_cast<const char*>(ops_[k + PREFETCH].dst);
                __builtin_prefetch(q);
                __builtin_prefetch(q + sizeof(Affine<F>) - 1);
                __builtin_prefetch(dst);
                __builtin_prefetch(dst + sizeof(Affine<F>) - 1);
            }
            Op& op = ops_[k];
            prefix_[k] = acc;
            den_[k] = denominator(op);
            acc = acc * den_[k];
        }
        F inv = acc.inverse();
        for (size_t k = n; k-- > 0;) {
            F inv_k = inv * prefix_[k];
            inv = inv * den_[k];
            finish(ops_[k], inv_k);
        }
        ops_.clear();
    }

  private:
    static constexpr size_t PREFETCH = 8;

    enum Kind : uint8_t { ADD, DOUBLE, CANCEL };

    struct Op {
        Affine<F>* dst;
        uint8_t* finite;
        const Affine<F>* q;
        bool neg;
        Kind kind;
    };

    static F q_y(const Op& op) { return op.neg ? -op.q->y : op.q->y; }

    // the op's kind, and its denominator: Δx, 2y, or 1 where the sum is infinity
    static F denominator(Op& op) {
        if (op.dst->x != op.q->x) {
            op.kind = ADD;
            return op.q->x - op.dst->x;
        }
        bool same = op.dst->y == q_y(op) && !op.dst->y.is_zero();
        op.kind = same ? DOUBLE : CANCEL;
        return same ? op.dst->y.dbl() : F::one();
    }

    static void finish(const Op& op, const F& inv) {
        Affine<F>& d = *op.dst;
        F lambda;
        switch (op.kind) {
            case ADD: lambda = (q_y(op) - d.y) * inv; break;
            case DOUBLE: {
                F xx = d.x.sqr();
                lambda = (xx.dbl() + xx) * inv;
                break;
            }
            default:
                *op.finite = 0;
                return;
        }
        F x3 = lambda.sqr() - d.x - op.q->x;
        d.y = lambda * (d.x - x3) - d.y;
        d.x = x3;
    }

    std::vector<Op> ops_;
    std::vector<F> prefix_, den_;
    size_t capacity_;
};

typedef Affine<Fq> G1Affine;
typedef Affine<Fq2> G2Affine;

}  // namespace pq
