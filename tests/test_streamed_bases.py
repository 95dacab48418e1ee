"""Streamed MSM bases on the host: chunk planning, the ring's event ordering (replayed on a
simulated timeline), which bases stream within a budget and what the ledger is told, and
the shared host segment (one copy across processes, removed by the last). The MSMs
themselves: tests/test_gpu_streamed.py."""

from __future__ import annotations

import multiprocessing
import os

import numpy as np
import pytest

from gpu.backend import extra_bytes, residency_plan, table_choice
from gpu.msm import MsmBases
from gpu.spmv_plan import matrix_bytes
from gpu.streamed_bases import (Ring, SegmentFull, SharedRows, chunk_bounds, rows_digest,
                                stream_choice, write_rows)
from snark import groth16
from snark.curve import PointArray
from snark.keys import POINT_BASES
from tests.circuits import random_circuit
from workers.ledger import key_bytes


# -- chunks -----------------------------------------------------------------------------
@pytest.mark.parametrize("trial", range(20))
def test_chunks_cover_the_rows_once_in_order_with_a_ragged_tail(rng, trial):
    rows, chunk = rng.randrange(0, 5000), rng.randrange(1, 700)
    bounds = chunk_bounds(rows, chunk)
    assert [i for lo, hi in bounds for i in range(lo, hi)] == list(range(rows))
    assert all(hi - lo == chunk for lo, hi in bounds[:-1])
    assert len(bounds) == -(-rows // chunk)
    if bounds:
        assert 0 < bounds[-1][1] - bounds[-1][0] <= chunk


def test_chunks_refuse_an_empty_chunk():
    with pytest.raises(ValueError):
        chunk_bounds(10, 0)


# -- the ring's ordering, replayed ------------------------------------------------------
class Timeline:
    """Streams as lists of operations; events as (stream, position); a stream's wait makes
    its next operation happen after the recorded one. ``after(a, b)``: a's op ordered
    after b's by stream order and waits (a happens-before DAG)."""

    def __init__(self) -> None:
        self.ops = []     # (stream, label)
        self.edges = {}   # op → ops it must follow
        self.last = {}    # stream → its last op
        self.pending = {}  # stream → ops its next op must follow (waits)

    def op(self, stream, label) -> int:
        index = len(self.ops)
        self.ops.append((stream, label))
        before = set(self.pending.pop(stream, set()))
        if stream in self.last:
            before.add(self.last[stream])
        self.edges[index], self.last[stream] = before, index
        return index

    def record(self, stream):
        return self.last.get(stream)

    def wait(self, stream, event) -> None:
        if event is not None:
            self.pending.setdefault(stream, set()).add(event)

    def after(self, a: int, b: int) -> bool:
        seen, todo = set(), [a]
        while todo:
            for prev in self.edges[todo.pop()]:
                if prev == b:
                    return True
                if prev not in seen:
                    seen.add(prev)
                    todo.append(prev)
        return False


@pytest.mark.parametrize("buffers", [1, 2, 3])
def test_the_ring_copies_into_a_buffer_only_after_its_readers_and_reads_after_its_copy(
        rng, buffers):
    """Chunks of several bases on several compute streams, as ``msm_many`` queues them:
    every kernel reading a buffer follows that chunk's copy, and every copy into a buffer
    follows the kernels of the chunk that held it before — across calls too."""
    t = Timeline()
    copies = {}

    def copy(view, address, nbytes, stream):
        copies[address] = t.op(stream, ("copy", address))

    ring = Ring([np.zeros(64, dtype=np.uint8) for _ in range(buffers)], "copy", t.record,
                t.wait, copy)
    readers = []  # (buffer, copy op, last kernel op)
    address = 0
    for _call in range(2):
        for stream in ("g1-a", "g2", "g1-b"):
            for _ in range(rng.randrange(1, 6)):
                address += 1
                slot = ring.acquire(address, 1, 8)
                t.wait(stream, slot.ready)
                first = t.op(stream, ("to_mont", address))
                t.op(stream, ("sort", address))
                last = t.op(stream, ("window_sums", address))
                ring.release(slot, stream)
                readers.append((slot.buffer, copies[address], first, last))
    assert len({b for b, *_ in readers}) == buffers
    for i, (buffer, copy_op, first, _last) in enumerate(readers):
        assert t.after(first, copy_op), f"chunk {i} read before its copy"
        earlier = [r for r in readers[:i] if r[0] == buffer]
        if earlier:
            assert t.after(copy_op, earlier[-1][3]), f"chunk {i} overwrote a buffer in use"


def test_the_timeline_catches_a_missing_wait():
    """The checker can fail: a copy not told to wait is not ordered after the kernels."""
    t = Timeline()
    c0 = t.op("copy", "c0")
    t.wait("k", t.record("copy"))
    k0 = t.op("k", "k0")
    c1 = t.op("copy", "c1")  # no wait for k0
    assert t.after(k0, c0) and not t.after(c1, k0)


# -- which bases stream, and the ledger -------------------------------------------------
@pytest.fixture(scope="module")
def key(module_rng):
    return groth16.setup(random_circuit(num_inputs=3, num_constraints=400,
                                        rng=module_rng).compile())


def _sizes(key):
    return {n: MsmBases.nbytes(getattr(key, n), key.r1cs.num_inputs if n == "l_g1" else 0)
            for n in POINT_BASES}


def _matrices(key):
    return sum(matrix_bytes(m) for m in (key.r1cs.a, key.r1cs.b, key.r1cs.c))


def test_stream_choice_streams_the_largest_until_the_rest_fit(rng):
    sizes = {f"b{i}": rng.randrange(1, 1000) for i in range(6)}
    total = sum(sizes.values())
    assert stream_choice(sizes, total) == set()
    for _ in range(30):
        allowance = rng.randrange(-10, total)
        streamed = stream_choice(sizes, allowance)
        held = total - sum(sizes[n] for n in streamed)
        assert held <= allowance or len(streamed) == len(sizes)
        assert all(sizes[s] >= sizes[k] for s in streamed for k in set(sizes) - streamed)
        smallest = min(streamed, key=sizes.get)  # streaming one fewer would not fit
        assert held + sizes[smallest] > allowance


def test_no_budget_keeps_every_basis_resident_with_tables_as_before(key):
    assert residency_plan(key, None, 1 << 40, 3 << 30) == (set(), table_choice(key, 1 << 40))


def test_a_budget_that_holds_the_key_streams_nothing(key):
    whole = _matrices(key) + sum(_sizes(key).values())
    assert residency_plan(key, whole, 0, 1 << 20) == (set(), {})
    streamed, _ = residency_plan(key, whole - 1, 0, 0)
    assert streamed == {max(_sizes(key), key=_sizes(key).get)}


def test_a_tight_budget_streams_the_largest_bases_and_counts_the_ring(key):
    sizes, ring = _sizes(key), 4096
    ordered = sorted(sizes, key=lambda n: -sizes[n])
    room = sizes[ordered[-1]] + sizes[ordered[-2]]  # room for the two smallest beside the ring
    streamed, tables = residency_plan(key, _matrices(key) + ring + room, 1 << 40, ring)
    assert streamed == set(ordered[:-2]) and tables == {}
    streamed, _ = residency_plan(key, _matrices(key) + ring + room - 1, 1 << 40, ring)
    assert streamed == set(ordered[:-1])
    assert residency_plan(key, 1, 0, ring)[0] == set(POINT_BASES)


def test_a_transient_key_streams_every_basis_whatever_the_budget(key, rng):
    """Its device part is its matrices and the ring alone (what the ledger is told)."""
    ring = rng.randrange(1, 1 << 30)
    whole = _matrices(key) + sum(_sizes(key).values())
    for budget in (None, whole, 10 * whole, rng.randrange(1, whole)):
        assert residency_plan(key, budget, 1 << 40, ring, transient=True) == (set(POINT_BASES),
                                                                              {})
    assert key_bytes(key) + extra_bytes(key, set(POINT_BASES), 0, ring) == _matrices(key) + ring


def test_the_ledger_is_told_the_ring_and_not_the_streamed_bases(key):
    """key_bytes + extra = the matrices, the resident bases and the ring: what the device
    holds."""
    ring = 3 << 20
    streamed = {"h_g1", "l_g1"}
    held = key_bytes(key) + extra_bytes(key, streamed, 0, ring)
    resident = sum(getattr(key, n).xy.nbytes for n in POINT_BASES if n not in streamed)
    assert held == _matrices(key) + resident + ring
    assert extra_bytes(key, set(), 123, ring) == 123  # nothing streams: no ring


# -- the shared host segment ------------------------------------------------------------
def _points(np_rng, n, group=1):
    width = (2, 6) if group == 1 else (2, 2, 6)
    xy = np_rng.integers(0, 2**63, size=(n, *width), dtype=np.uint64)
    inf = np_rng.random(n) < 0.2
    xy[inf] = 0
    return PointArray(group, xy, inf)


def test_rows_put_the_leading_infinities_first_and_zero_infinity(np_rng):
    points = _points(np_rng, 50, group=2)
    points.xy[points.inf] = 7  # an infinity's limbs are not trusted: the row is zeroed
    rows = np_rng.integers(1, 2**63, size=(53, 24), dtype=np.uint64)  # a reused segment
    write_rows(rows, points, 3)
    assert not rows[:3].any()
    points.xy[points.inf] = 0
    assert np.array_equal(rows[3:], points.xy.reshape(50, 24))
    assert not rows[3:][points.inf].any()


def test_the_digest_names_the_rows_and_their_layout(np_rng):
    points = _points(np_rng, 100)
    assert rows_digest(points) == rows_digest(PointArray(1, points.xy.copy(), points.inf.copy()))
    other = points.xy.copy()
    other[np_rng.integers(100)].flat[np_rng.integers(12)] ^= np.uint64(1)
    assert rows_digest(PointArray(1, other, points.inf)) != rows_digest(points)
    assert rows_digest(points, 1) != rows_digest(points)


def _fill_from(rows_source):
    def fill(rows):
        rows[:] = rows_source
    return fill


def test_a_segment_is_built_once_shared_and_removed_by_the_last(tmp_path, np_rng):
    source = np_rng.integers(0, 2**64, size=(300, 12), dtype=np.uint64)
    builds = []

    def fill(rows):
        builds.append(1)
        rows[:] = source

    first = SharedRows.open("seg", source.shape, fill, tmp_path)
    second = SharedRows.open("seg", source.shape, fill, tmp_path)
    assert len(builds) == 1
    assert np.array_equal(first.rows, source) and np.array_equal(second.rows, source)
    assert os.stat(tmp_path / "seg").st_size == source.nbytes
    first.close()
    assert (tmp_path / "seg").exists()  # the second still maps it
    second.close()
    assert not (tmp_path / "seg").exists()
    third = SharedRows.open("seg", source.shape, fill, tmp_path)  # built again
    assert len(builds) == 2 and np.array_equal(third.rows, source)
    third.close()


def test_a_segment_of_another_shape_is_refused(tmp_path, np_rng):
    source = np_rng.integers(0, 2**64, size=(10, 12), dtype=np.uint64)
    held = SharedRows.open("seg", source.shape, _fill_from(source), tmp_path)
    with pytest.raises(ValueError, match="expected"):
        SharedRows.open("seg", (11, 12), _fill_from(source), tmp_path)
    held.close()


def test_a_segment_larger_than_the_directory_has_room_for_is_refused(tmp_path):
    free = os.statvfs(tmp_path).f_bavail * os.statvfs(tmp_path).f_frsize
    with pytest.raises(SegmentFull):
        SharedRows.open("seg", (free // 96 + 1, 12), _fill_from(0), tmp_path)
    assert not (tmp_path / "seg").exists()


def test_a_failed_build_leaves_nothing(tmp_path):
    def fail(rows):
        raise RuntimeError("simulated")

    with pytest.raises(RuntimeError):
        SharedRows.open("seg", (4, 12), fail, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["seg.lock"]


def _child(directory, shape, seed, ready, go, out):
    rows = np.random.default_rng(seed).integers(0, 2**64, size=shape, dtype=np.uint64)

    def fill(target):
        out.put("built")
        target[:] = rows

    segment = SharedRows.open("seg", shape, fill, directory)
    out.put(bool(np.array_equal(segment.rows, rows)))
    ready.set()
    go.wait(60)
    segment.close()


def test_processes_of_a_host_share_one_copy(tmp_path, np_rng):
    """Two processes open the segment at once: one builds it, both read the same rows
    (one file, one inode), and it is gone once both have let go."""
    context = multiprocessing.get_context("spawn")
    shape, seed = (2000, 12), int(np_rng.integers(2**32))
    out, go = context.Queue(), context.Event()
    readies = [context.Event() for _ in range(2)]
    children = [context.Process(target=_child, args=(tmp_path, shape, seed, r, go, out))
                for r in readies]
    for child in children:
        child.start()
    for ready in readies:
        assert ready.wait(120)
    assert (tmp_path / "seg").exists()
    go.set()
    for child in children:
        child.join(120)
        assert child.exitcode == 0
    said = [out.get(timeout=10) for _ in range(3)]
    assert sorted(map(str, said)) == ["True", "True", "built"]
    assert not (tmp_path / "seg").exists()
