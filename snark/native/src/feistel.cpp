// The SDR expander's Feistel permutation (snark/filecoin/graph.py states the facts): three
// rounds on two halves of `half_bits` bits, each round's function the first 8 bytes,
// big-endian, of BLAKE2b-512 of (right half u64 BE ‖ round key u64 BE); a value that lands
// at or above `elements` is encrypted again (cycle-walking). One value per iteration, the
// batch split among the threads: an 8 MiB sector's 2 M slots are 6 M hashes.
#include "common.hpp"

using namespace pq;

namespace {

constexpr uint64_t IV[8] = {0x6A09E667F3BCC908ULL, 0xBB67AE8584CAA73BULL, 0x3C6EF372FE94F82BULL,
                            0xA54FF53A5F1D36F1ULL, 0x510E527FADE682D1ULL, 0x9B05688C2B3E6C1FULL,
                            0x1F83D9ABFB41BD6BULL, 0x5BE0CD19137E2179ULL};
// Parameter block word 0: a 64-byte digest, no key, fanout 1, depth 1
constexpr uint64_t PARAMETERS = 0x01010040ULL;
constexpr uint8_t SIGMA[10][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
};

inline uint64_t rotr(uint64_t x, int r) { return (x >> r) | (x << (64 - r)); }

inline void mix(uint64_t* v, int a, int b, int c, int d, uint64_t x, uint64_t y) {
    v[a] += v[b] + x;
    v[d] = rotr(v[d] ^ v[a], 32);
    v[c] += v[d];
    v[b] = rotr(v[b] ^ v[c], 24);
    v[a] += v[b] + y;
    v[d] = rotr(v[d] ^ v[a], 16);
    v[c] += v[d];
    v[b] = rotr(v[b] ^ v[c], 63);
}

// The round function: BLAKE2b-512 of one 16-byte block, its first 8 bytes read big-endian
uint64_t blake2b_16(uint64_t first, uint64_t second) {
    uint64_t m[16] = {__builtin_bswap64(first), __builtin_bswap64(second)};
    uint64_t v[16];
    for (int i = 0; i < 8; i++) v[i] = v[i + 8] = IV[i];
    v[0] ^= PARAMETERS;
    v[12] ^= 16;  // bytes hashed
    v[14] = ~v[14];  // the last block
    for (int r = 0; r < 12; r++) {
        const uint8_t* s = SIGMA[r % 10];
        mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    return __builtin_bswap64(IV[0] ^ PARAMETERS ^ v[0] ^ v[8]);
}

}  // namespace

// out[i] = π(values[i]) for the permutation of [0, elements) keyed by keys[0..3], on halves
// of half_bits bits (4^half_bits ≥ elements); every value must be below elements
PQ_API int pq_feistel_permute(const uint64_t* values, int64_t n, uint64_t elements,
                              const uint64_t* keys, int half_bits, uint64_t* out) {
    if (half_bits < 1 || half_bits > 32 || (half_bits < 32 && elements > (1ULL << (2 * half_bits)))) {
        return set_error("half_bits: %d does not hold %llu elements", half_bits,
                         (unsigned long long)elements);
    }
    for (int64_t i = 0; i < n; i++) {
        if (values[i] >= elements) {
            return set_error("values[%lld] = %llu is not below the %llu elements", (long long)i,
                             (unsigned long long)values[i], (unsigned long long)elements);
        }
    }
    const uint64_t mask = half_bits == 32 ? 0xFFFFFFFFULL : (1ULL << half_bits) - 1;
    parallel_for(n, 1 << 12, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; i++) {
            uint64_t x = values[i];
            do {
                uint64_t left = x >> half_bits, right = x & mask;
                for (int round = 0; round < 3; round++) {
                    uint64_t next = left ^ (blake2b_16(right, keys[round]) & mask);
                    left = right;
                    right = next;
                }
                x = (left << half_bits) | right;
            } while (x >= elements);
            out[i] = x;
        }
    });
    return 0;
}
