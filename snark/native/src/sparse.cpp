// Sparse matrix × vector over Fr, for CSR matrices (snark.r1cs.SparseMatrix: a coefficient
// per non-zero) and coded ones (snark.r1cs.CodedMatrix: a code per non-zero into a small
// table of coefficients), and the transposed product (setup's QAP at τ).
//
// Everything stays in standard form: the Montgomery product of two standard values is
// c·x/R, so a row sums those and multiplies the sum by R² once (c·x/R·R²/R = c·x).
// Coefficients 1 and −1 (most of a real circuit's) are added or subtracted outright.
#include <mutex>

#include "common.hpp"

using namespace pq;

namespace {

// What the two layouts share: the coefficient of non-zero k
struct Coefficients {
    const uint64_t* values;  // (rows of the table or nnz, 4) standard form
    const void* codes;       // null: values has a row per non-zero
    int code_width;          // 2 or 4 bytes

    int64_t row_of(int64_t k) const {
        if (!codes) return k;
        return code_width == 2 ? ((const uint16_t*)codes)[k] : ((const uint32_t*)codes)[k];
    }
};

struct Indices {
    const void* values;
    int width;  // 4 (uint32) or 8 (int64) bytes
    int64_t operator[](int64_t k) const {
        return width == 4 ? ((const uint32_t*)values)[k] : ((const int64_t*)values)[k];
    }
};

// A row's (or column's) sum: 1 and −1 terms added outright, the others as c·x/R
struct Sum {
    Fr plain = Fr::zero(), scaled = Fr::zero();

    void add(const uint64_t* c, const Fr& x) {
        bool small = (c[1] | c[2]) == 0 && c[3] == 0;
        if (small && c[0] == 1) {
            plain = plain + x;
        } else if (c[0] == FrParams::P[0] - 1 && c[1] == FrParams::P[1] &&
                   c[2] == FrParams::P[2] && c[3] == FrParams::P[3]) {
            plain = plain - x;
        } else {
            scaled = scaled + Fr::raw(c) * x;
        }
    }
    Fr value() const { return plain + scaled * Fr::raw(FrParams::R2); }
};

// The CSR structure is consistent and every index and code in range; else set_error
bool check_structure(const int64_t* indptr, int64_t rows, int64_t nnz, Indices indices,
                     int64_t columns, Coefficients coefficients, int64_t table_rows) {
    if (indptr[0] != 0 || indptr[rows] != nnz) {
        set_error("indptr: starts at %lld and ends at %lld, expected 0 and nnz = %lld",
                  (long long)indptr[0], (long long)indptr[rows], (long long)nnz);
        return false;
    }
    std::vector<int64_t> bad(4, -1);  // decreasing indptr, column, code, coefficient
    std::mutex lock;
    parallel_for(nnz > rows ? nnz : rows, 1 << 16, [&](int64_t b, int64_t e) {
        int64_t local[4] = {-1, -1, -1, -1};
        for (int64_t i = b; i < e; i++) {
            if (i < rows && indptr[i + 1] < indptr[i] && local[0] < 0) local[0] = i;
            if (i >= nnz) continue;
            if ((uint64_t)indices[i] >= (uint64_t)columns && local[1] < 0) local[1] = i;
            if (coefficients.codes && coefficients.row_of(i) >= table_rows && local[2] < 0)
                local[2] = i;
            if (!coefficients.codes && !Fr::canonical(coefficients.values + 4 * i) && local[3] < 0)
                local[3] = i;
        }
        std::lock_guard<std::mutex> guard(lock);
        for (int k = 0; k < 4; k++) {
            if (local[k] >= 0 && (bad[k] < 0 || local[k] < bad[k])) bad[k] = local[k];
        }
    });
    if (bad[0] >= 0) {
        set_error("indptr decreases at row %lld", (long long)bad[0]);
    } else if (bad[1] >= 0) {
        set_error("indices[%lld] = %lld is not below the %lld columns", (long long)bad[1],
                  (long long)indices[bad[1]], (long long)columns);
    } else if (bad[2] >= 0) {
        set_error("codes[%lld] = %lld is not below the %lld table rows", (long long)bad[2],
                  (long long)coefficients.row_of(bad[2]), (long long)table_rows);
    } else if (bad[3] >= 0) {
        set_error("data[%lld] is not a canonical Fr element (>= r)", (long long)bad[3]);
    } else if (coefficients.codes && first_non_canonical<Fr>(coefficients.values, table_rows) >= 0) {
        set_error("table[%lld] is not a canonical Fr element (>= r)",
                  (long long)first_non_canonical<Fr>(coefficients.values, table_rows));
    } else {
        return true;
    }
    return false;
}

}  // namespace

// out = M·x (rows) or Mᵀ·x (columns, `transposed`); x and out standard-form limbs.
// indices: int64 or uint32 (index_width 8 or 4); codes: null (values has nnz rows) or
// uint16/uint32 (code_width 2 or 4) into `values` of table_rows rows.
PQ_API int pq_matvec(const int64_t* indptr, int64_t rows, const void* indices, int index_width,
                     int64_t nnz, const void* codes, int code_width, const uint64_t* values,
                     int64_t table_rows, int64_t columns, const uint64_t* x, uint64_t* out,
                     int transposed) {
    if (index_width != 4 && index_width != 8) return set_error("indices: width %d", index_width);
    if (codes && code_width != 2 && code_width != 4) return set_error("codes: width %d", code_width);
    Indices idx{indices, index_width};
    Coefficients coef{values, codes, code_width};
    if (!check_structure(indptr, rows, nnz, idx, columns, coef, table_rows)) return 1;
    if (!check_fr(x, transposed ? rows : columns, "vector")) return 1;
    if (!transposed) {
        parallel_tasks((rows + 4095) / 4096, [&](int64_t task, int) {
            int64_t end = std::min(rows, (task + 1) * 4096);
            for (int64_t r = task * 4096; r < end; r++) {
                Sum sum;
                for (int64_t k = indptr[r]; k < indptr[r + 1]; k++) {
                    sum.add(values + 4 * coef.row_of(k), Fr::raw(x + 4 * idx[k]));
                }
                sum.value().store_raw(out + 4 * r);
            }
        });
        return 0;
    }
    // Transposed: each task owns a range of columns and scans every row for their terms, so
    // no two tasks add to one column and nothing is sorted (a serial counting sort of the
    // non-zeros by column was most of a 32 GiB key's QAP at τ)
    int64_t tasks = std::min<int64_t>(thread_count(), std::max<int64_t>(columns, 1));
    int64_t width = (columns + tasks - 1) / tasks;
    parallel_tasks(tasks, [&](int64_t task, int) {
        int64_t lo = std::min(columns, task * width), hi = std::min(columns, lo + width);
        std::vector<Sum> sums(hi - lo);
        for (int64_t r = 0; r < rows; r++) {
            Fr x_r = Fr::raw(x + 4 * r);
            for (int64_t k = indptr[r]; k < indptr[r + 1]; k++) {
                int64_t j = idx[k];
                if (j >= lo && j < hi) sums[j - lo].add(values + 4 * coef.row_of(k), x_r);
            }
        }
        for (int64_t j = lo; j < hi; j++) sums[j - lo].value().store_raw(out + 4 * j);
    });
    return 0;
}
