"""Pippenger multi-scalar multiplication on the GPU, G1 and G2 (kernels: ``kernels/msm.cu``).

``MsmBases`` uploads a key's affine bases once (standard form in, Montgomery on the device;
infinity rows stay zero, the kernels' infinity marker). ``msm`` cuts standard-form scalars
into signed c-bit digits, sorts the digits into buckets by a counting sort (histogram with
atomics, prefix sum, scatter: 4 bytes a digit, its entry; each slot's key is found from the
buckets' ends, which the scatter's cursors become), sums the buckets in chunks of equal work
whatever the digit distribution, reduces each window's buckets on the device and copies
back one sum per window, which the host weights by 2^(c·w) (``combine_windows`` says why).

A key's bases can carry **window tables** (``MsmBases(table=table_plan(n))``): rows
w·n + i hold 2^(c·w)·P_i, made once on the device when the key becomes resident. Then every
window's digits go into one set of buckets, so the window size is no longer held down by a
reduction per window: at 2^20 c = 20 and 13 digits a scalar instead of c = 16 and 16, for
13× the bases' memory (``table_plan`` says how it is chosen).

Scalars at or above r are reduced mod r on the device (any 256-bit value is < 3r), which
matches Σ s_i·P_i for points of order r. Every launch is on the given stream; the host
waits only for copies back: the split's counts (below) and the window sums.

**Ones apart** (``MsmTuning.split_ones``): a witness is mostly bits, and a scalar equal
to 1 has one digit, so its basis needs no bucket: ``split_ones`` lists the ones and counts
the scalars that are neither 0 nor 1, ``ones_sum`` adds the listed bases (partial sums a
thread, then a tree), and only the others go through the digit sort, with the window size
``plan`` gives for their count and slots for their digits alone. The host reads the counts
(one small copy a batch, a wait on the batch's stream) before it plans.

``msm_many`` runs several MSMs as one batch: MSMs over the same scalar vector share one
digit sort (a proof's a_g1, b_g1 and b_g2 all take the witness), every result is copied
back only after all are queued (the GPU never waits on the host's weighting), and MSMs
on different streams (the G2 one, the G1 ones in turn) run beside each other.

**Window groups** (``MsmTuning.max_sort_slots``): a sort holds 4 bytes a digit and its
level-0 sums more, so a dense 2^27 MSM's 13 windows at once took 12.2 GB of scratch on an
H100. Above ``max_sort_slots`` digits an MSM sorts and sums its windows a group at a time
(the count and scatter kernels take a window range; the carries of the windows below still
run), and each group's digits and sums go back to the pool, on the same stream, before the
next group's are made: the same additions, 6.8 GB in two groups, and a faster scatter (a
smaller target). Such an MSM sorts its own digits instead of sharing a sort.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from gpu import module
from snark.backend import DeviceMemoryError
from snark.curve import G1Point, G2Point, PointArray, point_from_xy, scalars_from_ints
from snark.domain import batch_inverse
from snark.fields import FQ_MODULUS, FR_MODULUS, fq_to_limbs, limbs_to_ints

SOURCE = "msm.cu"
SCALAR_BITS = 256  # digits cover 256 bits so a 255-bit scalar's top window never carries out
#: uint64 words of one Fq / Fq2 element, by group.
FIELD_WORDS = {1: 6, 2: 12}
THREADS = 128
#: Threads of msm_scatter_bins (MSM_BIN_THREADS), and the most bins it keeps in shared
#: memory (MSM_MAX_BINS).
BIN_THREADS, MAX_BINS = 256, 1024
#: Threads of msm_reduce_windows (MSM_REDUCE_THREADS in msm.cu).
REDUCE_THREADS = 128


@dataclass(frozen=True)
class MsmTuning:
    """The bucket phase's sizes. ``TUNING`` is the measured default; benchmarks pass their
    own (``dataclasses.replace(TUNING, …)``) to ``msm``, ``msm_many`` and ``GpuBackend``.

    ``chunk``: sorted digits one thread sums at bucket level 0 (half as many below
    ``wide_chunk_digits`` digits, so that small MSMs still fill the GPU; ``huge_chunk``
    from ``huge_chunk_digits`` on, where even 256 a thread leaves millions of threads and
    the partial sums passed on shrink 4-fold: on an H100 a dense 2^27 window group took
    966 against 978 ms and 6.8 against 12.2 GB, while at 2^22–2^24 a witness's others lost
    with 256, 13.0 against 9.0 ms at 2^22); ``later_chunk``:
    partial sums a thread takes at the later levels (each level shrinks the list
    chunk/2-fold). The later levels are latency-bound (a few threads, one general addition
    after another), so their chunks are short: at 2^20 with window tables 64 / 8 took G1
    from 11.7 to 11.0 ms and G2 from 33.1 to 31.7 (32 / 32 before); at 2^16 chunks of 64
    lost (G1 2.61 against 2.35 ms: too few blocks).

    ``target_runs``: runs of buckets reduced in parallel across all windows: about two
    thirds of the G1 threads an H200 holds at once (3 blocks of 128 per SM), so the runs
    stay short (ncu at 2^22 with 2^14: 6% achieved occupancy, 24 ms at 2^24) while
    reduce_windows's share per thread (runs per window / REDUCE_THREADS) stays at 16 or
    fewer.

    ``split_ones``: sum the bases of the scalars equal to 1 apart and plan the digit sort
    for the other scalars alone (the module's docstring; ``bench/msm_bench.py`` runs both).
    A thread of ``ones_sum`` takes ``level0_chunk(ones)`` of them.

    ``max_sort_slots``: digits one sort may hold; an MSM with more is sorted and summed in
    window groups (``window_groups``).

    ``staged_scatter_digits``: sorts of this many digit slots or more scatter in two passes
    (``sort_digits``): into at most ``scatter_bins`` bins of consecutive keys, a block's
    digits of a bin written as one run (a thread of the first pass takes ``bin_scalars``
    scalars), then bin after bin into the buckets. Fewer bins make longer runs in the first
    pass, more make the second's writes land closer together: on an H100 the dense 2^27
    MSM's scatter took 151 ms direct, 100 ms in 192 bins, 78 ms in 48; a 2^24 one's 22.3,
    8.8 (52 bins) and 13.1 ms (13 bins). ``staging_slots``: the digit slots (8 bytes each
    while they are staged) one turn of it holds; a sort of plain bases with more stages its
    windows in turns, each reading the scalars again: h_g1's group of 7 windows of 2^27
    digits stages 3 then 4, 4.3 GB at most instead of 7.5 GB.

    ``max_c``: the widest window ``plan`` may choose for plain bases (2^(c-1) XYZZ buckets
    a window: 75 MB at c = 20 for G1, 302 MB at 22). 22 would win on paper at 2^26 and up
    (12 windows instead of 13), and a dense 2^27 G1 MSM's bucket sums did fall from 771 to
    720 ms on an H100; but its count, scatter (four times the keys) and reduction grew by
    more: 1057 against 970 ms (``bench/msm_variants.py --variant c22=maxc=22``)."""

    chunk: int = 64
    wide_chunk_digits: int = 1 << 23
    huge_chunk: int = 256
    huge_chunk_digits: int = 1 << 29
    later_chunk: int = 8
    target_runs: int = 1 << 15
    split_ones: bool = True
    max_sort_slots: int = 1 << 30
    staged_scatter_digits: int = 1 << 26
    staging_slots: int = 1 << 29
    scatter_bins: int = 64
    bin_scalars: int = 4
    max_c: int = 20

    def level0_chunk(self, digits: int) -> int:
        if digits >= self.huge_chunk_digits:
            return self.huge_chunk
        return self.chunk if digits >= self.wide_chunk_digits else self.chunk // 2


TUNING = MsmTuning()


@dataclass(frozen=True)
class Plan:
    """Window layout for one MSM size: ``windows`` digits of ``c`` bits into ``sets`` sets
    of 2^(c-1) buckets (one per window, or one in all with window tables); the bucket
    reduction splits each set into runs of 2^run_bits buckets."""

    c: int
    windows: int
    run_bits: int
    sets: int

    @property
    def bucket_bits(self) -> int:
        return self.c - 1

    @property
    def buckets(self) -> int:
        return 1 << self.bucket_bits

    @property
    def runs_per_window(self) -> int:
        return 1 << (self.bucket_bits - self.run_bits)


#: Widest window of a table plan: 2^21 buckets of G2 XYZZ points are 0.8 GB of scratch.
MAX_TABLE_C = 22
_REDUCTION_COST = 2.8  # mixed-addition equivalents per bucket in the running sums


def plan(n: int, tuning: MsmTuning = TUNING) -> Plan:
    """Window size minimising the point additions: ``n`` mixed additions per window, plus
    about three general additions (two running sums, counted at the cost of ~1.4 mixed ones)
    per bucket in the reduction."""
    c = min(range(2, tuning.max_c + 1),
            key=lambda c: _windows(c) * (n + _REDUCTION_COST * (1 << (c - 1))))
    return _layout(c, _windows(c), tuning)


def table_plan(n: int, c: int | None = None, tuning: MsmTuning = TUNING) -> Plan:
    """The same minimum when window tables give all windows one set of buckets: ``n``
    mixed additions per window plus one reduction (or the window size ``c``, for
    benchmarks). The table is ``windows`` times the bases."""
    if c is None:
        c = min(range(2, MAX_TABLE_C + 1),
                key=lambda c: _windows(c) * n + _REDUCTION_COST * (1 << (c - 1)))
    return _layout(c, 1, tuning)


def _windows(c: int) -> int:
    return -(-SCALAR_BITS // c)


def window_groups(p: Plan, digit_scalars: int, tuning: MsmTuning = TUNING) -> list[range]:
    """``p``'s windows cut into as few groups of near-equal size as keep each group's sort
    within ``tuning.max_sort_slots`` digits (one group, all windows, for most MSMs)."""
    return _near_equal_parts(range(p.windows), tuning.max_sort_slots // max(1, digit_scalars))


def staging_turns(windows: range, per_window: int, tuning: MsmTuning = TUNING) -> list[range]:
    """The turns in which the staged scatter stages a sort of plain bases' ``windows``
    (``per_window`` digit slots each): as few near-equal runs as keep each within
    ``tuning.staging_slots`` slots (a window at the least)."""
    return _near_equal_parts(windows, tuning.staging_slots // max(1, per_window))


def _near_equal_parts(windows: range, most: int) -> list[range]:
    """``windows`` cut into as few runs of near-equal length as hold ``most`` at most."""
    count = -(-len(windows) // max(1, most))
    return [range(windows.start + k * len(windows) // count,
                  windows.start + (k + 1) * len(windows) // count) for k in range(count)]


def _layout(c: int, sets: int, tuning: MsmTuning) -> Plan:
    bucket_bits = c - 1
    runs = max(1, tuning.target_runs // sets)
    run_bits = max(0, bucket_bits - min(bucket_bits, runs.bit_length() - 1))
    return Plan(c, _windows(c), run_bits, sets)


def _cupy():
    import cupy
    return cupy


def _blocks(count: int) -> tuple[int]:
    return (-(-count // THREADS),)


class MsmBases:
    """Affine bases resident on the current device, Montgomery form: ``rows`` rows of
    ``2·words`` limbs, or ``table.windows`` such blocks with a window table (block w holds
    2^(c·w) times the bases, c = ``table.c``; ``table_plan``).

    ``leading_infinity`` rows of infinity go first: an MSM over them with a longer scalar
    vector ignores its first entries, so it can share that vector's digit sort (the proof's
    l_g1 takes witness[num_inputs:], the others the whole witness)."""

    def __init__(self, points: PointArray, stream=None, leading_infinity: int = 0,
                 table: Plan | None = None) -> None:
        cupy = _cupy()
        self.group = points.group
        self.words = FIELD_WORDS[points.group]
        self.device_id = cupy.cuda.Device().id
        self.leading_infinity = leading_infinity
        self.rows = leading_infinity + len(points)
        self.table = table
        blocks = table.windows if table else 1
        if blocks * self.rows >= 1 << 31:
            raise ValueError(f"msm bases: {blocks} x {self.rows} table rows exceed the "
                             f"31-bit entry index")
        host = np.zeros((self.rows, 2 * self.words), dtype=np.uint64)
        host[leading_infinity:] = np.asarray(points.xy, dtype=np.uint64).reshape(
            len(points), 2 * self.words)
        host[leading_infinity:][points.inf] = 0  # the kernels' infinity marker
        stream = stream or cupy.cuda.get_current_stream()
        u32 = np.uint32
        try:
            with stream:
                self.xy = cupy.empty((blocks * self.rows, 2 * self.words), dtype=cupy.uint64)
                self.xy[:self.rows].set(host)
                if self.rows:
                    _kernel(f"msm_bases_to_mont_g{self.group}", self.device_id)(
                        _blocks(self.rows), (THREADS,), (self.xy, u32(self.rows)))
                if table and self.rows:
                    _kernel(f"msm_window_table_g{self.group}", self.device_id)(
                        _blocks(self.rows), (THREADS,),
                        (self.xy, u32(self.rows), u32(table.c), u32(table.windows)))
        except cupy.cuda.memory.OutOfMemoryError as exc:
            raise DeviceMemoryError(
                f"msm bases ({blocks} x {len(points)} G{self.group} points): {exc}") from exc

    @classmethod
    def on_device(cls, xy, group: int, device_id: int, leading_infinity: int = 0,
                  table: Plan | None = None) -> "MsmBases":
        """Bases already on the device in Montgomery form, ``(blocks·rows, 2·words)``
        uint64 laid out as the constructor lays them out (a streamed chunk's ring buffer,
        ``gpu.streamed_bases``; a key another process made resident, ``gpu.resident``)."""
        bases = cls.__new__(cls)
        bases.group, bases.words, bases.device_id = group, FIELD_WORDS[group], device_id
        bases.leading_infinity, bases.table, bases.xy = leading_infinity, table, xy
        bases.rows = len(xy) // (table.windows if table else 1)
        return bases

    def __len__(self) -> int:
        return self.rows

    @property
    def table_stride(self) -> int:
        """Rows per window block of the table (``place_digit`` in msm_scalar.cuh); 0: none."""
        return self.rows if self.table else 0

    def plan_for(self, n: int, tuning: MsmTuning = TUNING) -> Plan:
        return self.table or plan(n, tuning)

    @staticmethod
    def nbytes(points: PointArray, leading_infinity: int = 0, table: Plan | None = None) -> int:
        """Device bytes of ``MsmBases(points, leading_infinity=…, table=…)``."""
        rows = leading_infinity + len(points)
        return (table.windows if table else 1) * rows * 2 * FIELD_WORDS[points.group] * 8


def _kernel(name: str, device_id: int):
    return module.function(SOURCE, name, device_id)


def msm(bases: MsmBases, scalars, stream=None, tuning: MsmTuning = TUNING) -> G1Point | G2Point:
    """Σ scalars[i]·bases[i] for i < len(scalars); ``scalars``: (n, 4) uint64 standard-form
    Fr limbs on the device (reduced mod r if ≥ r). ``DeviceMemoryError`` when memory runs out."""
    return msm_many([(bases, scalars)], stream, tuning=tuning)[0]


def msm_many(jobs, stream=None, g2_stream=None, g1_streams=(),
             tuning: MsmTuning = TUNING, ones_apart=None) -> list[G1Point | G2Point]:
    """``[msm(bases, scalars) for bases, scalars in jobs]`` as one batch.

    Jobs that pass the very same scalars array share one digit sort (if their bases lay
    digits out alike: the same plan and table stride), made on the stream of the first job
    that reads it. G1 jobs take ``stream`` and ``g1_streams`` in turn; G2 jobs run on
    ``g2_stream`` when one is given. The inputs must be ready in ``stream``'s order: the
    other streams first wait for what it has queued. A G2 MSM costs about three G1 ones,
    and MSMs on different streams overlap where one leaves the GPU partly idle (sorts,
    reductions, the later bucket levels, the tail of each launch). Window sums are copied
    back only once everything is queued, so the host's weighting of one overlaps the GPU's
    work on the next. Bases streamed from the host (``gpu.streamed_bases``) queue their
    chunks' MSMs on the job's stream and sort their own digits.

    ``ones_apart``: the scalar arrays whose ones are summed apart (a witness's: on uniform
    scalars the split pass costs 0.3–0.7 ms and changes no plan); None: every array's.
    Either way only with ``tuning.split_ones``."""
    cupy = _cupy()
    jobs = list(jobs)
    if not jobs:
        return []
    sizes = [_check_scalars(bases, scalars, cupy) for bases, scalars in jobs]
    device_id = jobs[0][0].device_id
    if any(bases.device_id != device_id for bases, _ in jobs):
        raise ValueError("msm_many: every basis must live on the same device")
    stream = stream or cupy.cuda.get_current_stream()
    g1_turns = itertools.cycle((stream, *g1_streams))
    sorts: dict[tuple, tuple[SortedDigits, object]] = {}  # by layout: (sort, its stream)
    pending: list[tuple[Any, list, Any]] = []  # (bases, parts, their stream) by job
    try:
        with cupy.cuda.Device(device_id):
            # one contiguous copy, and one split of the ones, per scalar vector
            vectors = {id(scalars): (cupy.ascontiguousarray(scalars), n)
                       for (bases, scalars), n in zip(jobs, sizes)
                       if isinstance(bases, MsmBases) and n}
            chosen = None if ones_apart is None else {id(v) for v in ones_apart}
            apart = [key for key in vectors
                     if tuning.split_ones and (chosen is None or key in chosen)]
            splits = dict(zip(apart, split_ones([vectors[key] for key in apart], device_id,
                                                stream) if apart else ()))
            # the inputs (bases, tables, scalars) were made in `stream`'s order: the other
            # streams start after them
            inputs_ready = cupy.cuda.Event(block=False, disable_timing=True)
            inputs_ready.record(stream)
            for other in {g2_stream, *g1_streams} - {None, stream}:
                other.wait_event(inputs_ready)
            for (bases, scalars), n in zip(jobs, sizes):
                if n == 0:
                    pending.append((bases, [], None))
                    continue
                run_on = (g2_stream or stream) if bases.group == 2 else next(g1_turns)
                if not isinstance(bases, MsmBases):  # streamed: an MSM a chunk
                    with run_on:
                        pending.append((bases, bases.queue_window_sums(
                            cupy.ascontiguousarray(scalars), n, tuning), run_on))
                    continue
                ones = splits.get(id(scalars))
                digit_scalars = n if ones is None else ones.others
                parts = []
                with run_on:
                    if ones is not None and ones.count:
                        parts.append((ones_sum(bases, ones, tuning), 0, 0))
                    if digit_scalars:
                        parts.extend(_digit_parts(bases, vectors[id(scalars)][0], n, ones,
                                                  run_on, sorts, tuning))
                pending.append((bases, parts, run_on))
            # each result is weighted on the host while the GPU still runs the later ones
            return [_sum_parts(bases.group, bases.words, parts, on)
                    for bases, parts, on in pending]
    except cupy.cuda.memory.OutOfMemoryError as exc:
        raise DeviceMemoryError(f"msm of {max(sizes)} points: {exc}") from exc


def _digit_parts(bases: MsmBases, scalars, n: int, ones: "Ones | None", stream,
                 sorts: dict, tuning: MsmTuning) -> list:
    """Queue the bucket phases of the digits of ``scalars[:n]`` (contiguous) on ``stream``,
    the current one; parts for ``_sum_parts``. One sort serves every MSM of the same layout
    (``sorts``: by layout, the sort and the stream it was made on); above
    ``tuning.max_sort_slots`` digits each window group is sorted, summed and let go in turn,
    so that only one group's scratch is held at a time."""
    others = None if ones is None else ones.others
    p = bases.plan_for(n if others is None else others, tuning)
    groups = window_groups(p, n if others is None else others, tuning)
    if len(groups) > 1:
        parts = []
        for windows in groups:
            digits = sort_digits(scalars, n, bases.device_id, p, bases.table_stride,
                                 others=others, windows=windows, tuning=tuning)
            parts.append(_digit_part(bases, digits, tuning))
            del digits  # back to the pool before the next group's sort is made
        return parts
    layout = (id(scalars), p, bases.table_stride)
    if layout not in sorts:
        sorts[layout] = (sort_digits(scalars, n, bases.device_id, p, bases.table_stride,
                                     others=others, tuning=tuning), stream)
    digits, sorted_on = sorts[layout]
    if stream is not sorted_on:
        stream.wait_event(digits.ready)
    return [_digit_part(bases, digits, tuning)]


def _digit_part(bases: MsmBases, digits: "SortedDigits", tuning: MsmTuning):
    """Queue the bucket phase of ``digits`` on the current stream: a part for
    ``_sum_parts``."""
    return window_sums(bases, digits, tuning=tuning), digits.plan.c, digits.weight_from


def _sum_parts(group: int, words: int, parts, stream) -> G1Point | G2Point:
    """The MSM's point from its parts' window sums ``[(sums, c, first window), …]`` (the
    sorted digits' or a window group's, the ones' sum, or one a streamed chunk), each
    copied back and weighted on the host, then added."""
    points = [combine_windows(sums.get(stream=stream), group, c, first)
              for sums, c, first in parts]
    if not points:
        return point_from_xy(np.zeros(2 * words, dtype=np.uint64), group)
    return functools.reduce(operator.add, points)


def _check_scalars(bases: MsmBases, scalars, cupy) -> int:
    if not isinstance(scalars, cupy.ndarray):
        raise TypeError(f"scalars: expected a cupy.ndarray, got {type(scalars).__name__}")
    if scalars.dtype != np.uint64 or scalars.ndim != 2 or scalars.shape[1] != 4:
        raise ValueError(f"scalars: expected (n, 4) uint64 limbs, "
                         f"got {scalars.shape} {scalars.dtype}")
    n = scalars.shape[0]
    if n > len(bases):
        raise ValueError(f"scalars: {n} scalars for {len(bases)} bases")
    if n >= 1 << 31 or n * plan(n).windows >= 1 << 32:
        raise ValueError(f"scalars: {n} exceeds what one MSM indexes "
                         f"(31-bit points, 32-bit digits)")
    return n


@dataclass
class SortedDigits:
    """The non-zero signed digits of scalars, sorted by bucket key (``sort_digits``)."""

    plan: Plan       # its sets: one per window sorted, or one with window tables
    entries: Any     # uint32 (slots,): point index | sign << 31, in key order; unused past
                     # the last digit
    ends: object     # uint32 (keys + 1,), keys = sets·buckets: ends[k] is one past bucket
                     # k's last slot (the scatter's cursors); from ends[keys - 1] on, padding
    ready: object    # cupy Event recorded after the sort, for other streams to wait on
    weight_from: int = 0  # the window whose weight the first set's sum takes (0 with tables)


def sort_digits(scalars, n: int, device_id: int, p: Plan, table_stride: int = 0,
                mark=lambda step: None, others: int | None = None,
                windows: range | None = None, tuning: MsmTuning = TUNING) -> SortedDigits:
    """Counting sort of the digits of ``scalars[:n]`` on the current stream: histogram
    (atomics), prefix sum, scatter (staged from ``tuning.staged_scatter_digits`` slots on);
    ``table_stride``: the bases' (``MsmBases.table_stride``).
    With ``others`` (``Ones.others``) the ones are summed apart and get no digits, and
    the slots are for the others' digits alone. ``windows``: a window group's alone
    (``window_groups``; all of ``p``'s by default). ``mark(step)`` is called after each step
    is queued (see ``phase_times``)."""
    cupy = _cupy()
    windows = range(p.windows) if windows is None else windows
    if not table_stride:
        p = dataclasses.replace(p, sets=len(windows))
    keys = p.sets * p.buckets
    u32 = np.uint32
    sizes = (u32(n), u32(p.c), u32(windows.start), u32(windows.stop), u32(table_stride),
             u32(others is not None))
    counts = cupy.zeros(keys + 1, dtype=cupy.uint32)
    _kernel("msm_count", device_id)(_blocks(n), (THREADS,), (scalars, *sizes, counts))
    mark("count")
    offsets = cupy.cumsum(counts, dtype=cupy.uint32)  # bucket k starts at offsets[k]
    del counts
    mark("prefix_sum")
    # room for every digit (the host does not wait for the count); slots past the non-zero
    # ones are padding, which level 0 finds past the last bucket's end
    slots = (n if others is None else others) * len(windows)
    entries = cupy.empty(slots, dtype=cupy.uint32)
    # the scatter advances each bucket's offset past its digits: offsets become the ends
    if slots >= tuning.staged_scatter_digits:
        _staged_scatter(scalars, sizes, offsets, entries, device_id, tuning)
    else:
        _kernel("msm_scatter", device_id)(_blocks(n), (THREADS,),
                                          (scalars, *sizes, offsets, entries))
    mark("scatter")
    ready = cupy.cuda.Event(block=False, disable_timing=True)
    ready.record()
    return SortedDigits(p, entries, offsets, ready, 0 if table_stride else windows.start)


def bin_shift(keys: int, tuning: MsmTuning = TUNING) -> int:
    """log2 of the keys in a bin of the staged scatter: the fewest that make at most
    ``tuning.scatter_bins`` bins (and ``MAX_BINS``, what shared memory holds)."""
    bins = max(1, min(tuning.scatter_bins, MAX_BINS))
    return max(0, -(-keys // bins) - 1).bit_length()


def _staged_scatter(scalars, sizes: tuple, offsets, entries, device_id: int,
                    tuning: MsmTuning) -> None:
    """msm_scatter in two passes (msm.cu: msm_scatter_bins, msm_scatter_staged): the same
    entries in each bucket (in another order) and the same ends in ``offsets``. Plain
    bases stage their windows in turns of at most ``tuning.staging_slots`` slots, each turn
    a window range of its own (keys from its first window: ``offsets`` from its first key
    on); tabled ones, whose windows share their buckets, in one turn."""
    cupy = _cupy()
    u32 = np.uint32
    n, c, w_lo, w_hi, table_stride = (int(v) for v in sizes[:5])
    windows = range(w_lo, w_hi)
    per_window = entries.size // len(windows)  # slots: at most a digit a scalar and window
    turns = [windows] if table_stride else staging_turns(windows, per_window, tuning)
    staged = cupy.empty(per_window * max(map(len, turns)), dtype=cupy.uint64)
    per_block = BIN_THREADS * tuning.bin_scalars
    for turn in turns:
        first = 0 if table_stride else (turn.start - w_lo) << (c - 1)
        last = offsets.size - 1 if table_stride else (turn.stop - w_lo) << (c - 1)
        shift = bin_shift(last - first, tuning)
        # each bin's first slot in the staging buffer, which starts at the turn's first
        bin_cursor = offsets[first:last:1 << shift] - offsets[first]
        total = offsets[last:last + 1] - offsets[first]  # the turn's digits
        _kernel("msm_scatter_bins", device_id)(
            (-(-n // per_block),), (BIN_THREADS,),
            (scalars, u32(n), u32(c), u32(turn.start), u32(turn.stop), *sizes[4:],
             u32(tuning.bin_scalars), u32(shift), u32(bin_cursor.size), bin_cursor, staged))
        _kernel("msm_scatter_staged", device_id)(
            _blocks(per_window * len(turn)), (THREADS,),
            (staged, total, offsets[first:], entries))


@dataclass
class Ones:
    """A scalar vector's ones (``split_ones``): their indices (the first ``count`` rows of
    ``indices``, in no particular order) and how many scalars are neither 0 nor 1."""

    indices: object  # uint32 (n,) on the device
    count: int
    others: int


def split_ones(vectors, device_id: int, stream) -> list[Ones]:
    """``Ones`` of each ``(scalars, n)`` (contiguous) from one ``msm_split_ones`` each on
    ``stream``. The window size and the sort's slots depend on the counts, so the host
    waits for them here: one copy for all the vectors, after the work ``stream`` already
    holds (the GPU stays busy with that meanwhile)."""
    cupy = _cupy()
    counts = cupy.zeros((len(vectors), 2), dtype=cupy.uint32)
    listed = []
    with stream:
        for (scalars, n), row in zip(vectors, counts):
            listed.append(cupy.empty(n, dtype=cupy.uint32))
            _kernel("msm_split_ones", device_id)(_blocks(n), (THREADS,),
                                                 (scalars, np.uint32(n), listed[-1], row))
        found = counts.get(stream=stream)
    return [Ones(indices, int(ones), int(others))
            for indices, (ones, others) in zip(listed, found)]


def ones_sum(bases: MsmBases, ones: Ones, tuning: MsmTuning = TUNING):
    """Queue Σ bases[i] over the listed ones on the current stream, without buckets: a
    thread adds ``tuning.level0_chunk`` of them (mixed additions), then the partial sums
    are reduced as a window's runs are; (1, XYZZ) on the device, Montgomery form."""
    cupy = _cupy()
    per = tuning.level0_chunk(ones.count)
    threads = -(-ones.count // per)
    rows = -(-threads // REDUCE_THREADS) * REDUCE_THREADS  # zeros past the threads: infinity
    partials = cupy.zeros((rows, 4 * bases.words), dtype=cupy.uint64)
    _kernel(f"msm_ones_g{bases.group}", bases.device_id)(
        _blocks(threads), (THREADS,),
        (bases.xy, ones.indices, np.uint32(ones.count), np.uint32(per), partials))
    return _sum_runs(partials, 1, rows, bases.group, bases.device_id)


def window_sums(bases: MsmBases, digits: SortedDigits, mark=lambda step: None,
                tuning: MsmTuning = TUNING):
    """Queue the bucket sums and the reductions on the current stream; return the sum of
    each bucket set (XYZZ, Montgomery) on the device: one per window, or one with tables."""
    cupy = _cupy()
    group, words, dev, p = bases.group, bases.words, bases.device_id, digits.plan
    point_words = 4 * words  # XYZZ
    u32 = np.uint32

    # level 0 reads the sort's bucket ends, later levels the keys each level lists
    length = digits.entries.size
    source: tuple[Any, ...] = (bases.xy, digits.entries)
    keys: tuple[Any, ...] = (digits.ends, u32(p.sets * p.buckets))
    chunk = tuning.level0_chunk(length)
    level = f"msm_bucket_level0_g{group}"

    buckets = cupy.zeros((p.sets * p.buckets, point_words), dtype=cupy.uint64)  # zeros: infinity
    while True:
        chunks = -(-length // chunk)
        next_points = cupy.empty((2 * chunks, point_words), dtype=cupy.uint64)
        next_keys = cupy.empty(2 * chunks, dtype=cupy.uint32)
        _kernel(level, dev)(_blocks(chunks), (THREADS,),
                            (*source, *keys, u32(length), u32(chunk), buckets,
                             next_points, next_keys))
        if chunks == 1:
            break
        length, source, keys = 2 * chunks, (next_points,), (next_keys,)
        level, chunk = f"msm_bucket_level_g{group}", tuning.later_chunk
    del source, keys, next_points, next_keys
    mark("buckets")

    runs = p.sets * p.runs_per_window
    run_sums = cupy.empty((runs, point_words), dtype=cupy.uint64)
    _kernel(f"msm_reduce_segments_g{group}", dev)(
        _blocks(runs), (THREADS,),
        (buckets, u32(p.bucket_bits), u32(p.run_bits), u32(runs), run_sums))
    del buckets
    mark("reduce_segments")

    sums = _sum_runs(run_sums, p.sets, p.runs_per_window, group, dev)
    mark("reduce_windows")
    return sums


def _sum_runs(run_sums, sets: int, runs: int, group: int, device_id: int):
    """Each set's sum of its ``runs`` consecutive XYZZ points, a block a set (a multiple of
    REDUCE_THREADS runs where that is REDUCE_THREADS² or more: a single set's runs are
    first summed in REDUCE_THREADS groups, so that more than one block works on them)."""
    cupy = _cupy()
    groups = REDUCE_THREADS if sets == 1 and runs >= REDUCE_THREADS ** 2 else 1
    reduce_windows = _kernel(f"msm_reduce_windows_g{group}", device_id)
    for count, per in ((sets * groups, runs // groups), (sets, groups)):
        sums = cupy.empty((count, run_sums.shape[1]), dtype=cupy.uint64)
        reduce_windows((count,), (REDUCE_THREADS,), (run_sums, np.uint32(per), sums))
        run_sums = sums
        if groups == 1:
            break
    return sums


def combine_windows(window_sums: np.ndarray, group: int, c: int,
                    first_window: int = 0) -> G1Point | G2Point:
    """Σ_w 2^(c·(first_window + w))·window_w from the device's XYZZ window sums (Montgomery
    form), on the host.

    The weighting is ~255 dependent doublings: one GPU thread runs them at the latency of its
    carry chains (4 ms for G1, 13 ms for G2 measured on the H200), arkworks' multiexp over
    the handful of window sums in a fraction of a millisecond. Affine x = X/ZZ, y = Y/ZZZ
    (the Montgomery factor R cancels in each ratio), with one batched inversion mod q: an
    Fq2 value z is inverted through its norm, 1/z = z̄ / (z·z̄)."""
    per = FIELD_WORDS[group] // 6  # Fq values per coordinate
    flat = limbs_to_ints(window_sums.reshape(-1, 6))
    rows = [[flat[i + k * per:i + (k + 1) * per] for k in range(4)]
            for i in range(0, len(flat), 4 * per)]
    finite = [row for row in rows if any(row[2])]
    inverses = iter(batch_inverse([_norm(z) for row in finite for z in row[2:]], FQ_MODULUS))
    coords = []
    for X, Y, ZZ, ZZZ in rows:
        if not any(ZZ):
            coords.extend([0] * (2 * per))
        else:
            coords.extend(_over(X, ZZ, next(inverses)) + _over(Y, ZZZ, next(inverses)))
    xy = fq_to_limbs(coords).reshape(len(rows), 2 * FIELD_WORDS[group])
    weights = _window_weights(c, len(rows), first_window)
    if group == 1:
        return G1Point.multiexp_unchecked([point_from_xy(row, 1) for row in xy], weights)
    return G2Point.multiexp_unchecked([point_from_xy(row, 2) for row in xy], weights)


def _norm(z: list[int]) -> int:
    """z for Fq, z·z̄ = z0² + z1² for Fq2 = Fq[u]/(u² + 1) (non-zero for z ≠ 0)."""
    return sum(v * v for v in z) % FQ_MODULUS if len(z) == 2 else z[0]


def _over(v: list[int], z: list[int], norm_inverse: int) -> list[int]:
    """v / z given 1/norm(z): v·z̄·(1/norm) in Fq2, v·(1/z) in Fq."""
    q = FQ_MODULUS
    if len(z) == 1:
        return [v[0] * norm_inverse % q]
    (v0, v1), (z0, z1) = v, z
    return [(v0 * z0 + v1 * z1) * norm_inverse % q, (v1 * z0 - v0 * z1) * norm_inverse % q]


@lru_cache(maxsize=None)
def _window_weights(c: int, windows: int, first: int) -> list:
    return scalars_from_ints(pow(2, c * w, FR_MODULUS) for w in range(first, first + windows))


def phase_times(bases: MsmBases, scalars, stream=None,
                tuning: MsmTuning = TUNING) -> dict[str, float]:
    """Milliseconds of each MSM step (CUDA events between the launches), for benchmarks;
    ``combine_host`` is the host's copies and weighting."""
    import time

    cupy = _cupy()
    n = _check_scalars(bases, scalars, cupy)
    stream = stream or cupy.cuda.get_current_stream()
    events = [("start", cupy.cuda.Event())]
    with cupy.cuda.Device(bases.device_id), stream:
        events[0][1].record(stream)

        def mark(step: str) -> None:
            event = cupy.cuda.Event()
            event.record(stream)
            events.append((step, event))

        scalars, parts, ones = cupy.ascontiguousarray(scalars), [], None
        if tuning.split_ones:
            ones = split_ones([(scalars, n)], bases.device_id, stream)[0]
            mark("split_ones")
        if ones is not None and ones.count:
            parts.append((ones_sum(bases, ones, tuning), 0, 0))
            mark("ones_sum")
        others = n if ones is None else ones.others
        p = bases.plan_for(others, tuning)
        for windows in window_groups(p, others, tuning) if others else ():
            digits = sort_digits(scalars, n, bases.device_id, p, bases.table_stride, mark,
                                 None if ones is None else others, windows, tuning)
            parts.append((window_sums(bases, digits, mark, tuning), p.c, digits.weight_from))
            del digits
        events[-1][1].synchronize()
    times: dict[str, float] = {}  # a step's time summed over the window groups
    for (_, prev), (step, event) in zip(events, events[1:]):
        times[step] = times.get(step, 0.0) + cupy.cuda.get_elapsed_time(prev, event)
    started = time.perf_counter()
    _sum_parts(bases.group, bases.words, parts, stream)
    times["combine_host"] = 1e3 * (time.perf_counter() - started)
    return times
