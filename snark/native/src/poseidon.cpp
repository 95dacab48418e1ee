// The Poseidon permutation in the sparse-matrix schedule of snark/poseidon/fast.py
// (FastSchedule, any width t) over a batch of states, one state per iteration, the batch
// split among the threads.
//
// The schedule arrives as one array of standard-form constants, in this order:
//   head_constants (head × t), head_matrices (head × t × t), partial_constants (partial),
//   sparse rounds (partial × (1 + 2(t − 1)): a, w, v), tail_constants (tail × t), mds (t × t)
#include "common.hpp"

using namespace pq;

namespace {

struct Schedule {
    int t, alpha, head, partial, tail;
    std::vector<Fr> k;  // the constants, Montgomery form, in the order above
    const Fr *head_c, *head_m, *partial_c, *sparse, *tail_c, *mds;

    Schedule(const uint64_t* constants, int64_t count, int t_, int alpha_, int head_, int partial_,
             int tail_)
        : t(t_), alpha(alpha_), head(head_), partial(partial_), tail(tail_), k(count) {
        fr_load(constants, k.data(), count);
        head_c = k.data();
        head_m = head_c + head * t;
        partial_c = head_m + head * t * t;
        sparse = partial_c + partial;
        tail_c = sparse + partial * (2 * t - 1);
        mds = tail_c + tail * t;
    }

    static int64_t size(int t, int head, int partial, int tail) {
        return (int64_t)head * t + (int64_t)head * t * t + partial + (int64_t)partial * (2 * t - 1) +
               (int64_t)tail * t + (int64_t)t * t;
    }

    Fr sbox(const Fr& x) const { return x.pow((uint64_t)alpha); }

    // words ← M·sbox(words + c)
    void full_round(Fr* words, Fr* boxed, const Fr* c, const Fr* m) const {
        for (int i = 0; i < t; i++) boxed[i] = sbox(words[i] + c[i]);
        for (int r = 0; r < t; r++) {
            Fr sum = Fr::zero();
            for (int j = 0; j < t; j++) sum = sum + m[r * t + j] * boxed[j];
            words[r] = sum;
        }
    }

    void permute(Fr* words, Fr* boxed) const {
        for (int r = 0; r < head; r++) full_round(words, boxed, head_c + r * t, head_m + r * t * t);
        for (int r = 0; r < partial; r++) {
            const Fr* s = sparse + r * (2 * t - 1);  // a, w[t − 1], v[t − 1]
            Fr x = sbox(words[0] + partial_c[r]);
            Fr first = s[0] * x;
            for (int i = 1; i < t; i++) first = first + s[i] * words[i];
            for (int i = 1; i < t; i++) words[i] = words[i] + s[t - 1 + i] * x;
            words[0] = first;
        }
        for (int r = 0; r < tail; r++) full_round(words, boxed, tail_c + r * t, mds);
    }
};

}  // namespace

// out[i] = the permutation of states[i] (n states of t standard-form elements each)
PQ_API int pq_poseidon(const uint64_t* constants, int64_t count, int t, int alpha, int head,
                       int partial, int tail, const uint64_t* states, uint64_t* out, int64_t n) {
    if (t < 2 || alpha < 1 || head < 0 || partial < 0 || tail < 0) {
        return set_error("schedule: t %d, alpha %d, rounds %d/%d/%d", t, alpha, head, partial, tail);
    }
    if (count != Schedule::size(t, head, partial, tail)) {
        return set_error("schedule: %lld constants, expected %lld", (long long)count,
                         (long long)Schedule::size(t, head, partial, tail));
    }
    if (!check_fr(constants, count, "schedule constants") || !check_fr(states, n * t, "states")) {
        return 1;
    }
    Schedule schedule(constants, count, t, alpha, head, partial, tail);
    parallel_for(n, 256, [&](int64_t b, int64_t e) {
        std::vector<Fr> words(t), boxed(t);
        for (int64_t i = b; i < e; i++) {
            for (int j = 0; j < t; j++) words[j] = Fr::load_std(states + 4 * (i * t + j));
            schedule.permute(words.data(), boxed.data());
            for (int j = 0; j < t; j++) words[j].store_std(out + 4 * (i * t + j));
        }
    });
    return 0;
}
