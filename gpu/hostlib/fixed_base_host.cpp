// Host build of the fixed-base products (fixed_base.cuh), for tests without a GPU; see
// field_host.cpp.
#include "fixed_base.cuh"

extern "C" {

// The fixed-base kernels' threads run one after another: `threads` threads of
// fixed_base_thread over n points (`scratch` 3 field elements a point).
void fixed_base_host(int group, int mont_out, const uint64_t* table, uint32_t c,
                     const uint64_t* scalars, uint32_t n, uint32_t per_thread, uint32_t threads,
                     uint64_t* scratch, uint64_t* out, uint8_t* inf) {
    for (uint32_t t = 0; t < threads; t++) {
        if (group == 1 && mont_out)
            fixed_base_thread<fq_t, true>(table, c, scalars, n, per_thread, t, threads, scratch, out, inf);
        else if (group == 1)
            fixed_base_thread<fq_t, false>(table, c, scalars, n, per_thread, t, threads, scratch, out, inf);
        else if (mont_out)
            fixed_base_thread<fq2_t, true>(table, c, scalars, n, per_thread, t, threads, scratch, out, inf);
        else
            fixed_base_thread<fq2_t, false>(table, c, scalars, n, per_thread, t, threads, scratch, out, inf);
    }
}

}
