// a = A·w for one coded CSR matrix, in chunks of equal work (kernels: spmv.cu; host build:
// gpu/hostlib). One thread per row left most of a warp idle on a Filecoin partition's A
// (rows of 1–3 terms beside packing rows of up to ~900: 8% of the lanes busy), so each
// thread takes SPMV_CHUNK consecutive non-zeros instead, whatever rows they fall in:
//   spmv_chunk   sums each row segment of its chunk; a row that starts and ends inside the
//                chunk is written out, a segment of a row that crosses the chunk's edge
//                becomes a carry (at most two a chunk: the first and the last segment)
//   spmv_fixup   one thread per carry that begins a row: adds the row's carries from the
//                chunks after it (rows cross at most a few dozen chunks) and writes the row
// Rows without terms keep the zeros `out` starts with. Coefficients are codes into a table
// of d·R² and the witness is standard form, so each product d·R²·w·R⁻¹ is the Montgomery
// form of d·w (spmv.cu says why).
#pragma once
#include "fr_vec.cuh"

#define SPMV_CHUNK 32
#define SPMV_NO_ROW 0xFFFFFFFFu

struct coded_csr {
    const long long* indptr;   // rows + 1
    const uint32_t* indices;   // nnz
    const uint32_t* codes;     // nnz, into table
    const uint64_t* table;     // (k, 4), d·R²
    long long nnz;
};

// chunk_row: the row that holds the chunk's first non-zero (the last r with
// indptr[r] <= j·SPMV_CHUNK). carry_rows / carry_values: slots 2j and 2j + 1.
static FIELD_FN void spmv_chunk(uint64_t j, const coded_csr& m, uint32_t chunk_row,
                                const uint64_t* witness, uint64_t* out, uint32_t* carry_rows,
                                uint64_t* carry_values) {
    const long long start = (long long)j * SPMV_CHUNK;
    const long long end = start + SPMV_CHUNK < m.nnz ? start + SPMV_CHUNK : m.nnz;
    carry_rows[2 * j] = SPMV_NO_ROW;
    carry_rows[2 * j + 1] = SPMV_NO_ROW;
    uint32_t row = chunk_row, slot = 0;
    long long k = start;
    while (k < end) {
        const long long row_start = m.indptr[row], row_end = m.indptr[row + 1];
        const long long stop = row_end < end ? row_end : end;
        fr_t acc = fr_t::zero();
        for (; k < stop; k++) acc += fr_load_ro(m.table, m.codes[k]) * fr_load_ro(witness, m.indices[k]);
        if (row_start >= start && row_end <= end) {
            fr_store(out, row, acc);
        } else {
            carry_rows[2 * j + slot] = row;
            fr_store(carry_values, 2 * j + slot, acc);
            slot = 1;
        }
        do row++; while (k < end && m.indptr[row + 1] == k);  // past rows without terms
    }
}

// Carry i begins its row unless it is the first segment of a chunk whose row the chunk
// before also carries; slot 1 is always a row that began in its own chunk.
static FIELD_FN void spmv_fixup(uint64_t i, uint64_t chunks, const uint32_t* carry_rows,
                                const uint64_t* carry_values, uint64_t* out) {
    const uint32_t row = carry_rows[i];
    if (row == SPMV_NO_ROW) return;
    const uint64_t j = i / 2;
    if (i % 2 == 0 && j > 0) {
        const uint32_t before = carry_rows[2 * j - 1] != SPMV_NO_ROW ? carry_rows[2 * j - 1]
                                                                    : carry_rows[2 * j - 2];
        if (before == row) return;
    }
    fr_t acc = fr_load(carry_values, i);
    for (uint64_t c = j + 1; c < chunks && carry_rows[2 * c] == row; c++)
        acc += fr_load(carry_values, 2 * c);
    fr_store(out, row, acc);
}
