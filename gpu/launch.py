"""A transform's kernels as one CUDA graph, launched with one driver call.

A whole NTT call timed alone from an idle device (as sppark's bench times its own) paid
the host's time to reach each launch: at 2^16, two kernels of ~12 µs each took 34.7 µs
through one ``cuLaunchKernel`` a pass and 26.3 µs as one graph launch, against 25 µs of
kernels (docs/decisions/6-ntt-graphs.md). So a ``LaunchGraph`` holds kernels that run one after
another, each with its arguments packed once into 8-byte slots, as an instantiated graph;
a call passes the device pointers that change from call to call (an NTT's source and
destination), rewrites the kernel nodes only when those differ from the last call's, and
launches the graph on the caller's stream. The graph is built through the driver (ctypes),
in the process's CUDA context (CuPy's), and launched through CuPy's runtime binding.
"""

from __future__ import annotations

import ctypes
import functools
import threading
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

SLOT_BYTES = 8


def argument_slots(args) -> np.ndarray:
    """Each kernel argument in its own 8-byte slot, as the kernel reads it: a device
    array as its pointer, a NumPy scalar of up to 8 bytes as its little-endian bytes at
    the slot's start (a ``uint32`` parameter reads the first four)."""
    slots = np.zeros(len(args), dtype=np.uint64)
    raw = slots.view(np.uint8).reshape(len(args), SLOT_BYTES)
    for i, arg in enumerate(args):
        pointer = getattr(getattr(arg, "data", None), "ptr", None)
        if pointer is not None:  # a CuPy array
            slots[i] = pointer
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


class KernelNodeParams(ctypes.Structure):
    """``CUDA_KERNEL_NODE_PARAMS_v2`` of cuda.h (what the ``_v2`` graph calls take)."""

    _fields_ = [("func", ctypes.c_void_p), ("grid", ctypes.c_uint * 3),
                ("block", ctypes.c_uint * 3), ("shared_bytes", ctypes.c_uint),
                ("kernel_params", ctypes.c_void_p), ("extra", ctypes.c_void_p),
                ("kern", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]


class GraphEdgeData(ctypes.Structure):
    """``CUgraphEdgeData`` of cuda.h."""

    _fields_ = [("from_port", ctypes.c_ubyte), ("to_port", ctypes.c_ubyte),
                ("type", ctypes.c_ubyte), ("reserved", ctypes.c_ubyte * 5)]


#: A programmatic edge (cuda.h: CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC out of the upstream
#: kernel, CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC): the downstream kernel may launch once
#: every upstream block has started it (``griddepcontrol.launch_dependents``) or exited,
#: and waits for the upstream's completion where it says (``griddepcontrol.wait``).
PROGRAMMATIC_EDGE = GraphEdgeData(from_port=1, to_port=0, type=1)


@functools.lru_cache(maxsize=1)
def driver() -> ctypes.CDLL:
    """libcuda with the prototypes used here."""
    lib = ctypes.CDLL("libcuda.so.1")
    handle, out = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    params = ctypes.POINTER(KernelNodeParams)
    prototypes = {
        "cuGraphCreate": [out, ctypes.c_uint],
        "cuGraphAddKernelNode_v2": [out, handle, out, ctypes.c_size_t, params],
        "cuGraphAddDependencies_v2": [handle, out, out, ctypes.POINTER(GraphEdgeData),
                                      ctypes.c_size_t],
        "cuGraphInstantiateWithFlags": [out, handle, ctypes.c_ulonglong],
        "cuGraphExecKernelNodeSetParams_v2": [handle, handle, params],
        "cuGraphExecDestroy": [handle],
        "cuGraphDestroy": [handle],
        "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
    }
    for name, argtypes in prototypes.items():
        getattr(lib, name).argtypes = argtypes
    return lib


def check(what: str, status: int) -> None:
    if status != 0:
        name = ctypes.c_char_p()
        driver().cuGetErrorName(status, ctypes.byref(name))
        raise RuntimeError(f"{what}: {(name.value or b'CUDA error').decode()} ({status})")


@dataclass
class Kernel:
    """One kernel of a graph: a ``cupy.RawKernel``'s function, its grid, block and dynamic
    shared bytes, and its arguments, of which those at ``live`` (positions into a call's
    pointers, one per leading argument) are that call's device pointers."""

    kernel: Any        # a cupy.RawKernel (CuPy is untyped)
    grid: tuple[int, ...]
    block: tuple[int, ...]
    shared_bytes: int
    args: tuple
    live: tuple[int, ...]

    def node_params(self, addresses: np.ndarray) -> KernelNodeParams:
        pad = (1, 1, 1)
        return KernelNodeParams(
            func=self.kernel.kernel.ptr, grid=(ctypes.c_uint * 3)(*(self.grid + pad)[:3]),
            block=(ctypes.c_uint * 3)(*(self.block + pad)[:3]),
            shared_bytes=self.shared_bytes, kernel_params=addresses.ctypes.data)


class _Node:
    """A kernel's slots, the parameters pointing at them, and its node in the graph."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.slots = argument_slots(kernel.args)
        self.addresses = slot_addresses(self.slots)
        self.params = kernel.node_params(self.addresses)
        self.handle = ctypes.c_void_p()

    def point(self, pointers: tuple[int, ...]) -> None:
        for slot, which in enumerate(self.kernel.live):
            self.slots[slot] = pointers[which]


def _destroy(graph: ctypes.c_void_p, graph_exec: ctypes.c_void_p) -> None:
    """Free a graph (a finalizer: at interpreter exit the driver may be gone already)."""
    lib = driver()
    if graph_exec.value:
        lib.cuGraphExecDestroy(graph_exec)
    if graph.value:
        lib.cuGraphDestroy(graph)


class LaunchGraph:
    """Kernels that run in order, as one instantiated graph; ``graph(stream, *pointers)``
    launches them on ``stream`` with each kernel's live arguments taken from ``pointers``.
    ``programmatic`` joins them by programmatic edges (kernels that start early and wait
    with ``griddepcontrol``), else by full dependencies."""

    def __init__(self, kernels: list[Kernel], programmatic: bool = False) -> None:
        lib = driver()
        self._nodes = [_Node(k) for k in kernels]
        self._graph, self._exec = ctypes.c_void_p(), ctypes.c_void_p()
        weakref.finalize(self, _destroy, self._graph, self._exec)
        check("cuGraphCreate", lib.cuGraphCreate(ctypes.byref(self._graph), 0))
        for i, node in enumerate(self._nodes):
            after = i > 0 and not programmatic
            check("cuGraphAddKernelNode", lib.cuGraphAddKernelNode_v2(
                ctypes.byref(node.handle), self._graph,
                ctypes.byref(self._nodes[i - 1].handle) if after else None, int(after),
                ctypes.byref(node.params)))
            if i > 0 and programmatic:
                check("cuGraphAddDependencies", lib.cuGraphAddDependencies_v2(
                    self._graph, ctypes.byref(self._nodes[i - 1].handle),
                    ctypes.byref(node.handle), ctypes.byref(PROGRAMMATIC_EDGE), 1))
        check("cuGraphInstantiate",
              lib.cuGraphInstantiateWithFlags(ctypes.byref(self._exec), self._graph, 0))
        self._set = lib.cuGraphExecKernelNodeSetParams_v2
        self._exec_handle = self._exec.value
        self._pointers: tuple[int, ...] | None = None
        self._lock = threading.Lock()

    def __call__(self, stream_ptr: int, *pointers: int) -> None:
        import cupy

        with self._lock:
            if pointers != self._pointers:
                self._pointers = None  # until every node has taken the new pointers
                for node in self._nodes:
                    node.point(pointers)
                    check("cuGraphExecKernelNodeSetParams",
                          self._set(self._exec, node.handle, ctypes.byref(node.params)))
                self._pointers = pointers
            # CuPy's compiled binding: ~1 µs less host time before the kernels than ctypes
            cupy.cuda.runtime.graphLaunch(self._exec_handle, stream_ptr)
