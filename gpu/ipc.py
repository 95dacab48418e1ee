"""Device arrays one process allocates and other processes of the same GPU use, through
CUDA IPC handles (the key keeper's export, docs/ARCHITECTURE.md §8).

A handle names a whole ``cudaMalloc`` allocation, while CuPy's pool carves many arrays out
of one: arrays meant for export are therefore made under ``own_allocations``, where each
one is an allocation of its own (a view's offset into it travels too). The importer opens
each allocation once and closes it when it lets the arrays go; the exporter must keep the
allocation alive until every importer has closed it (the keeper counts its holders).
Descriptions are plain JSON: no pickle crosses the process boundary.
"""

from __future__ import annotations

import contextlib

import numpy as np


@contextlib.contextmanager
def own_allocations():
    """Arrays made in this thread inside get an allocation each, outside CuPy's pool (so
    one handle covers one array, and freeing the array gives its memory back to the
    device at once)."""
    import cupy

    def allocate(nbytes: int):
        return cupy.cuda.MemoryPointer(cupy.cuda.Memory(nbytes), 0)

    with cupy.cuda.using_allocator(allocate):
        yield


def export(array) -> dict:
    """``array`` (made under ``own_allocations``) as JSON another process can open."""
    import cupy

    base = array.data.mem.ptr
    handle = bytes(cupy.cuda.runtime.ipcGetMemHandle(base))
    return {"handle": handle.hex(), "offset": array.data.ptr - base,
            "bytes": array.data.mem.size, "shape": list(array.shape),
            "strides": list(array.strides), "dtype": array.dtype.str}


class Imports:
    """The allocations this process opened for one holder (a shared key): each opened
    once, however many arrays view it; ``close`` lets them all go (no array made by
    ``open`` may be used after)."""

    def __init__(self) -> None:
        self._opened: dict[str, int] = {}  # handle → the allocation's address here

    def open(self, description: dict):
        import cupy

        handle = description["handle"]
        pointer = self._opened.get(handle)
        if pointer is None:
            pointer = self._opened[handle] = cupy.cuda.runtime.ipcOpenMemHandle(
                bytes.fromhex(handle))
        memory = cupy.cuda.UnownedMemory(pointer, int(description["bytes"]), self)
        dtype = np.dtype(description["dtype"])
        return cupy.ndarray(tuple(description["shape"]), dtype,
                            cupy.cuda.MemoryPointer(memory, int(description["offset"])),
                            strides=tuple(description["strides"]))

    def close(self) -> None:
        opened, self._opened = self._opened, {}
        if not opened:
            return
        import cupy

        for pointer in opened.values():
            cupy.cuda.runtime.ipcCloseMemHandle(pointer)
