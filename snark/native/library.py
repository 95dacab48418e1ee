"""The native library: built from ``src/`` on first use (``snark.native.build``), loaded
with ctypes, its thread count set, and the calls' errors raised as ``ValueError``.

Threads: ``PROOFQ_CPU_THREADS`` if set, else every core (``os.cpu_count()``), read when
the library loads; ``set_threads`` changes it for the process.
"""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from snark.native.build import shared_library

SOURCE_DIR = Path(__file__).resolve().parent / "src"
FLAGS = ("-O3", "-std=c++17", "-march=native", "-pthread", "-fvisibility=hidden")
#: Built with PQ_PORTABLE: the C Montgomery product instead of the x86-64 assembly (tests),
#: from the sources a product and an MSM need (a whole second build costs ~45 s on 2 cores).
PORTABLE_FLAGS = (*FLAGS, "-DPQ_PORTABLE")
PORTABLE_SOURCES = ("fr_vec", "msm", "runtime")

_P, _I64, _INT = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
#: Every entry point's arguments (all return an int status, 0 on success).
SIGNATURES = {
    "pq_fr_op": [_INT, _P, _P, _I64, _P, _I64],
    "pq_fr_batch_inverse": [_P, _P, _I64],
    "pq_fr_powers": [_P, _P, _P, _I64],
    "pq_fr_lagrange": [_INT, _P, _P, _I64],
    "pq_ntt": [_INT, _P, _INT],
    "pq_quotient": [_INT, _P, _P, _P, _P, _INT],
    "pq_matvec": [_P, _I64, _P, _INT, _I64, _P, _INT, _P, _I64, _I64, _P, _P, _INT],
    "pq_points_to_mont": [_INT, _P, _P, _I64, _P],
    "pq_msm": [_INT, _P, _P, _P, _I64, _P, _I64, _P, _P],
    "pq_fixed_base": [_INT, _P, _P, _I64, _P, _P],
    "pq_poseidon": [_P, _I64, _INT, _INT, _INT, _INT, _INT, _P, _P, _I64],
    "pq_feistel_permute": [_P, _I64, ctypes.c_uint64, _P, _INT, _P],
}


def default_threads() -> int:
    value = os.environ.get("PROOFQ_CPU_THREADS")
    if value:
        try:
            threads = int(value)
        except ValueError:
            raise ValueError(f"PROOFQ_CPU_THREADS: {value!r} is not an integer") from None
        if threads < 1:
            raise ValueError(f"PROOFQ_CPU_THREADS: {threads} is not a positive thread count")
        return threads
    return os.cpu_count() or 1


def sources() -> list[Path]:
    return sorted(SOURCE_DIR.glob("*.cpp"))


def headers() -> list[Path]:
    return sorted(SOURCE_DIR.glob("*.hpp"))


@lru_cache(maxsize=2)
def load(flags: tuple[str, ...] = FLAGS, only: tuple[str, ...] = ()) -> ctypes.CDLL:
    """Build (once per source version, flags and machine) and load the library; ``only``
    names the sources (stems) of a partial build, whose other entry points are absent."""
    chosen = [s for s in sources() if not only or s.stem in only]
    lib = ctypes.CDLL(str(shared_library("proofq-native", chosen, headers=headers(),
                                         flags=flags)))
    for name, argtypes in SIGNATURES.items():
        fn = getattr(lib, name, None) if only else getattr(lib, name)  # a whole build has all
        if fn is not None:
            fn.argtypes, fn.restype = argtypes, ctypes.c_int
    lib.pq_last_error.restype = ctypes.c_char_p
    lib.pq_set_threads.argtypes = [ctypes.c_int]
    lib.pq_threads.restype = ctypes.c_int
    lib.pq_set_threads(default_threads())
    return lib


def set_threads(threads: int) -> None:
    if threads < 1:
        raise ValueError(f"threads: {threads} is not a positive thread count")
    load().pq_set_threads(threads)


def threads() -> int:
    return load().pq_threads()


def call(name: str, *args, lib: ctypes.CDLL | None = None) -> None:
    """Run entry point ``name``; its error message as a ``ValueError``."""
    lib = lib or load()
    if getattr(lib, name)(*args) != 0:
        raise ValueError(lib.pq_last_error().decode())


def ptr(array: np.ndarray | None):
    """An array as a pointer argument; the object holds a reference to the array, so a
    temporary lives through the call."""
    return None if array is None else array.ctypes
