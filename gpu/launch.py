"""Kernel launches whose arguments are packed once and replayed through the driver.

CuPy converts every argument of every call: ~8 µs of host time for a launch of twelve,
while a whole 2^16 NTT runs in ~30 µs on an H200, so a transform's first kernel started
a quarter of its time late (bench/NOTES.md, issue 26). A ``PackedLaunch`` converts its
arguments once into 8-byte slots and, per call, writes only the leading pointers that
change (an NTT pass's source and destination) before one ``cuLaunchKernel``, called in
libcuda through ctypes rather than CuPy's wrapper (one NTT call timed alone on the H200:
2^20 0.2993 → 0.2878 ms, 2^16..2^24 1–4% lower; bench/NOTES.md, issue 26). The driver
copies the arguments when the launch is queued, so the slots may be rewritten at once.
"""

from __future__ import annotations

import ctypes
import functools
import threading

import numpy as np

SLOT_BYTES = 8


def argument_slots(args) -> np.ndarray:
    """Each kernel argument in its own 8-byte slot, as the kernel reads it: a device
    array as its pointer, a NumPy scalar of up to 8 bytes as its little-endian bytes at
    the slot's start (a ``uint32`` parameter reads the first four)."""
    slots = np.zeros(len(args), dtype=np.uint64)
    raw = slots.view(np.uint8).reshape(len(args), SLOT_BYTES)
    for i, arg in enumerate(args):
        data = getattr(arg, "data", None)
        if hasattr(data, "ptr"):  # a CuPy array
            slots[i] = data.ptr
        elif isinstance(arg, np.generic) and arg.dtype.itemsize <= SLOT_BYTES:
            value = np.asarray(arg).astype(arg.dtype.newbyteorder("<"))
            raw[i, :arg.dtype.itemsize] = np.frombuffer(value.tobytes(), dtype=np.uint8)
        else:
            raise TypeError(f"kernel argument {i}: {type(arg).__name__} is neither a device "
                            f"array nor a NumPy scalar of at most {SLOT_BYTES} bytes")
    return slots


def slot_addresses(slots: np.ndarray) -> np.ndarray:
    """The ``void*[]`` the driver takes: the address of each slot."""
    return slots.ctypes.data + SLOT_BYTES * np.arange(len(slots), dtype=np.uint64)


@functools.lru_cache(maxsize=1)
def driver() -> ctypes.CDLL:
    """libcuda with the prototypes used here (the process's CUDA context is CuPy's)."""
    lib = ctypes.CDLL("libcuda.so.1")
    dims = [ctypes.c_uint] * 7
    lib.cuLaunchKernel.argtypes = [ctypes.c_void_p, *dims, ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_void_p]
    lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    return lib


def check(what: str, status: int) -> None:
    if status != 0:
        name = ctypes.c_char_p()
        driver().cuGetErrorName(status, ctypes.byref(name))
        raise RuntimeError(f"{what}: {(name.value or b'CUDA error').decode()} ({status})")


class PackedLaunch:
    """One kernel with its grid, block, dynamic shared bytes and arguments fixed, except
    its first ``live`` arguments, which each call passes as device pointers."""

    def __init__(self, kernel, grid: tuple[int, ...], block: tuple[int, ...],
                 shared_bytes: int, args, live: int) -> None:
        self._function = kernel.kernel.ptr  # the CUfunction behind the cupy.RawKernel
        self._dims = (*grid, *(1,) * (3 - len(grid)), *block, *(1,) * (3 - len(block)))
        self._shared = shared_bytes
        self._args = tuple(args)  # keeps the arrays the slots point into alive
        self._live = live
        self._slots = argument_slots(self._args)
        self._addresses = slot_addresses(self._slots)
        self._params = self._addresses.ctypes.data
        self._launch = driver().cuLaunchKernel
        self._lock = threading.Lock()

    def __call__(self, stream_ptr: int, *pointers: int) -> None:
        if len(pointers) != self._live:
            raise TypeError(f"packed launch: {len(pointers)} pointers for {self._live} live "
                            f"arguments")
        with self._lock:
            for i, pointer in enumerate(pointers):
                self._slots[i] = pointer
            status = self._launch(self._function, *self._dims, self._shared, stream_ptr,
                                  self._params, None)  # extra: NULL
        if status:
            check("cuLaunchKernel", status)
