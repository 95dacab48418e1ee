"""A program's R1CS, stamped from its templates, and its fingerprint, counted from them.

Columns follow bellperson: public inputs first (ONE, then ``alloc_input`` order), then the
auxiliary variables in allocation order. Rows are the calls' rows in program order, then
one row ``x_i · 0 = 0`` per public input (bellperson appends them; they make the input
polynomials independent). Coefficients are codes into the book's coefficient table, so a
130 M-row matrix costs 4 + 4 bytes a term, not 4 + 32.

The fingerprint (constraints, inputs, auxiliaries, non-zeros, densities) needs no matrix:
it is summed over templates and their calls, with one bool array per density, which is how
a 32 GiB partition's figures are counted within this machine's memory.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from snark import native
from snark.fields import fr_to_limbs
from snark.gadgets.program import Calls, Program
from snark.gadgets.system import EXTERNAL, ONE
from snark.r1cs import R1CS, CodedMatrix

#: Call-by-term entries handled at once while stamping (bounds the temporaries).
CHUNK_ENTRIES = 1 << 24


@dataclass(frozen=True)
class Fingerprint:
    constraints: int          # with the input constraints
    input_constraints: int
    inputs: int               # with ONE
    aux: int
    nnz_a: int
    nnz_b: int
    nnz_c: int
    a_aux_density: int
    b_input_density: int
    b_aux_density: int
    domain_log2: int

    def as_dict(self) -> dict:
        return asdict(self)


def _columns(template, keys: np.ndarray, members: np.ndarray, calls: Calls,
             ext: np.ndarray | None, num_inputs: int) -> np.ndarray:
    """Global columns of ``keys`` for every call in ``members``: shape (calls, terms)."""
    out = np.zeros((len(members), len(keys)), dtype=np.int64)
    local = (keys >= 0) & (keys < EXTERNAL)
    out[:, local] = num_inputs + calls.aux_base[members][:, None] + keys[local][None, :]
    inputs = keys < ONE
    out[:, inputs] = 1 + calls.input_base[members][:, None] + (-keys[inputs] - 2)[None, :]
    outside = keys >= EXTERNAL
    if outside.any():
        refs = ext[:, keys[outside] - EXTERNAL]
        out[:, outside] = np.where(refs >= 0, num_inputs + refs, -refs - 1)
    return out  # ONE stays column 0


def _groups(program: Program, calls: Calls, chosen: slice = slice(None)):
    """(template, its calls, their external references) for every template used by the
    calls in ``chosen``."""
    ids = np.arange(len(calls.template))[chosen]
    for t in np.unique(calls.template[ids]):
        members = ids[calls.template[ids] == t]
        template = program.book.templates[t]
        ext = None
        if template.num_slots:
            starts = calls.ext_start[members]
            ext = calls.ext[starts[:, None] + np.arange(template.num_slots)[None, :]]
        yield template, members, ext


def _chunks(members: np.ndarray, terms: int):
    step = max(1, CHUNK_ENTRIES // max(1, terms))
    for start in range(0, len(members), step):
        yield slice(start, start + step)


def fingerprint(program: Program) -> Fingerprint:
    calls = program.calls()
    n_in, n_aux = program.num_inputs, program.num_aux
    rows = program.num_rows + n_in
    nnz = [n_in, 0, 0]  # each input constraint has one term, in A
    density = {"a_aux": np.zeros(n_aux, bool), "b_aux": np.zeros(n_aux, bool),
               "b_input": np.zeros(n_in, bool)}
    for template, members, ext in _groups(program, calls):
        for m, matrix in enumerate(template.matrices):
            nnz[m] += len(members) * len(matrix.keys)
        for m, aux_name in ((0, "a_aux"), (1, "b_aux")):
            keys = np.unique(template.matrices[m].keys)
            for part in _chunks(members, len(keys)):
                cols = _columns(template, keys, members[part], calls,
                                None if ext is None else ext[part], n_in)
                aux_cols = cols[cols >= n_in] - n_in
                density[aux_name][aux_cols] = True
                if m == 1:
                    density["b_input"][cols[cols < n_in]] = True
    return Fingerprint(rows, n_in, n_in, n_aux, *nnz, int(density["a_aux"].sum()),
                       int(density["b_input"].sum()), int(density["b_aux"].sum()),
                       max(1, (rows - 1).bit_length()))


def assemble(program: Program, chosen: slice = slice(None)
             ) -> tuple[CodedMatrix, CodedMatrix, CodedMatrix]:
    """A, B and C of the program's R1CS (input constraints appended), or only the rows of
    the calls in ``chosen`` (a range of calls: their rows are contiguous; the input rows
    come with the last call), with global columns."""
    calls = program.calls()
    n_in = program.num_inputs
    ids = np.arange(len(calls.template))[chosen]
    ends = np.append(calls.row_base[1:], program.num_rows)
    first_row = int(calls.row_base[ids[0]]) if ids.size else 0
    last_row = int(ends[ids[-1]]) if ids.size else 0
    with_inputs = not ids.size or ids[-1] == len(calls.template) - 1
    rows = last_row - first_row + (n_in if with_inputs else 0)
    one_code = program.book.code(1)
    table = fr_to_limbs(program.book.coefficients)
    groups = list(_groups(program, calls, chosen))
    column_dtype = np.uint32 if n_in + program.num_aux < 1 << 32 else np.int64
    out = []
    for m in range(3):
        row_terms = np.zeros(rows, dtype=np.int64)
        for template, members, _ in groups:
            local_rows = (calls.row_base[members][:, None] - first_row
                          + np.arange(template.num_rows)[None, :])
            row_terms[local_rows] = template.matrices[m].row_terms[None, :]
        if m == 0 and with_inputs:
            row_terms[last_row - first_row:] = 1
        indptr = np.concatenate([[0], np.cumsum(row_terms)])
        indices = np.empty(indptr[-1], dtype=column_dtype)
        codes = np.empty(indptr[-1], dtype=np.uint32)
        for template, members, ext in groups:
            matrix = template.matrices[m]
            if not len(matrix.keys):
                continue
            for part in _chunks(members, len(matrix.keys)):
                chunk = members[part]
                starts = indptr[calls.row_base[chunk] - first_row]
                where = starts[:, None] + np.arange(len(matrix.keys))[None, :]
                indices[where] = _columns(template, matrix.keys, chunk, calls,
                                          None if ext is None else ext[part], n_in)
                codes[where] = template.codes[m][None, :]
        if m == 0 and with_inputs:
            indices[indptr[last_row - first_row]:] = np.arange(n_in)
            codes[indptr[last_row - first_row]:] = one_code
        out.append(CodedMatrix(indptr, indices, codes, table))
    return tuple(out)


def to_r1cs(program: Program) -> R1CS:
    """The program's R1CS in coded form, for ``snark.groth16``."""
    return R1CS(program.num_inputs, program.num_aux, *assemble(program))


def unsatisfied_rows(matrices: tuple[CodedMatrix, CodedMatrix, CodedMatrix],
                     assignment: np.ndarray) -> np.ndarray:
    """Rows where ``(A·w)(B·w) ≠ C·w`` for the full assignment ``[ONE, inputs…, aux…]``
    (the native engine's products)."""
    a, b, c = (native.matvec(m, assignment) for m in matrices)
    return np.flatnonzero((native.fr_mul(a, b) != c).any(axis=1))


def check_rows(program: Program, assignment: np.ndarray, *, calls_per_chunk: int = 2048
               ) -> np.ndarray:
    """``unsatisfied_rows`` of the whole program, stamped and checked a range of calls at a
    time, so a 130 M-row circuit is checked without its matrices in memory at once."""
    count = len(program.calls().template)
    bad = []
    for start in range(0, max(count, 1), calls_per_chunk):
        chosen = slice(start, min(count, start + calls_per_chunk))
        matrices = assemble(program, chosen)
        first = int(program.calls().row_base[start]) if count else 0
        bad.append(unsatisfied_rows(matrices, assignment) + first)
    return np.concatenate(bad)
