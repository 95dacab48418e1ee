// The witness of a porep partition, computed where the prover needs it.
//
// A partition's aux vector is, per challenge: the index bits, both leaves, both paths'
// siblings and swap values, and the S-box powers (x^2, x^4, x^5) of every Poseidon hash
// the circuit checks: the key H(replica_id, index) and one hash per Merkle level of each
// path. One thread runs one chain of one challenge (chain 0 the key, chains 1 and 2 the
// data and replica paths, level by level) and scatters each value to its aux slot through
// the per-challenge slot table that `snark.porep.witness` learns from the reference
// circuit. The Poseidon schedule is the fast one of `snark.poseidon.fast`, read from a
// table the driver builds from it, so no constant is written down twice.
//
// The same text runs on the host (gpu/hostlib loops over the threads), so CI compares it
// with the CPU witness value for value without a GPU.
#pragma once

#include "field.cuh"

// Failure bits per challenge, the order of `snark.porep.witness.CHECKS`.
#define WITNESS_BAD_REPLICA 1u
#define WITNESS_BAD_DATA_ROOT 2u
#define WITNESS_BAD_REPLICA_ROOT 4u

// The Poseidon schedule table (t = 3, Montgomery Fr elements), in this order:
//   head constants [half][3], head matrices [half][3][3], partial constants [partial],
//   sparse rounds [partial][5] = (a, w1, w2, v1, v2), tail constants [half][3], mds [3][3]
struct poseidon_schedule {
    const uint64_t* table;
    uint32_t half, partial;

    FIELD_FN fr_t at(uint32_t i) const { return fr_t::load(table + 4 * (uint64_t)i); }
    FIELD_FN uint32_t head_matrices() const { return 3 * half; }
    FIELD_FN uint32_t partial_constants() const { return head_matrices() + 9 * half; }
    FIELD_FN uint32_t sparse_rounds() const { return partial_constants() + partial; }
    FIELD_FN uint32_t tail_constants() const { return sparse_rounds() + 5 * partial; }
    FIELD_FN uint32_t mds() const { return tail_constants() + 3 * half; }
};

// Where a hash's S-box powers go: triple k lands at witness rows slots[3k .. 3k+2].
struct trace_sink {
    uint64_t* witness;
    uint64_t block;        // first aux row of this challenge
    const int32_t* slots;  // this hash's (sboxes, 3) slot table

    FIELD_FN void put(uint64_t slot, const fr_t& x) const {
        x.from_mont().store(witness + 4 * (block + slot));
    }
};

FIELD_FN fr_t sbox_recorded(const fr_t& x, const trace_sink& sink, uint32_t& k) {
    fr_t x2 = x.sqr(), x4 = x2.sqr(), x5 = x4 * x;
    sink.put(sink.slots[3 * k], x2);
    sink.put(sink.slots[3 * k + 1], x4);
    sink.put(sink.slots[3 * k + 2], x5);
    k++;
    return x5;
}

// One full round: S-box on every element, then the matrix starting at table row m.
// The capacity element of the first round has a constant input (0 + c): the gadget
// allocates nothing for it, so neither is it recorded here.
FIELD_FN void full_round(fr_t w[3], const poseidon_schedule& s, uint32_t c, uint32_t m,
                         bool first, const trace_sink& sink, uint32_t& k) {
    fr_t boxed[3];
    for (int i = 0; i < 3; i++) {
        fr_t x = w[i] + s.at(c + i);
        if (first && i == 0) {
            fr_t x2 = x.sqr();
            boxed[i] = x2.sqr() * x;
        } else {
            boxed[i] = sbox_recorded(x, sink, k);
        }
    }
    for (int r = 0; r < 3; r++)
        w[r] = s.at(m + 3 * r) * boxed[0] + s.at(m + 3 * r + 1) * boxed[1] +
               s.at(m + 3 * r + 2) * boxed[2];
}

// H(x, y) of the arity-2 Poseidon, recording the S-box powers into `sink`.
FIELD_FN fr_t poseidon_hash2_traced(const poseidon_schedule& s, const fr_t& x, const fr_t& y,
                                    const trace_sink& sink) {
    fr_t w[3] = {fr_t::zero(), x, y};
    uint32_t k = 0;
    for (uint32_t r = 0; r < s.half; r++)
        full_round(w, s, 3 * r, s.head_matrices() + 9 * r, r == 0, sink, k);
    for (uint32_t r = 0; r < s.partial; r++) {
        fr_t b = sbox_recorded(w[0] + s.at(s.partial_constants() + r), sink, k);
        uint32_t sr = s.sparse_rounds() + 5 * r;
        w[0] = s.at(sr) * b + s.at(sr + 1) * w[1] + s.at(sr + 2) * w[2];
        w[1] = w[1] + s.at(sr + 3) * b;
        w[2] = w[2] + s.at(sr + 4) * b;
    }
    for (uint32_t r = 0; r < s.half; r++)
        full_round(w, s, s.tail_constants() + 3 * r, s.mds(), false, sink, k);
    return w[0];
}

// Offsets in one challenge's slot table (depth d, S-boxes per hash n):
//   bits [d], data, replica, siblings [2][d], swaps [2][d], key [n][3], hashes [2][d][n][3]
struct challenge_slots {
    uint32_t depth, sboxes;

    FIELD_FN uint32_t bits() const { return 0; }
    FIELD_FN uint32_t data() const { return depth; }
    FIELD_FN uint32_t replica() const { return depth + 1; }
    FIELD_FN uint32_t sibling(uint32_t path, uint32_t level) const {
        return depth + 2 + path * depth + level;
    }
    FIELD_FN uint32_t swap(uint32_t path, uint32_t level) const {
        return 3 * depth + 2 + path * depth + level;
    }
    FIELD_FN uint32_t key() const { return 5 * depth + 2; }
    FIELD_FN uint32_t hash(uint32_t path, uint32_t level) const {
        return key() + 3 * sboxes * (1 + path * depth + level);
    }
    FIELD_FN uint32_t size() const { return hash(2, 0); }
};

struct porep_witness_args {
    poseidon_schedule schedule;
    const uint64_t* commitments;  // (3, 4) standard: replica_id, comm_d, comm_r
    const uint64_t* index;        // (challenges,)
    const uint64_t* leaves;       // (2, challenges, 4) standard: data, replica
    const uint64_t* siblings;     // (2, depth, challenges, 4) standard
    const int32_t* slots;         // challenge_slots::size() entries
    challenge_slots layout;
    uint32_t challenges;
    uint32_t stride;              // aux rows per challenge
    uint64_t aux_offset;          // witness row of aux entry 0 (the number of inputs)
    uint64_t* witness;            // (variables, 4) standard, written
    uint32_t* flags;              // (challenges,) WITNESS_BAD_* bits, or-ed in
};

FIELD_FN fr_t load_standard(const uint64_t* p, uint64_t row) {
    return fr_t::load(p + 4 * row).to_mont();
}

FIELD_FN fr_t small_field(uint64_t v) {
    uint64_t limbs[4] = {v, 0, 0, 0};
    return fr_t::load(limbs).to_mont();
}

FIELD_FN void raise_flag(uint32_t* flags, uint32_t j, uint32_t bit) {
#if defined(__CUDA_ARCH__)
    atomicOr(flags + j, bit);
#else
    flags[j] |= bit;
#endif
}

// Thread t: challenge t / 3, chain t % 3.
FIELD_FN void porep_witness_thread(uint32_t t, const porep_witness_args& a) {
    const uint32_t j = t / 3, chain = t % 3, n = a.challenges, depth = a.layout.depth;
    const challenge_slots& at = a.layout;
    const uint64_t index = a.index[j];
    trace_sink sink{a.witness, a.aux_offset + (uint64_t)a.stride * j, nullptr};
    if (chain == 0) {
        for (uint32_t b = 0; b < depth; b++)
            sink.put(a.slots[at.bits() + b], small_field((index >> b) & 1));
        fr_t data = load_standard(a.leaves, j), replica = load_standard(a.leaves, n + j);
        sink.put(a.slots[at.data()], data);
        sink.put(a.slots[at.replica()], replica);
        sink.slots = a.slots + at.key();
        fr_t key = poseidon_hash2_traced(a.schedule, load_standard(a.commitments, 0),
                                         small_field(index), sink);
        if (data + key != replica) raise_flag(a.flags, j, WITNESS_BAD_REPLICA);
        return;
    }
    const uint32_t path = chain - 1;
    fr_t cur = load_standard(a.leaves, (uint64_t)path * n + j);
    for (uint32_t level = 0; level < depth; level++) {
        fr_t sibling = load_standard(a.siblings, ((uint64_t)path * depth + level) * n + j);
        fr_t swap = (index >> level) & 1 ? sibling - cur : fr_t::zero();
        sink.put(a.slots[at.sibling(path, level)], sibling);
        sink.put(a.slots[at.swap(path, level)], swap);
        sink.slots = a.slots + at.hash(path, level);
        cur = poseidon_hash2_traced(a.schedule, cur + swap, sibling - swap, sink);
    }
    if (cur != load_standard(a.commitments, 1 + path))
        raise_flag(a.flags, j, path == 0 ? WITNESS_BAD_DATA_ROOT : WITNESS_BAD_REPLICA_ROOT);
}
