// Host build of the witness kernels (porep_witness.cuh, tape.cuh) and of the sparse
// products A·w, B·w, C·w (spmv.cuh), for tests without a GPU; see field_host.cpp.
#include <vector>

#include "porep_witness.cuh"
#include "spmv.cuh"
#include "tape.cuh"

extern "C" {

// The porep witness kernel's threads, one after another (arguments as in porep_witness.cu).
void porep_witness_host(const uint64_t* schedule, uint32_t half, uint32_t partial,
                        const uint64_t* commitments, const uint64_t* index,
                        const uint64_t* leaves, const uint64_t* siblings, const int32_t* slots,
                        uint32_t depth, uint32_t sboxes, uint32_t challenges, uint32_t stride,
                        uint64_t aux_offset, uint64_t* witness, uint32_t* flags) {
    porep_witness_args a{{schedule, half, partial}, commitments, index, leaves, siblings, slots,
                         {depth, sboxes}, challenges, stride, aux_offset, witness, flags};
    for (uint32_t t = 0; t < 3 * challenges; t++) porep_witness_thread(t, a);
}

// The tape kernel's calls one after another, each step's ops in order (tape.cu's
// arguments, the call count instead of the grid).
void tape_run_host(const tape_op* ops, const int32_t* step_ends, int32_t steps,
                   const int32_t* terms, const uint64_t* consts, const int32_t* num_index,
                   const uint8_t* slot_is_num, int32_t slots, int32_t registers, int32_t numbers,
                   int32_t sums, int32_t aux_count, int32_t input_count, int32_t data_words,
                   const int64_t* refs, const uint64_t* data, const int64_t* aux_base,
                   const int64_t* input_base, int64_t calls, uint64_t* aux, uint64_t* inputs) {
    const tape_program p{ops, step_ends, steps, terms, consts, num_index, slot_is_num,
                         slots, registers, numbers, sums, aux_count, input_count, data_words};
    std::vector<uint8_t> bits(registers);
    std::vector<fr_t> nums(numbers > 0 ? numbers : 1);
    std::vector<uint64_t> sum_regs(sums > 0 ? sums : 1);
    for (int64_t c = 0; c < calls; c++) {
        const tape_call call{refs + c * slots, data + 4 * c * data_words, aux_base[c],
                             input_base[c]};
        const tape_registers r = tape_bind(p, call, bits.data(), nums.data(), sum_regs.data());
        tape_load(p, call, r, aux, inputs, 0, 1);
        for (int32_t i = 0; i < (steps ? step_ends[steps - 1] : 0); i++) tape_apply(ops[i], r);
        tape_store(p, call, r, aux, inputs, 0, 1);
    }
}

// The two spmv launches one after the other: every chunk, then every carry (spmv.cu's
// arguments; `out` zero-filled by the caller).
void spmv_host(const long long* indptr, const uint32_t* indices, const uint32_t* codes,
               const uint64_t* table, long long nnz, const uint32_t* chunk_rows,
               const uint64_t* witness, uint64_t* out, uint32_t* carry_rows,
               uint64_t* carry_values, uint64_t chunks) {
    const coded_csr m = {indptr, indices, codes, table, nnz};
    for (uint64_t j = 0; j < chunks; j++)
        spmv_chunk(j, m, chunk_rows[j], witness, out, carry_rows, carry_values);
    for (uint64_t i = 0; i < 2 * chunks; i++) spmv_fixup(i, chunks, carry_rows, carry_values, out);
}

}
