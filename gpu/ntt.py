"""Fr NTTs on the GPU (kernels in ``gpu/kernels/ntt.cu``), matching ``snark.domain``.

Vectors are CuPy ``(n, 4)`` uint64 arrays. The transforms are linear, so they work on
either form (standard or Montgomery) and return the same form; twiddles and scales are
Montgomery.

A transform is a sequence of passes (``plan``), each a kernel that runs up to ten radix-2
stages on blocks of up to 2^10 elements: each thread holds 2^R of them in registers and
runs the stages R at a time, trading elements through shared memory between
(``ntt_pass.cuh``). Each kind of transform's passes are one CUDA graph, launched with one
driver call (``gpu.launch``). ``dit`` (bit-reversed → natural) and ``dif`` (natural → bit-reversed)
are the two building blocks; the natural-order ``forward``/``inverse`` are a DIT whose
first pass gathers from bit-reversed addresses. The quotient chains a DIF inverse into a
DIT forward so that no pass permutes.

Tables are built once per size (``prepare``) on the caller's current stream and kept for
the life of the ``Ntt``: the twiddles ω^k for k ≤ n/2 (the inverse ones are −ω^(n/2−k)),
and split power tables (2^14 low × n/2^14 high powers) for the scales; a constant scale
(1/n) is one product by its ``hi[0]``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from gpu import module
from gpu.launch import Kernel, LaunchGraph
from snark.fields import (
    FR_MODULUS,
    FR_MULTIPLICATIVE_GENERATOR,
    FR_ROOT_OF_UNITY,
    FR_TWO_ADICITY,
    to_montgomery,
)

MAX_LOG_SIZE = 27
#: Must match ntt_pass.cuh / fr_vec.cuh.
MAX_LOG_BLOCK = 10
#: Shapes with 2^3 a thread (122 registers) lost at every size (2-11% from 2^18 up, 64% at
#: 2^16; the notebook, docs/notebook/2026-12-02-issue-26-the-affine-levels-wrong-sums-and.md),
#: so there is no such kernel.
MAX_LOG_PER_THREAD = 2
SCALE_LO_BITS = 14
_DIF, _INVERSE, _GATHER, _PRE_CONST, _POST_CONST = 1, 2, 4, 8, 16
_NULL = np.uint64(0)
_UINT64 = np.dtype(np.uint64)


@dataclass(frozen=True)
class Pass:
    """Stages [first_stage, first_stage + stages) on blocks of 2^log_cols adjacent columns,
    2^log_per_thread elements a thread."""

    first_stage: int
    stages: int
    log_cols: int
    log_per_thread: int

    @property
    def log_elems(self) -> int:
        return self.stages + self.log_cols

    def launch(self, log_n: int) -> tuple[tuple[int], tuple[int], int]:
        """(grid, block, dynamic shared bytes) of this pass over 2^log_n elements."""
        return ((1 << (log_n - self.log_elems),), (1 << (self.log_elems - self.log_per_thread),),
                32 << self.log_elems)


#: A transform's passes as (stages, log_cols, log_per_thread) in DIT order, by log size:
#: the fastest of ~80-145 shapes each on an H200 (``bench/ntt_variants.py``,
#: docs/notebook/2026-12-02-issue-26-the-affine-levels-wrong-sums-and.md). Sizes not listed take
#: ``default_shape``, which follows the same pattern.
Shape = tuple[tuple[int, int, int], ...]
SHAPES: dict[int, Shape] = {
    16: ((8, 0, 1), (8, 0, 1)),
    18: ((10, 0, 2), (8, 2, 2)),
    20: ((6, 0, 1), (7, 2, 2), (7, 2, 2)),
    22: ((6, 0, 1), (8, 1, 2), (8, 1, 2)),
    24: ((8, 0, 2), (8, 1, 2), (8, 1, 2)),
    27: ((9, 0, 2), (9, 0, 2), (9, 0, 2)),
}


def default_shape(log_n: int) -> Shape:
    """One pass up to 2^10, else ⌈log_n / 9⌉ passes split evenly (the first the shortest),
    the later ones on blocks of two adjacent columns; 2^2 elements a thread, 2^1 where the
    transform is small (latency-bound: more threads) or the first pass short."""
    count = 1 if log_n <= MAX_LOG_BLOCK else -(-log_n // (MAX_LOG_BLOCK - 1))
    stages = [log_n // count + (i >= count - log_n % count) for i in range(count)]
    return tuple((s, min(1, i), 1 if log_n <= 17 or (i == 0 and s <= 6) else min(2, s))
                 for i, s in enumerate(stages))


def make_plan(log_n: int, shape: Shape) -> tuple[Pass, ...]:
    """The passes of ``shape``; ValueError if they do not cover log_n stages in blocks the
    kernels take."""
    passes, done = [], 0
    for stages, log_cols, per_thread in shape:
        if not (1 <= stages and stages + log_cols <= MAX_LOG_BLOCK and log_cols <= done
                and 1 <= per_thread <= min(stages, MAX_LOG_PER_THREAD)):
            raise ValueError(f"ntt plan 2^{log_n}: pass {(stages, log_cols, per_thread)} after "
                             f"{done} stages does not fit a block")
        passes.append(Pass(done, stages, log_cols, per_thread))
        done += stages
    if done != log_n:
        raise ValueError(f"ntt plan 2^{log_n}: the passes cover {done} stages")
    return tuple(passes)


@functools.lru_cache(maxsize=None)
def plan(log_n: int) -> tuple[Pass, ...]:
    """The default passes of a 2^log_n transform, in DIT order."""
    return make_plan(log_n, SHAPES.get(log_n) or default_shape(log_n))


@dataclass(frozen=True)
class Launch:
    """One pass of a transform as launched: its pass, flags, and whether it applies the
    pre (first pass) or post (last pass) scale."""

    step: Pass
    flags: int
    pre: bool
    post: bool


def constant_scale(n: int, name: str | None) -> bool:
    """Whether a named scale is one constant (a base of 1: the kernels then multiply by
    its hi[0] once instead of by the split table's two entries)."""
    return name is not None and scales(n)[name].base == 1


def transform_flags(n: int, dif: bool, inverse: bool, pre: str | None,
                    post: str | None) -> int:
    """Kernel flags of a transform: its direction and its constant scales."""
    return (_DIF * dif | _INVERSE * inverse | _PRE_CONST * constant_scale(n, pre)
            | _POST_CONST * constant_scale(n, post))


def scale_args(n: int, name: str | None, tables) -> tuple:
    """A scale's (lo, hi) kernel arguments: (0, 0) for none, (0, hi) for a constant one."""
    if name is None:
        return (_NULL, _NULL)
    return (_NULL, tables[1]) if constant_scale(n, name) else tuple(tables)


def launches(passes: tuple[Pass, ...], dif: bool, flags: int, gather: bool) -> list[Launch]:
    """The launches of a transform in execution order (DIF runs the passes downward)."""
    order = list(reversed(passes)) if dif else list(passes)
    return [Launch(p, flags | (_GATHER if i == 0 and gather else 0), i == 0, i == len(order) - 1)
            for i, p in enumerate(order)]


@dataclass(frozen=True)
class Scale:
    """f(i) = factor · base^i."""

    base: int
    factor: int = 1

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
        return to_montgomery(lo, FR_MODULUS, 4), to_montgomery(hi, FR_MODULUS, 4)


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
        # odd H form: intt then the shift by ψ (ψ² = ω) onto the odd points of the 2n-domain
        "odd_n_inv": Scale(root_of_unity(n.bit_length()), n_inv),
    }


def log_size(x, what: str = "vector") -> int:
    """log2 of a (n, 4) uint64 CuPy vector's length; ValueError naming ``what`` otherwise."""
    if x.ndim != 2 or x.shape[1] != 4 or x.dtype != _UINT64:
        raise ValueError(f"{what}: expected an (n, 4) uint64 array, got {x.shape} {x.dtype}")
    n = x.shape[0]
    if n < 2 or n & (n - 1) or n.bit_length() - 1 > MAX_LOG_SIZE:
        raise ValueError(f"{what}: length {n} is not a power of two in [2, 2^{MAX_LOG_SIZE}]")
    if not x.flags.c_contiguous:
        raise ValueError(f"{what}: must be C-contiguous")
    return n.bit_length() - 1


class Ntt:
    """NTTs of one device. Kernels launch on the caller's current CuPy stream; ``shapes``
    overrides the plan of some sizes and ``programmatic`` how passes are joined
    (``gpu.launch.LaunchGraph``; benchmarks compare them)."""

    def __init__(self, device_id: int, shapes: dict[int, Shape] | None = None,
                 programmatic: bool = True) -> None:
        self.device_id = device_id
        self.shapes = dict(shapes or {})
        self.programmatic = programmatic
        self._expand = module.function("ntt.cu", "fr_expand_powers", device_id)
        self._twiddles: dict[int, object] = {}
        self._scales: dict[tuple[int, str], tuple[object, object]] = {}
        self._graphs: dict[tuple, LaunchGraph] = {}

    def plan(self, log_n: int) -> tuple[Pass, ...]:
        shape = self.shapes.get(log_n)
        return make_plan(log_n, shape) if shape else plan(log_n)

    def with_shapes(self, shapes: dict[int, Shape], programmatic: bool | None = None) -> Ntt:
        """An ``Ntt`` of the same device and tables whose plans follow ``shapes``."""
        other = Ntt(self.device_id, shapes,
                    self.programmatic if programmatic is None else programmatic)
        other._twiddles, other._scales = self._twiddles, self._scales
        return other

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
        self._run(src, dst, log_n, (log_n, False, inverse, gather, pre, post))

    def dif(self, x, *, inverse: bool = False, pre: str | None = None,
            post: str | None = None) -> None:
        """Natural ``x`` → bit-reversed, in place."""
        log_n = log_size(x, "ntt input")
        self._run(x, x, log_n, (log_n, True, inverse, False, pre, post))

    def _run(self, src, dst, log_n, key) -> None:
        if dst.shape != src.shape:
            raise ValueError(f"ntt output: shape {dst.shape} differs from input {src.shape}")
        import cupy

        graph = self._graphs.get(key) or self._graph(key)
        graph(cupy.cuda.get_current_stream().ptr, src.data.ptr, dst.data.ptr)

    def _graph(self, key) -> LaunchGraph:
        """The passes of one kind of transform as one graph; a call passes (src, dst): the
        first pass reads src, every pass writes dst, and the later ones read it too."""
        log_n, dif, inverse, gather, pre, post = key
        self.prepare(log_n)
        pre_tables, post_tables = (
            scale_args(1 << log_n, name, self.scale(log_n, name) if name else None)
            for name in (pre, post))
        flags = transform_flags(1 << log_n, dif, inverse, pre, post)
        kernels = []
        for i, launch in enumerate(launches(self.plan(log_n), dif, flags, gather)):
            p = launch.step
            kernel = module.function("ntt.cu", f"ntt_pass_{'dif' if dif else 'dit'}_r"
                                     f"{p.log_per_thread}", self.device_id)
            tail = (self._twiddles[log_n], *(np.uint32(v) for v in (
                        log_n, p.first_stage, p.stages, p.log_cols, launch.flags)),
                    *(pre_tables if launch.pre else (_NULL, _NULL)),
                    *(post_tables if launch.post else (_NULL, _NULL)))
            kernels.append(Kernel(kernel, *p.launch(log_n), (_NULL, _NULL, *tail),
                                  live=(0 if i == 0 else 1, 1)))
        self._graphs[key] = LaunchGraph(kernels, self.programmatic)
        return self._graphs[key]

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
