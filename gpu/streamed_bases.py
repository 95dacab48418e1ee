"""MSM bases that stay in host memory and stream to the device in chunks (issue 24 item 3).

Where a key's bases do not fit the device's budget, or the key's device part is transient
(``gpu.backend``), a basis's affine rows (standard form, infinity rows zero, its leading
infinities included) live in a *shared host segment*: a file in ``/dev/shm`` named by a
digest of the rows, mapped by every process of the host that proves under the key, so the
host holds one copy whatever the number of workers, and page-locked in each
(``cudaHostRegister``) so copies from it are DMA at the link's speed. Each process holds a
shared ``flock`` on the segment while it maps it; the last one to let go removes it
(creation and removal serialise on a lock file). Where the directory has no room (a
container's 64 MiB /dev/shm), the rows go to this process's own pinned buffer instead: the
same MSMs, one copy per process. The pinned rows (``HostBases``) are the key's host part and
the ring its device part: ``StreamedBases`` pairs them for one residency, so a key's device
part can go while its rows stay.

An MSM over streamed bases runs chunk by chunk through a small ring of device buffers:
chunk i+1's rows are copied on the ring's copy stream while chunk i's kernels run, each
ordered by CUDA events only — the copy into a buffer waits for the event recorded after
the last kernels that read it, the kernels wait for the event recorded after their copy.
Nothing on this path synchronises the device, asks how much memory is free or trims the
pool. Each chunk is an MSM of its own over its slice of the scalars (``gpu.msm``'s digit
sort and window sums on a view of the buffer); the chunks' points are added on the host.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import logging
import mmap
import os
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from snark.curve import PointArray

log = logging.getLogger(__name__)

#: Where the host segments live (tmpfs: memory, not disk).
SEGMENT_DIR = Path("/dev/shm")
#: Device buffers of the ring: one being read by kernels, one being filled, one ready.
RING_BUFFERS = 3
#: Bytes of one ring buffer: 11 M G1 rows (5.6 M G2), a chunk MSM of ~0.1 s that its copy
#: (~20 ms over PCIe 5) hides behind.
RING_BUFFER_BYTES = 1 << 30
_DIGEST_BLOCK = 1 << 28  # bytes hashed per thread task
_CUDA_HOST_REGISTER_PORTABLE = 1


def row_bytes(group: int) -> int:
    """Bytes of one affine row (x, y) of the group."""
    return 96 if group == 1 else 192


def chunk_bounds(rows: int, chunk_rows: int) -> list[tuple[int, int]]:
    """``[(lo, hi), …]`` covering ``range(rows)`` in chunks of ``chunk_rows`` (the last
    one ragged)."""
    if chunk_rows <= 0:
        raise ValueError(f"chunk_rows: {chunk_rows} is not positive")
    return [(lo, min(lo + chunk_rows, rows)) for lo in range(0, rows, chunk_rows)]


def stream_choice(bases_bytes: dict[str, int], allowance: int) -> set[str]:
    """The bases to stream so that the rest fit ``allowance`` bytes: the largest first
    (each one streamed takes the most off the device for the same per-chunk overheads)."""
    streamed, held = set(), sum(bases_bytes.values())
    for name in sorted(bases_bytes, key=lambda n: (-bases_bytes[n], n)):
        if held <= allowance:
            break
        streamed.add(name)
        held -= bases_bytes[name]
    return streamed


def write_rows(rows: np.ndarray, points: PointArray, leading_infinity: int = 0) -> None:
    """Fill ``rows`` (``(leading_infinity + len(points), 2·words)`` uint64, a segment) in
    place: ``leading_infinity`` zero rows, then the points (standard form; infinity rows
    zero, the kernels' marker)."""
    rows[:leading_infinity] = 0
    rows[leading_infinity:] = np.asarray(points.xy, dtype=np.uint64).reshape(len(points), -1)
    rows[leading_infinity:][points.inf] = 0


def rows_digest(points: PointArray, leading_infinity: int = 0) -> str:
    """A digest naming the segment of ``host_rows(points, leading_infinity)``: blocks of the
    rows hashed on threads (hashlib lets go of the GIL), then the blocks' digests."""
    raw = memoryview(np.ascontiguousarray(points.xy)).cast("B")
    inf = np.ascontiguousarray(points.inf, dtype=bool).tobytes()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        blocks = pool.map(lambda lo: hashlib.blake2b(raw[lo:lo + _DIGEST_BLOCK],
                                                     digest_size=16).digest(),
                          range(0, len(raw), _DIGEST_BLOCK))
        top = hashlib.blake2b(f"g{points.group}:{leading_infinity}:{len(points)}".encode(),
                              digest_size=16)
        for digest in blocks:
            top.update(digest)
    top.update(hashlib.blake2b(inf, digest_size=16).digest())
    return top.hexdigest()


class SegmentFull(OSError):
    """The segment directory has no room for the rows (a container's small /dev/shm):
    touching pages of a tmpfs file beyond its size would kill the process (SIGBUS)."""


class PrivateRows:
    """The fallback where no segment fits: this process's own pinned buffer
    (``cupy.cuda.alloc_pinned_memory``), the same rows, not shared."""

    path = None

    def __init__(self, shape: tuple[int, int], fill) -> None:
        import cupy

        self.nbytes = shape[0] * shape[1] * 8
        self._memory = cupy.cuda.alloc_pinned_memory(max(self.nbytes, 1))
        self.rows = np.frombuffer(self._memory, dtype=np.uint64,
                                  count=shape[0] * shape[1]).reshape(shape)
        fill(self.rows)
        self.pinned = True  # already page-locked: nothing to register

    @property
    def address(self) -> int:
        return self.rows.ctypes.data

    def close(self) -> None:
        self.rows = self._memory = None


class SharedRows:
    """One host segment, mapped: ``rows`` is a ``(count, width)`` uint64 view of it.

    ``SharedRows.open(name, shape, fill)`` maps the segment ``name`` of that shape,
    made by ``fill(rows)`` into a fresh file when no process holds it yet."""

    def __init__(self, path: Path, fd: int, shape: tuple[int, int]) -> None:
        self.path = path
        self._fd = fd
        nbytes = shape[0] * shape[1] * 8
        self._map = mmap.mmap(fd, max(nbytes, 1), mmap.MAP_SHARED,
                              mmap.PROT_READ | mmap.PROT_WRITE)
        self.rows = np.frombuffer(self._map, dtype=np.uint64, count=shape[0] * shape[1]
                                  ).reshape(shape)
        self.nbytes = nbytes
        self.pinned = False  # cudaHostRegister'ed by its user

    @property
    def address(self) -> int:
        return self.rows.ctypes.data

    @classmethod
    def open(cls, name: str, shape: tuple[int, int], fill, directory: Path = SEGMENT_DIR
             ) -> "SharedRows":
        path = directory / name
        nbytes = shape[0] * shape[1] * 8
        with _creation_lock(path):
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:
                room = os.statvfs(directory)
                if room.f_bavail * room.f_frsize < nbytes:
                    raise SegmentFull(f"{directory}: {room.f_bavail * room.f_frsize} bytes "
                                      f"free, {nbytes} needed for {name}") from None
                fd = cls._build(path, shape, fill)
            size = os.fstat(fd).st_size
            if size != max(nbytes, 1):
                os.close(fd)
                raise ValueError(f"{path}: {size} bytes, expected {nbytes}")
            fcntl.flock(fd, fcntl.LOCK_SH)  # held while mapped: the segment's users count
        return cls(path, fd, shape)

    @classmethod
    def _build(cls, path: Path, shape: tuple[int, int], fill) -> int:
        building = path.with_name(path.name + ".building")  # a crashed build's is truncated
        fd = os.open(building, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.ftruncate(fd, max(shape[0] * shape[1] * 8, 1))
            made = cls(building, fd, shape)
            fill(made.rows)
            made._unmap()
            os.rename(building, path)
        except BaseException:
            os.close(fd)
            building.unlink(missing_ok=True)
            raise
        return fd

    def _unmap(self) -> None:
        self.rows = None
        self._map.close()

    def close(self) -> None:
        """Unmap; the last process to hold the segment removes it."""
        if self._fd < 0:
            return
        self._unmap()
        with _creation_lock(self.path):
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.path.unlink(missing_ok=True)  # no other holder
            except BlockingIOError:
                pass
            os.close(self._fd)
            self._fd = -1


class _creation_lock:
    """An exclusive ``flock`` on ``<segment>.lock``: opening, building and removing a
    segment happen one process at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path.with_name(path.name + ".lock")

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc) -> None:
        os.close(self.fd)  # drops the lock


@dataclass
class RingSlot:
    """A buffer of the ring holding one chunk: ``ready`` once its copy is done."""

    buffer: int
    view: object   # the chunk's rows on the device, (rows, 2·words) uint64
    ready: object  # event recorded on the copy stream after the copy


@dataclass
class Ring:
    """Device buffers that chunks take in turn, and the events that order their reuse.

    ``record(stream)`` makes an event recorded on ``stream`` and ``wait(stream, event)``
    makes ``stream`` wait for it (CUDA's, or a test's simulation); ``copy(view, host
    address, nbytes, stream)`` queues the copy into a buffer's view."""

    buffers: list
    copy_stream: object
    record: object
    wait: object
    copy: object
    _next: int = 0
    _released: dict = field(default_factory=dict)  # buffer → event after its last readers

    @property
    def buffer_bytes(self) -> int:
        return self.buffers[0].nbytes

    @property
    def nbytes(self) -> int:
        return sum(b.nbytes for b in self.buffers)

    def acquire(self, address: int, rows: int, width: int) -> RingSlot:
        """Queue the copy of ``rows`` rows of ``width`` uint64 from pinned ``address`` into
        the next buffer, after the kernels that read it last."""
        index = self._next
        self._next = (index + 1) % len(self.buffers)
        if index in self._released:
            self.wait(self.copy_stream, self._released.pop(index))
        view = self.buffers[index][:rows * width * 8].view(np.uint64).reshape(rows, width)
        self.copy(view, address, rows * width * 8, self.copy_stream)
        return RingSlot(index, view, self.record(self.copy_stream))

    def release(self, slot: RingSlot, stream) -> None:
        """The kernels queued on ``stream`` so far are the last to read ``slot``'s buffer."""
        self._released[slot.buffer] = self.record(stream)


def device_ring(device_id: int, buffers: int = RING_BUFFERS,
                buffer_bytes: int = RING_BUFFER_BYTES) -> Ring:
    """A ring on the current device whose events, waits and copies are CUDA's."""
    import cupy

    def record(stream):
        event = cupy.cuda.Event(block=False, disable_timing=True)
        event.record(stream)
        return event

    def copy(view, address, nbytes, stream):
        view.data.copy_from_host_async(ctypes.c_void_p(address), nbytes, stream)

    with cupy.cuda.Device(device_id):
        return Ring([cupy.empty(buffer_bytes, dtype=cupy.uint8) for _ in range(buffers)],
                    cupy.cuda.Stream(non_blocking=True), record,
                    lambda stream, event: stream.wait_event(event), copy)


class HostBases:
    """A basis's rows in host memory, page-locked: the host's shared segment, or this
    process's own pinned buffer where the segment directory has no room.

    What a key keeps on the host while its device part comes and goes (``gpu.backend``:
    a transient key's bases are built into their segment once, for its first residency,
    and streamed through each residency's ring); ``close`` lets go of it."""

    def __init__(self, points: PointArray, leading_infinity: int = 0,
                 directory: Path = SEGMENT_DIR) -> None:
        import cupy

        from gpu.msm import FIELD_WORDS

        self.group = points.group
        self.words = FIELD_WORDS[points.group]
        self.leading_infinity = leading_infinity
        self.rows = leading_infinity + len(points)
        name = f"proofq-bases-{rows_digest(points, leading_infinity)}"
        shape = (self.rows, 2 * self.words)

        def fill(rows):
            write_rows(rows, points, leading_infinity)

        try:
            self.segment = SharedRows.open(name, shape, fill, directory)
        except SegmentFull as exc:
            log.warning("%s; streaming from this process's own pinned copy", exc)
            self.segment = PrivateRows(shape, fill)
        try:
            if self.segment.nbytes and not self.segment.pinned:
                cupy.cuda.runtime.hostRegister(self.segment.address, self.segment.nbytes,
                                               _CUDA_HOST_REGISTER_PORTABLE)
        except BaseException:
            self.segment.close()
            raise
        # A registration outliving its mapping would refuse the next mapping at that address
        # ("already registered"): one dropped without close() lets go of both when collected.
        self._release = weakref.finalize(self, _release_segment, self.segment)
        self._release.atexit = False  # at exit the process's end frees both

    def __len__(self) -> int:
        return self.rows

    def close(self) -> None:
        """Unpin and unmap the segment (removed by the last process that held it)."""
        self._release()


class StreamedBases:
    """``host``'s rows, MSM'd through ``ring`` chunk by chunk.

    Like ``gpu.msm.MsmBases`` to ``msm_many``: ``group``, ``words``, ``device_id``,
    ``leading_infinity``, ``len``; ``queue_window_sums`` instead of one bases array. The
    rows are the caller's (this only reads them): dropping these bases leaves them pinned
    for the next ring."""

    def __init__(self, host: HostBases, ring: Ring, device_id: int) -> None:
        self.host = host
        self.group = host.group
        self.words = host.words
        self.device_id = device_id
        self.leading_infinity = host.leading_infinity
        self.rows = host.rows
        self.ring = ring
        self.table = None
        self.chunk_rows = ring.buffer_bytes // row_bytes(self.group)

    def __len__(self) -> int:
        return self.rows

    @property
    def table_stride(self) -> int:
        return 0

    def queue_window_sums(self, scalars, n: int, tuning) -> list[tuple[object, int]]:
        """Queue the MSM of ``scalars[:n]`` over the first n rows on the current stream, a
        chunk at a time; ``[(window sums on the device, c, 0), …]``, one per chunk."""
        import cupy

        from gpu.msm import MsmBases, THREADS, _kernel, plan, sort_digits, window_sums

        stream = cupy.cuda.get_current_stream()
        to_mont = _kernel(f"msm_bases_to_mont_g{self.group}", self.device_id)
        width, parts = 2 * self.words, []
        address = self.host.segment.address
        for lo, hi in chunk_bounds(n, self.chunk_rows):
            rows = hi - lo
            slot = self.ring.acquire(address + lo * width * 8, rows, width)
            stream.wait_event(slot.ready)
            to_mont((-(-rows // THREADS),), (THREADS,), (slot.view, np.uint32(rows)))
            digits = sort_digits(scalars[lo:hi], rows, self.device_id, plan(rows, tuning),
                                 tuning=tuning)
            bases = MsmBases.on_device(slot.view, self.group, self.device_id)
            parts.append((window_sums(bases, digits, tuning=tuning), digits.plan.c, 0))
            self.ring.release(slot, stream)
        return parts


def _release_segment(segment) -> None:
    import cupy

    if segment.rows is not None and segment.nbytes and not segment.pinned:
        cupy.cuda.runtime.hostUnregister(segment.address)
    segment.close()
