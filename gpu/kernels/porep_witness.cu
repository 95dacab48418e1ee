// The porep partition witness kernel: one thread per chain of a challenge (porep_witness.cuh).
#include "porep_witness.cuh"

extern "C" __global__ void porep_witness(
        const uint64_t* schedule, uint32_t half, uint32_t partial, const uint64_t* commitments,
        const uint64_t* index, const uint64_t* leaves, const uint64_t* siblings,
        const int32_t* slots, uint32_t depth, uint32_t sboxes, uint32_t challenges,
        uint32_t stride, uint64_t aux_offset, uint64_t* witness, uint32_t* flags) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= 3 * challenges) return;
    porep_witness_args a{{schedule, half, partial}, commitments, index, leaves, siblings, slots,
                         {depth, sboxes}, challenges, stride, aux_offset, witness, flags};
    porep_witness_thread(t, a);
}
