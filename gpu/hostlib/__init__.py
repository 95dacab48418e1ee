"""Host build of the kernel headers (g++), for testing the arithmetic without a GPU.

``load()`` compiles the ``*_host.cpp`` files (which include ``gpu/kernels/*.cuh`` — the very
text the GPU compiles) into one shared library with ``snark.native.build`` (cached by the
sources' hash, the flags and the machine), and returns it through ctypes. Entry points take
raw uint64 limb arrays; see the .cpp files. They are several files, largest first, because
the build compiles one file a core: on 2 cores one file took ~105 s, mostly the G2
instantiations of the point formulas, the fixed-base products and the MSM.
"""

from __future__ import annotations

import ctypes
from functools import lru_cache
from pathlib import Path

import numpy as np

from snark.native.build import shared_library

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parent / "kernels"
#: Largest first: the build hands them to the cores in this order.
SOURCES = [HERE / f"{name}_host.cpp"
           for name in ("curve", "fixed_base", "msm", "witness", "ntt", "field")]

#: Operation codes of ``*_apply`` (same order as the enums in field_host.cpp
#: and curve_host.cpp).
#: product_difference: a·b - b·b, one reduction where the field has it (F::product_difference).
FIELD_OPS = ("add", "sub", "mul", "sqr", "to_mont", "from_mont", "inverse", "neg",
             "product_difference")
#: Of fr_lazy / fq_lazy: operands and results below 2p (field.cuh).
LAZY_OPS = ("add_lazy", "sub_lazy", "mul_lazy")
POINT_OPS = ("add", "madd", "dbl", "dbl_affine", "add_proj", "madd_proj", "madd_neg")


@lru_cache(maxsize=1)
def load() -> ctypes.CDLL:
    """Build (once per source version) and load the host library; without g++,
    ``snark.native.build.NativeUnavailable``."""
    target = shared_library("kernels_host", SOURCES, headers=sorted(KERNELS.glob("*.cuh")),
                            flags=["-O2", "-std=c++17", f"-I{KERNELS}"])
    lib = ctypes.CDLL(str(target))
    pointer, long_ = ctypes.c_void_p, ctypes.c_long
    for name in ("fr_apply", "fq_apply", "fq2_apply", "g1_apply", "g2_apply"):
        fn = getattr(lib, name)
        fn.argtypes = [ctypes.c_int, pointer, pointer, pointer, long_]
        fn.restype = ctypes.c_int
    lib.signed_digits.argtypes = [pointer, long_, ctypes.c_int, ctypes.c_int, pointer]
    lib.signed_digits.restype = None
    for name in ("msm_window_sums_g1", "msm_window_sums_g2"):
        fn = getattr(lib, name)
        fn.argtypes = [pointer, pointer, long_] + [ctypes.c_int] * 8 + [pointer]
        fn.restype = None
    u32, u64 = ctypes.c_uint32, ctypes.c_uint64
    lib.bucket_ends_walk.argtypes = [pointer, u32, u32, u32, pointer, pointer]
    lib.bucket_ends_walk.restype = None
    lib.ntt_pass_host.argtypes = (ctypes.c_int,) * 2 + (pointer,) * 3 + (u32,) * 5 + (pointer,) * 4
    lib.ntt_pass_host.restype = ctypes.c_int
    lib.ntt_shared_slots.argtypes = [ctypes.c_int, u32, u32, u32, pointer]
    lib.ntt_shared_slots.restype = ctypes.c_int
    lib.porep_witness_host.argtypes = ((pointer, u32, u32) + (pointer,) * 5 + (u32,) * 4
                                       + (u64, pointer, pointer))
    lib.porep_witness_host.restype = None
    i32, i64 = ctypes.c_int32, ctypes.c_int64
    lib.tape_run_host.argtypes = ((pointer, pointer, i32) + (pointer,) * 4 + (i32,) * 7
                                  + (pointer,) * 4 + (i64, pointer, pointer))
    lib.tape_run_host.restype = None
    lib.spmv_host.argtypes = [pointer] * 4 + [i64] + [pointer] * 5 + [u64]
    lib.spmv_host.restype = None
    lib.fixed_base_host.argtypes = ((ctypes.c_int,) * 2 + (pointer, u32, pointer) + (u32,) * 3
                                    + (pointer,) * 3)
    lib.fixed_base_host.restype = None
    return lib


def _ptr(array: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(array.ctypes.data)


def apply(entry: str, op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Run ``entry`` (fr/fq/fq2/g1/g2, fr_lazy/fq_lazy) elementwise on raw uint64 rows of
    a and b."""
    ops = (POINT_OPS if entry in ("g1", "g2") else LAZY_OPS if entry.endswith("_lazy")
           else FIELD_OPS)
    a = np.ascontiguousarray(a, dtype=np.uint64)
    b = np.ascontiguousarray(b, dtype=np.uint64)
    if a.shape != b.shape:
        raise ValueError(f"operand shapes differ: {a.shape} vs {b.shape}")
    out = np.zeros_like(a)
    status = getattr(load(), f"{entry}_apply")(ops.index(op), _ptr(a), _ptr(b), _ptr(out),
                                               a.shape[0])
    if status != 0:
        raise ValueError(f"host library rejected op {op!r}")
    return out


def signed_digits(scalars: np.ndarray, c: int, windows: int) -> np.ndarray:
    """The MSM kernels' signed c-bit digits of (n, 4) standard-form scalars: (n, windows)."""
    scalars = np.ascontiguousarray(scalars, dtype=np.uint64)
    out = np.zeros((scalars.shape[0], windows), dtype=np.int32)
    load().signed_digits(_ptr(scalars), scalars.shape[0], c, windows, _ptr(out))
    return out


def msm_window_sums(points, scalars: np.ndarray, c: int, windows: int, run_bits: int,
                    chunk: int, tabled: bool = False, ones_per: int = 0,
                    group: range | None = None) -> np.ndarray:
    """The GPU MSM's bucket phase run on the CPU: XYZZ window sums (Montgomery), one row
    per window (one in all with ``tabled``: the bases' window table built first), for a
    ``snark.curve.PointArray`` and (n, 4) standard-form scalars. With ``ones_per`` the
    scalars equal to 1 are summed apart, ``ones_per`` a thread (``gpu.msm.ones_sum``), and
    their sum is one more row (weight 1). ``group``: the digits of these windows alone (a
    window group of ``gpu.msm``; a row per window of the group)."""
    if chunk < 4:
        raise ValueError(f"chunk: {chunk} < 4 does not always shrink the level list")
    group = group or range(windows)
    words = 6 if points.group == 1 else 12
    n = scalars.shape[0]
    bases = np.ascontiguousarray(points.xy[:n], dtype=np.uint64).reshape(n, 2 * words)
    scalars = np.ascontiguousarray(scalars, dtype=np.uint64)
    out = np.zeros(((1 if tabled else len(group)) + bool(ones_per), 4 * words), dtype=np.uint64)
    getattr(load(), f"msm_window_sums_g{points.group}")(
        _ptr(bases), _ptr(scalars), n, c, windows, group.start, group.stop, run_bits, chunk,
        int(tabled), ones_per, _ptr(out))
    return out


def bucket_ends_walk(ends: np.ndarray, length: int, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """Bucket level 0's view of a digit sort (``bucket_ends`` in msm_buckets.cuh) over
    ``length`` slots with bucket ends ``ends`` (one per key): each slot's key as its chunk's
    thread walks it (MSM_PAD_KEY past the last end), and per chunk whether its first and
    last runs continue into the chunks beside it, (chunks, 2) bools."""
    ends = np.ascontiguousarray(ends, dtype=np.uint32)
    keys = np.zeros(length, dtype=np.uint32)
    chunks = -(-length // chunk)
    open_ = np.zeros((chunks, 2), dtype=np.uint8)
    load().bucket_ends_walk(_ptr(ends), len(ends), length, chunk, _ptr(keys), _ptr(open_))
    return keys, open_.astype(bool)


def ntt(x: np.ndarray, passes, *, dif: bool = False, inverse: bool = False,
        gather: bool = False, pre: str | None = None, post: str | None = None) -> np.ndarray:
    """``gpu.ntt.Ntt.dit`` (or ``dif``) of the (n, 4) limbs ``x`` run on the CPU with the
    kernels' per-thread code, pass by pass as ``gpu.ntt`` launches them over ``passes``
    (a ``gpu.ntt.make_plan``); the twiddle and scale tables are built on the host."""
    from gpu import ntt as gpu_ntt
    from snark.fields import FR_MODULUS, to_montgomery

    n = x.shape[0]
    log_n = n.bit_length() - 1
    w = gpu_ntt.root_of_unity(log_n)
    twiddles = np.ascontiguousarray(
        to_montgomery([pow(w, k, FR_MODULUS) for k in range(n // 2 + 1)], FR_MODULUS, 4))
    tables: dict[str | None, list[np.ndarray]] = {
        name: [np.ascontiguousarray(t) for t in gpu_ntt.scales(n)[name].tables(n)]
        for name in (pre, post) if name}
    pre_args, post_args = (
        [a if isinstance(a, np.ndarray) else None
         for a in gpu_ntt.scale_args(n, name, tables.get(name))] for name in (pre, post))
    flags = gpu_ntt.transform_flags(n, dif, inverse, pre, post)
    src = np.ascontiguousarray(x, dtype=np.uint64)
    dst = src.copy() if dif else np.zeros_like(src)
    for i, launch in enumerate(gpu_ntt.launches(passes, dif, flags, gather)):
        p = launch.step
        scale_ptrs = [_ptr(a) if a is not None and use else None
                      for args, use in ((pre_args, launch.pre), (post_args, launch.post))
                      for a in args]
        status = load().ntt_pass_host(int(dif), p.log_per_thread, _ptr(src if i == 0 else dst),
                                      _ptr(dst), _ptr(twiddles), log_n, p.first_stage, p.stages,
                                      p.log_cols, launch.flags, *scale_ptrs)
        if status != 0:
            raise ValueError(f"ntt pass {p}: no kernel for 2^{p.log_per_thread} a thread")
    return dst


def ntt_shared_slots(per_thread: int, stages: int, log_cols: int, round_: int) -> np.ndarray:
    """The shared-memory slot of each (thread, register) in one round of an NTT pass:
    (threads, 2^per_thread)."""
    out = np.zeros((1 << (stages + log_cols - per_thread), 1 << per_thread), dtype=np.uint32)
    if load().ntt_shared_slots(per_thread, stages, log_cols, round_, _ptr(out)) != 0:
        raise ValueError(f"ntt: no kernel for 2^{per_thread} elements a thread")
    return out


def porep_witness(inputs, num_inputs: int, num_variables: int) -> tuple[np.ndarray, np.ndarray]:
    """The device witness kernel run on the CPU from the same plan as ``gpu.porep_witness``:
    the (num_variables, 4) standard-form witness and the per-challenge check bits."""
    from gpu.porep_witness import kernel_plan

    plan = kernel_plan(inputs, num_inputs, num_variables)
    k = inputs.challenges
    witness = np.zeros((num_variables, 4), dtype=np.uint64)
    witness[:num_inputs] = inputs.public
    flags = np.zeros(k, dtype=np.uint32)
    arrays = [np.ascontiguousarray(a) for a in (
        plan.schedule, inputs.commitments, inputs.index, inputs.leaves, inputs.siblings,
        plan.slots)]
    schedule, commitments, index, leaves, siblings, slots = arrays
    load().porep_witness_host(
        _ptr(schedule), plan.half, plan.partial, _ptr(commitments), _ptr(index), _ptr(leaves),
        _ptr(siblings), _ptr(slots), plan.depth, plan.sboxes, k, plan.stride, num_inputs,
        _ptr(witness), _ptr(flags))
    return witness, flags


def tape_run(tape, refs: np.ndarray, data: np.ndarray, aux_base: np.ndarray,
             input_base: np.ndarray, aux: np.ndarray, inputs: np.ndarray) -> None:
    """The device tape kernel run on the CPU (``gpu.tape.DeviceTape``), writing the calls'
    variables into ``aux`` and inputs into ``inputs`` (standard-form limbs) in place."""
    arrays = [np.ascontiguousarray(a) for a in (
        tape.ops, tape.step_ends, tape.terms, tape.consts, tape.num_index, tape.slot_is_num,
        refs.astype(np.int64), data, aux_base.astype(np.int64), input_base.astype(np.int64))]
    ops, ends, terms, consts, num_index, slot_is_num, refs, data, aux_base, input_base = arrays
    load().tape_run_host(
        _ptr(ops), _ptr(ends), len(ends), _ptr(terms), _ptr(consts), _ptr(num_index),
        _ptr(slot_is_num), tape.slots, tape.registers, tape.numbers, tape.sums, tape.aux,
        tape.inputs, tape.data_words, _ptr(refs), _ptr(data), _ptr(aux_base),
        _ptr(input_base), len(aux_base), _ptr(aux), _ptr(inputs))


def spmv(indptr: np.ndarray, indices: np.ndarray, codes: np.ndarray, table: np.ndarray,
         witness: np.ndarray, rows_out: int) -> np.ndarray:
    """``spmv.cu``'s chunks and fix-ups run on the CPU: the Montgomery form of A·w (rows_out
    rows, zero past the matrix) for a coded CSR matrix whose ``table`` holds d·R² (raw
    limbs) and a standard-form witness."""
    from gpu.spmv_plan import chunk_rows as plan_chunks

    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    nnz = int(indptr[-1])
    chunk_rows = plan_chunks(indptr)
    chunks = len(chunk_rows)
    out = np.zeros((rows_out, 4), dtype=np.uint64)
    carry_rows = np.zeros(2 * chunks + 1, dtype=np.uint32)
    carry_values = np.zeros((2 * chunks + 1, 4), dtype=np.uint64)
    args = [np.ascontiguousarray(a, dtype=t) for a, t in
            ((indices, np.uint32), (codes, np.uint32), (table, np.uint64), (witness, np.uint64))]
    load().spmv_host(_ptr(indptr), _ptr(args[0]), _ptr(args[1]), _ptr(args[2]), nnz,
                     _ptr(chunk_rows), _ptr(args[3]), _ptr(out), _ptr(carry_rows),
                     _ptr(carry_values), chunks)
    return out


def fixed_base(group: int, table: np.ndarray, width: int, scalars: np.ndarray,
               per_thread: int, threads: int, mont_out: bool = False):
    """``fixed_base.cu`` run on the CPU, ``threads`` threads of ``per_thread`` points: for a
    width-``width`` table (raw Montgomery rows) and (n, 4) limbs, the (n, 2·words) affine
    rows (standard form, or Montgomery with ``mont_out``) and the (n,) infinity flags."""
    words = 6 if group == 1 else 12
    n = scalars.shape[0]
    if per_thread * threads < n:
        raise ValueError(f"{threads} threads of {per_thread} points miss some of {n}")
    table = np.ascontiguousarray(table, dtype=np.uint64)
    scalars = np.ascontiguousarray(scalars, dtype=np.uint64)
    scratch = np.zeros((n, 3 * words), dtype=np.uint64)
    out = np.full((n, 2 * words), 0xDEADBEEF, dtype=np.uint64)  # poison: every row written
    inf = np.full(n, 7, dtype=np.uint8)
    load().fixed_base_host(group, int(mont_out), _ptr(table), width, _ptr(scalars), n,
                           per_thread, threads, _ptr(scratch), _ptr(out), _ptr(inf))
    return out, inf
