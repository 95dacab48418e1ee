"""A random but satisfied R1CS shaped like a Filecoin PoRep partition, made with numpy.

Shape (the 2 KiB partition at ``log_domain`` 22): about 0.645·2^log_domain constraints,
as many aux variables, 90% of them bits, every aux variable but the last 1% in A, a
quarter of them in B. Built in blocks of ``lag`` variables so each block is one vector
step: variable k is defined by the row of k from variables of earlier blocks only:

* a bit:   (2·a)·b = a + b − k     (k = a XOR b; a = k − lag, b a B-pool bit)
* a field: (a + a')·b = k          (a = k − lag, a' and b earlier field elements)

Variable types repeat with period ``lag``, so k − lag has k's type; ``lag`` is 1% of the
variables, which leaves the last 1% out of A. The B operands come from a pool of a quarter
of the variables. The matrices are ``CodedMatrix`` (coefficients 1, 2, −1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark import native
from snark.fields import FR_MODULUS, fr_to_limbs, limbs_to_ints, random_fr
from snark.r1cs import R1CS, CodedMatrix

CONSTRAINTS_PER_DOMAIN = 0.645  # 2.7 M of 2^22
BIT_SHARE, B_SHARE, LAG_SHARE = 0.9, 0.32, 0.01
SEED_SHARE = 0.002  # free aux variables at the start (random values, no defining row)
NUM_INPUTS = 16     # ONE and 15 public inputs
_ONE, _TWO, _MINUS_ONE = 0, 1, 2  # codes into the coefficient table


@dataclass
class PartitionShape:
    r1cs: R1CS
    witness: np.ndarray       # (num_variables, 4)
    public_inputs: list[int]  # without ONE


def synthetic_partition(log_domain: int, rng: np.random.Generator) -> PartitionShape:
    total_aux = int(CONSTRAINTS_PER_DOMAIN * (1 << log_domain)) - NUM_INPUTS
    lag = max(64, int(LAG_SHARE * total_aux))
    seeds = max(2 * lag, int(SEED_SHARE * total_aux))
    total_aux = seeds + (total_aux - seeds) // lag * lag  # whole blocks after the seeds
    first = NUM_INPUTS  # column of aux 0
    columns = first + total_aux
    # types repeat with period lag: k − lag always has k's type
    is_bit = np.tile(rng.random(lag) < BIT_SHARE, total_aux // lag + 1)[:total_aux]
    in_pool = rng.random(total_aux) < B_SHARE
    values = np.zeros((columns, 4), dtype=np.uint64)
    values[0, 0] = 1
    values[1:first] = random_fr(first - 1, rng)
    values[first:first + seeds] = random_fr(seeds, rng)
    seed_bits = np.flatnonzero(is_bit[:seeds])
    values[first + seed_bits] = 0
    values[first + seed_bits, 0] = rng.integers(0, 2, seed_bits.size, dtype=np.uint64)
    rows_a, rows_b, rows_c = [], [], []  # (row, column, code) triples per block
    row = 0
    for start in range(seeds, total_aux, lag):
        k = np.arange(start, start + lag)
        a = k - lag
        bits, fields = k[is_bit[k]], k[~is_bit[k]]
        b = np.empty(lag, dtype=np.int64)
        for mask, chosen in ((is_bit, bits), (~is_bit, fields)):
            pool = np.flatnonzero(in_pool[:start] & mask[:start])
            b[chosen - start] = rng.choice(pool, chosen.size)
        a2 = rng.choice(np.flatnonzero(~is_bit[:start]), fields.size)
        rows = row + np.arange(lag)
        col = first + np.stack([k, a, b]).T  # per row: k, a, b
        ab, bb = col[bits - start], col[fields - start]
        r_bits, r_fields = rows[bits - start], rows[fields - start]
        # bits: k = a + b − 2ab; A (a: 2), B (b: 1), C (a: 1, b: 1, k: −1)
        av, bv = values[ab[:, 1], 0], values[ab[:, 2], 0]
        values[ab[:, 0], 0] = av ^ bv
        rows_a.append(np.stack([r_bits, ab[:, 1], np.full(bits.size, _TWO)]))
        rows_b.append(np.stack([r_bits, ab[:, 2], np.full(bits.size, _ONE)]))
        rows_c += [np.stack([r_bits, ab[:, 1], np.full(bits.size, _ONE)]),
                   np.stack([r_bits, ab[:, 2], np.full(bits.size, _ONE)]),
                   np.stack([r_bits, ab[:, 0], np.full(bits.size, _MINUS_ONE)])]
        # fields: k = (a + a')·b; A (a: 1, a': 1), B (b: 1), C (k: 1)
        a2_col = first + a2
        values[bb[:, 0]] = native.fr_mul(native.fr_add(values[bb[:, 1]], values[a2_col]),
                                         values[bb[:, 2]])
        ones = np.full(fields.size, _ONE)
        rows_a += [np.stack([r_fields, bb[:, 1], ones]), np.stack([r_fields, a2_col, ones])]
        rows_b.append(np.stack([r_fields, bb[:, 2], ones]))
        rows_c.append(np.stack([r_fields, bb[:, 0], ones]))
        row += lag
    # the input constraints x_i·0 = 0 after the circuit's rows
    inputs = np.arange(NUM_INPUTS)
    rows_a.append(np.stack([row + inputs, inputs, np.full(NUM_INPUTS, _ONE)]))
    rows = row + NUM_INPUTS
    table = fr_to_limbs([1, 2, FR_MODULUS - 1])
    r1cs = R1CS(NUM_INPUTS, total_aux, *(_coded(np.concatenate(t, axis=1), rows, table)
                                         for t in (rows_a, rows_b, rows_c)))
    return PartitionShape(r1cs, values, limbs_to_ints(values[1:NUM_INPUTS]))


def _coded(triples: np.ndarray, rows: int, table: np.ndarray) -> CodedMatrix:
    """CSR from (row, column, code) triples, rows in order."""
    order = np.argsort(triples[0], kind="stable")
    row, col, code = triples[:, order]
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(row, minlength=rows), out=indptr[1:])
    return CodedMatrix(indptr, col.astype(np.uint32), code.astype(np.uint16), table)
