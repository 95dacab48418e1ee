// A block's witness tape (snark.gadgets.tape), run for one call of the block.
//
// The tape is the block's allocations as ops, grouped into steps of equal dependency
// depth (gpu.tape encodes it): every op of a step reads only registers written by earlier
// steps, so the threads of a CUDA block share a step's ops and synchronise once per step.
// Registers are the call's sources — its external slots, ONE, its own variables, its own
// inputs — as bits (one byte each) and, for those that hold numbers, Fr elements in
// Montgomery form; sums of bits (the SHA-256 additions) have registers of their own. A
// literal is a register and a negation flag (reg << 1 | negated).
//
// The same text runs on the host (gpu/hostlib runs the ops of each step one after another),
// so CI compares it with the numpy tape value for value without a GPU.
#pragma once

#include "field.cuh"

enum tape_kind : int32_t {
    TAPE_DATA_NUM, TAPE_DATA_BIT, TAPE_DATA_BITS, TAPE_NUMBIT, TAPE_XOR, TAPE_AND,
    TAPE_ANDNOT, TAPE_NOR, TAPE_CH, TAPE_MAJ, TAPE_SUM, TAPE_SUMBIT, TAPE_LIN, TAPE_SQUARE,
    TAPE_SQSUM, TAPE_MULSUM, TAPE_SELECT, TAPE_SCALE
};

// One op: its kind, the register (or sum) it writes, and up to four operands whose meaning
// the kind gives (gpu/tape.py writes them).
struct tape_op {
    int32_t kind, dest, a, b, c, d;
};

// Where a call's registers live while its tape runs (shared memory on the device).
struct tape_registers {
    uint8_t* bits;            // every register
    fr_t* nums;               // the registers num_index names
    uint64_t* sums;
    const int32_t* num_index; // register -> its number slot, or -1
    const int32_t* terms;     // sums: (literal, shift) pairs; combinations: (register, const)
    const fr_t* consts;       // Montgomery
    const uint64_t* data;     // the call's private data, standard-form limbs
};

FIELD_FN uint32_t tape_literal(const tape_registers& r, int32_t lit) {
    return r.bits[lit >> 1] ^ (uint32_t)(lit & 1);
}

FIELD_FN fr_t& tape_num(const tape_registers& r, int32_t reg) { return r.nums[r.num_index[reg]]; }

FIELD_FN void tape_apply(const tape_op& op, const tape_registers& r) {
    switch (op.kind) {
        case TAPE_DATA_NUM:
            tape_num(r, op.dest) = fr_t::load(r.data + 4 * (uint64_t)op.a).to_mont();
            break;
        case TAPE_DATA_BIT: r.bits[op.dest] = (uint8_t)(r.data[4 * (uint64_t)op.a] & 1); break;
        case TAPE_DATA_BITS:
            r.bits[op.dest] = (uint8_t)((r.data[4 * (uint64_t)op.a] >> op.b) & 1);
            break;
        case TAPE_NUMBIT: {
            const fr_t x = tape_num(r, op.a).from_mont();
            r.bits[op.dest] = (uint8_t)((x.v[op.b >> 5] >> (op.b & 31)) & 1);
            break;
        }
        case TAPE_XOR: r.bits[op.dest] = r.bits[op.a] ^ r.bits[op.b]; break;
        case TAPE_AND: r.bits[op.dest] = r.bits[op.a] & r.bits[op.b]; break;
        case TAPE_ANDNOT: r.bits[op.dest] = r.bits[op.a] & (1 - r.bits[op.b]); break;
        case TAPE_NOR: r.bits[op.dest] = (1 - r.bits[op.a]) & (1 - r.bits[op.b]); break;
        case TAPE_CH: {
            const uint32_t a = tape_literal(r, op.a), b = tape_literal(r, op.b),
                           c = tape_literal(r, op.c);
            r.bits[op.dest] = (uint8_t)((a & b) ^ ((1 - a) & c));
            break;
        }
        case TAPE_MAJ: {
            const uint32_t a = tape_literal(r, op.a), b = tape_literal(r, op.b),
                           c = tape_literal(r, op.c);
            r.bits[op.dest] = (uint8_t)((a & b) ^ (a & c) ^ (b & c));
            break;
        }
        case TAPE_SUM: {
            uint64_t acc = 0;
            for (int32_t t = op.a; t < op.a + op.b; t++)
                acc += (uint64_t)tape_literal(r, r.terms[2 * t]) << r.terms[2 * t + 1];
            r.sums[op.dest] = acc;
            break;
        }
        case TAPE_SUMBIT: r.bits[op.dest] = (uint8_t)((r.sums[op.a] >> op.b) & 1); break;
        case TAPE_LIN: {
            fr_t acc = fr_t::zero();
            for (int32_t t = op.a; t < op.a + op.b; t++) {
                const int32_t reg = r.terms[2 * t];
                const fr_t& coeff = r.consts[r.terms[2 * t + 1]];
                if (r.num_index[reg] >= 0) acc += coeff * r.nums[r.num_index[reg]];
                else if (r.bits[reg]) acc += coeff;
            }
            tape_num(r, op.dest) = acc;
            break;
        }
        case TAPE_SQUARE: tape_num(r, op.dest) = tape_num(r, op.a).sqr(); break;
        case TAPE_SQSUM: tape_num(r, op.dest) = (tape_num(r, op.a) + r.consts[op.b]).sqr(); break;
        case TAPE_MULSUM: {
            fr_t b = tape_num(r, op.b);
            if (op.c >= 0) b += r.consts[op.c];
            fr_t out = b * tape_num(r, op.a);
            if (op.d >= 0) out += r.consts[op.d];
            tape_num(r, op.dest) = out;
            break;
        }
        case TAPE_SELECT:
            tape_num(r, op.dest) = tape_literal(r, op.a) ? tape_num(r, op.b) : tape_num(r, op.c);
            break;
        case TAPE_SCALE:  // a number where a bit holds, else 0
            tape_num(r, op.dest) = tape_literal(r, op.a) ? tape_num(r, op.b) : fr_t::zero();
            break;
    }
}

// The shape of one tape and the rows one call reads and writes.
struct tape_program {
    const tape_op* ops;
    const int32_t* step_ends;  // ops[step_ends[s-1] .. step_ends[s]) form step s
    int32_t steps;
    const int32_t* terms;
    const uint64_t* consts;    // (k, 4) Montgomery limbs
    const int32_t* num_index;
    const uint8_t* slot_is_num;
    int32_t slots, registers, numbers, sums, aux, inputs, data_words;
};

struct tape_call {
    const int64_t* refs;       // the call's external slots: aux >= 0, input -(g + 1)
    const uint64_t* data;      // its private data (data_words Fr elements)
    int64_t aux_base, input_base;
};

// Loads a call's sources, one register per thread index (stride = thread count).
FIELD_FN void tape_load(const tape_program& p, const tape_call& call, const tape_registers& r,
                        const uint64_t* aux, const uint64_t* inputs, uint32_t first,
                        uint32_t stride) {
    for (int32_t s = first; s < p.slots; s += stride) {
        const int64_t ref = call.refs[s];
        const uint64_t* row = ref >= 0 ? aux + 4 * ref : inputs + 4 * (-ref - 1);
        if (p.slot_is_num[s]) tape_num(r, s) = fr_t::load(row).to_mont();
        r.bits[s] = (uint8_t)(row[0] & 1);
    }
    if (first == 0) {
        r.bits[p.slots] = 1;
        tape_num(r, p.slots) = fr_t::one();
    }
}

// Writes the call's variables and inputs to the witness rows, standard form.
FIELD_FN void tape_store(const tape_program& p, const tape_call& call, const tape_registers& r,
                         uint64_t* aux, uint64_t* inputs, uint32_t first, uint32_t stride) {
    for (int32_t j = first; j < p.aux + p.inputs; j += stride) {
        const int32_t reg = p.slots + 1 + j;
        uint64_t* row = j < p.aux ? aux + 4 * (call.aux_base + j)
                                  : inputs + 4 * (1 + call.input_base + (j - p.aux));
        if (p.num_index[reg] >= 0) {
            tape_num(r, reg).from_mont().store(row);
        } else {
            row[0] = r.bits[reg];
            row[1] = row[2] = row[3] = 0;
        }
    }
}

FIELD_FN tape_registers tape_bind(const tape_program& p, const tape_call& call, uint8_t* bits,
                                  fr_t* nums, uint64_t* sums) {
    return tape_registers{bits, nums, sums, p.num_index, p.terms,
                          reinterpret_cast<const fr_t*>(p.consts), call.data};
}
