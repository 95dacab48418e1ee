// Witness tapes on the device: one CUDA block per call of a block, its threads sharing
// each step's ops, the call's registers in shared memory (tape.cuh).
#include "tape.cuh"

extern "C" __global__ void tape_run(
        const tape_op* ops, const int32_t* step_ends, int32_t steps, const int32_t* terms,
        const uint64_t* consts, const int32_t* num_index, const uint8_t* slot_is_num,
        int32_t slots, int32_t registers, int32_t numbers, int32_t sums, int32_t aux_count,
        int32_t input_count, int32_t data_words, const int64_t* refs, const uint64_t* data,
        const int64_t* aux_base, const int64_t* input_base, uint64_t* aux, uint64_t* inputs) {
    extern __shared__ uint64_t shared[];
    fr_t* nums = reinterpret_cast<fr_t*>(shared);
    uint64_t* sum_regs = shared + 4 * (uint64_t)numbers;
    uint8_t* bits = reinterpret_cast<uint8_t*>(sum_regs + sums);
    const tape_program p{ops, step_ends, steps, terms, consts, num_index, slot_is_num,
                         slots, registers, numbers, sums, aux_count, input_count, data_words};
    const uint32_t call_id = blockIdx.x;
    const tape_call call{refs + (uint64_t)call_id * slots,
                         data + 4 * (uint64_t)call_id * data_words, aux_base[call_id],
                         input_base[call_id]};
    const tape_registers r = tape_bind(p, call, bits, nums, sum_regs);
    tape_load(p, call, r, aux, inputs, threadIdx.x, blockDim.x);
    __syncthreads();
    int32_t start = 0;
    for (int32_t s = 0; s < steps; s++) {
        const int32_t end = step_ends[s];
        for (int32_t i = start + threadIdx.x; i < end; i += blockDim.x) tape_apply(ops[i], r);
        __syncthreads();
        start = end;
    }
    tape_store(p, call, r, aux, inputs, threadIdx.x, blockDim.x);
}
