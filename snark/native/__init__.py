"""Native (C++17) arithmetic for the CPU prover, key setup and batch hashing.

The library (``src/``: Montgomery Fr and Fq with x86-64 assembly products, Fq2, G1/G2 in
XYZZ and batched affine coordinates, std::thread loops) is compiled by g++ on first use
into a cache keyed by its sources, flags and machine (``snark.native.build``) and loaded
with ctypes. Arrays cross the boundary as numpy limbs in standard form (``snark.fields``);
bad input is a one-line ``ValueError`` naming the argument, a missing compiler
``NativeUnavailable`` (a ``BackendUnavailable``) with the compiler's words.

Threads: ``PROOFQ_CPU_THREADS`` or every core; ``set_threads`` for the process.
"""

from snark.native.build import NativeUnavailable
from snark.native.field import (fr_add, fr_batch_inverse, fr_mul, fr_powers, fr_sub,
                                lagrange_at)
from snark.native.library import set_threads, threads
from snark.native.msm import Bases, fixed_base_mul, msm
from snark.native.ntt import coset_intt, coset_ntt, intt, ntt, odd_ntt, quotient
from snark.native.poseidon import permute_batch
from snark.native.sparse import matvec, matvec_transposed

__all__ = [
    "Bases", "NativeUnavailable", "coset_intt", "coset_ntt", "fixed_base_mul", "fr_add",
    "fr_batch_inverse", "fr_mul", "fr_powers", "fr_sub", "intt", "lagrange_at", "matvec",
    "matvec_transposed", "msm", "ntt", "odd_ntt", "permute_batch", "quotient", "set_threads",
    "threads",
]
