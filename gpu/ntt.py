"""Fr NTTs on the GPU (kernels in ``gpu/kernels/ntt.cu``), matching ``snark.domain``.

Vectors are CuPy ``(n, 4)`` uint64 arrays. The transforms are linear, so they work on
either form (standard or Montgomery) and return the same form; twiddles and scales are
Montgomery, and a scale given "raw" (``Scale.raw``) additionally leaves Montgomery form.

A transform is a sequence of passes (``plan``), each a kernel launch running up to ten
radix-2 stages in shared memory. ``dit`` (bit-reversed → natural) and ``dif`` (natural →
bit-reversed) are the two building blocks; the natural-order ``forward``/``inverse`` are
a DIT whose first pass gathers from bit-reversed addresses. The quotient chains a DIF
inverse into a DIT forward so that no pass permutes.

Tables are built once per size (``prepare``) on the caller's current stream and kept for
the life of the ``Ntt``: the twiddles ω^k for k ≤ n/2 (the inverse ones are −ω^(n/2−k)),
and split power tables (2^14 low powers × n/2^14 high powers) for the scales.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from gpu import module
from snark.fields import (
    FR_MODULUS,
    FR_MULTIPLICATIVE_GENERATOR,
    FR_ROOT_OF_UNITY,
    FR_TWO_ADICITY,
    fr_to_limbs,
    to_montgomery,
)

MAX_LOG_SIZE = 27
#: Must match ntt.cu / fr_vec.cuh.
MAX_LOG_BLOCK = 10
SCALE_LO_BITS = 14
THREADS = 256
#: Later passes keep >= 4 adjacent columns per block (128-byte runs) by running <= 8 stages.
LATER_PASS_STAGES = MAX_LOG_BLOCK - 2

_DIF, _INVERSE, _GATHER = 1, 2, 4
_NULL = np.uint64(0)


@dataclass(frozen=True)
class Pass:
    first_stage: int
    stages: int
    log_cols: int


@functools.lru_cache(maxsize=None)
def plan(log_n: int) -> tuple[Pass, ...]:
    """Passes in DIT order: ten stages on contiguous blocks, the rest split evenly."""
    first = min(log_n, MAX_LOG_BLOCK)
    passes = [Pass(0, first, 0)]
    rest, done = log_n - first, first
    count = -(-rest // LATER_PASS_STAGES)
    for i in range(count):
        stages = -(-rest // (count - i))
        passes.append(Pass(done, stages, min(done, MAX_LOG_BLOCK - stages)))
        done += stages
        rest -= stages
    return tuple(passes)


@dataclass(frozen=True)
class Scale:
    """f(i) = factor · base^i, optionally leaving Montgomery form (``raw``)."""

    base: int
    factor: int = 1
    raw: bool = False

    def tables(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) limbs with lo[i & mask] · hi[i >> bits] = f(i) as Montgomery products."""
        lo_count = min(count, 1 << SCALE_LO_BITS)
        lo, acc = [], 1
        for _ in range(lo_count):
            lo.append(acc)
            acc = acc * self.base % FR_MODULUS
        step = pow(self.base, 1 << SCALE_LO_BITS, FR_MODULUS)
        hi, acc = [], self.factor % FR_MODULUS
        for _ in range(((count - 1) >> SCALE_LO_BITS) + 1):
            hi.append(acc)
            acc = acc * step % FR_MODULUS
        hi_limbs = fr_to_limbs(hi) if self.raw else to_montgomery(hi, FR_MODULUS, 4)
        return to_montgomery(lo, FR_MODULUS, 4), hi_limbs


def root_of_unity(log_n: int) -> int:
    return pow(FR_ROOT_OF_UNITY, 1 << (FR_TWO_ADICITY - log_n), FR_MODULUS)


def scales(n: int) -> dict[str, Scale]:
    """The scales the transforms and the quotient use, by name."""
    g = FR_MULTIPLICATIVE_GENERATOR
    g_inv, n_inv = pow(g, -1, FR_MODULUS), pow(n, -1, FR_MODULUS)
    return {
        "coset": Scale(g),                              # before coset_ntt
        "n_inv": Scale(1, n_inv),                       # after intt
        "unshift_n_inv": Scale(g_inv, n_inv),           # after coset_intt
        "shift_n_inv": Scale(g, n_inv),                 # quotient: intt then coset shift
        "unshift_n_inv_std": Scale(g_inv, n_inv, raw=True),  # quotient's last step
        # odd H form: intt then the shift by ψ (ψ² = ω) onto the odd points of the 2n-domain
        "odd_n_inv": Scale(root_of_unity(n.bit_length()), n_inv),
    }


def log_size(x, what: str = "vector") -> int:
    """log2 of a (n, 4) uint64 CuPy vector's length; ValueError naming ``what`` otherwise."""
    if x.ndim != 2 or x.shape[1] != 4 or x.dtype != np.uint64:
        raise ValueError(f"{what}: expected an (n, 4) uint64 array, got {x.shape} {x.dtype}")
    n = x.shape[0]
    if n < 2 or n & (n - 1) or n.bit_length() - 1 > MAX_LOG_SIZE:
        raise ValueError(f"{what}: length {n} is not a power of two in [2, 2^{MAX_LOG_SIZE}]")
    if not x.flags.c_contiguous:
        raise ValueError(f"{what}: must be C-contiguous")
    return n.bit_length() - 1


class Ntt:
    """NTTs of one device. Kernels launch on the caller's current CuPy stream."""

    def __init__(self, device_id: int) -> None:
        self.device_id = device_id
        self._pass = module.function("ntt.cu", "ntt_pass", device_id)
        self._expand = module.function("ntt.cu", "fr_expand_powers", device_id)
        self._twiddles: dict[int, object] = {}
        self._scales: dict[tuple[int, str], tuple[object, object]] = {}

    # -- tables ---------------------------------------------------------------------------
    def prepare(self, log_n: int) -> None:
        """Build (once) every table of size 2^log_n; call outside the proving path."""
        import cupy

        if log_n in self._twiddles:
            return
        count = (1 << (log_n - 1)) + 1
        lo, hi = (cupy.asarray(t) for t in Scale(root_of_unity(log_n)).tables(count))
        twiddles = cupy.empty((count, 4), dtype=cupy.uint64)
        self._expand(((count + 255) // 256,), (256,), (twiddles, lo, hi, np.uint32(count)))
        for name, scale in scales(1 << log_n).items():
            self._scales[(log_n, name)] = tuple(cupy.asarray(t) for t in scale.tables(1 << log_n))
        self._twiddles[log_n] = twiddles

    def scale(self, log_n: int, name: str) -> tuple[object, object]:
        self.prepare(log_n)
        return self._scales[(log_n, name)]

    # -- building blocks ------------------------------------------------------------------
    def dit(self, src, dst, *, inverse: bool = False, gather: bool = False,
            pre: str | None = None, post: str | None = None) -> None:
        """Bit-reversed ``src`` → natural ``dst`` (``gather``: ``src`` is natural; needs
        ``dst`` distinct). ``pre``/``post`` name scales applied by natural index."""
        log_n = log_size(src, "ntt input")
        if gather and src.data.ptr == dst.data.ptr:
            raise ValueError("ntt: a gathering transform cannot run in place")
        self._run(src, dst, log_n, list(plan(log_n)), _INVERSE * inverse, gather, pre, post)

    def dif(self, x, *, inverse: bool = False, pre: str | None = None,
            post: str | None = None) -> None:
        """Natural ``x`` → bit-reversed, in place."""
        log_n = log_size(x, "ntt input")
        self._run(x, x, log_n, list(reversed(plan(log_n))), _DIF | _INVERSE * inverse,
                  False, pre, post)

    def _run(self, src, dst, log_n, passes, flags, gather, pre, post) -> None:
        if dst.shape != src.shape:
            raise ValueError(f"ntt output: shape {dst.shape} differs from input {src.shape}")
        self.prepare(log_n)
        twiddles = self._twiddles[log_n]
        pre_tables = self.scale(log_n, pre) if pre else (_NULL, _NULL)
        post_tables = self.scale(log_n, post) if post else (_NULL, _NULL)
        for i, p in enumerate(passes):
            elems = 1 << (p.stages + p.log_cols)
            first, last = i == 0, i == len(passes) - 1
            self._pass(
                ((1 << log_n) // elems,), (min(elems // 2, THREADS),),
                (src if first else dst, dst, twiddles, np.uint32(log_n),
                 np.uint32(p.first_stage), np.uint32(p.stages), np.uint32(p.log_cols),
                 np.uint32(flags | (_GATHER if first and gather else 0)),
                 *(pre_tables if first else (_NULL, _NULL)),
                 *(post_tables if last else (_NULL, _NULL))))

    # -- natural order --------------------------------------------------------------------
    def forward(self, x, *, coset: bool = False):
        """Evaluations at ω^i (or g·ω^i) of the coefficients ``x``; a new array."""
        import cupy

        out = cupy.empty_like(x)
        self.dit(x, out, gather=True, pre="coset" if coset else None)
        return out

    def inverse(self, x, *, coset: bool = False):
        """Coefficients from evaluations at ω^i (or g·ω^i); a new array."""
        import cupy

        out = cupy.empty_like(x)
        self.dit(x, out, inverse=True, gather=True,
                 post="unshift_n_inv" if coset else "n_inv")
        return out


@functools.lru_cache(maxsize=None)
def engine(device_id: int) -> Ntt:
    return Ntt(device_id)


def _current() -> Ntt:
    import cupy

    return engine(cupy.cuda.Device().id)


def ntt(x):
    """``snark.domain.Domain(n).ntt`` on the current device."""
    return _current().forward(x)


def intt(x):
    return _current().inverse(x)


def coset_ntt(x):
    return _current().forward(x, coset=True)


def coset_intt(x):
    return _current().inverse(x, coset=True)
