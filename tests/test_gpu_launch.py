"""``gpu.launch``: the kernel arguments and graph nodes laid out as the driver reads them
(run everywhere; the graphs themselves run under every GPU NTT test)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest

from gpu.launch import (PROGRAMMATIC_EDGE, SLOT_BYTES, GraphEdgeData, KernelNodeParams,
                        argument_slots, slot_addresses)


def device_array(ptr: int):
    """What ``argument_slots`` reads of a CuPy array: its ``data.ptr``."""
    return SimpleNamespace(data=SimpleNamespace(ptr=ptr))


def test_each_argument_sits_in_its_slot_as_the_kernel_reads_it(np_rng):
    ptr = int(np_rng.integers(1, 1 << 62)) & ~0xff
    small, wide = np.uint32(np_rng.integers(0, 1 << 32)), np.uint64(np_rng.integers(0, 1 << 63))
    slots = argument_slots([device_array(ptr), small, wide, np.uint64(0)])
    raw = slots.view(np.uint8).reshape(4, SLOT_BYTES)
    assert int(slots[0]) == ptr
    assert int.from_bytes(raw[1, :4].tobytes(), "little") == int(small)  # a uint32 reads 4
    assert int(slots[2]) == int(wide)
    assert int(slots[3]) == 0


def test_the_driver_finds_each_slot_at_its_address(np_rng):
    values = [np.uint64(v) for v in np_rng.integers(0, 1 << 63, 12)]
    slots = argument_slots(values)
    for address, value in zip(slot_addresses(slots), values):
        assert ctypes.c_uint64.from_address(int(address)).value == int(value)
    slots[0] = 12345  # a live pointer rewritten in place is what the driver then reads
    assert ctypes.c_uint64.from_address(int(slot_addresses(slots)[0])).value == 12345


@pytest.mark.parametrize("arg", [7, 1.5, np.zeros(3), "x"])
def test_an_argument_of_no_fixed_size_is_refused(arg):
    with pytest.raises(TypeError, match="kernel argument 1"):
        argument_slots([np.uint32(1), arg])


def c_layout(tmp_path, struct: str, fields: list[str]) -> list[int]:
    """Offsets of ``fields`` in cuda.h's ``struct``, then its size (compiled with nvcc)."""
    source = tmp_path / "layout.cpp"
    source.write_text("#include <cstdio>\n#include <cstddef>\n#include <cuda.h>\nint main() {\n"
                      + "".join(f'  printf("%zu\\n", offsetof({struct}, {c}));\n'
                                for c in fields)
                      + f'  printf("%zu\\n", sizeof({struct}));\n}}\n')
    binary = tmp_path / "layout"
    subprocess.run(["nvcc", str(source), "-o", str(binary)], check=True)
    return [int(v) for v in subprocess.run([str(binary)], check=True, capture_output=True,
                                           text=True).stdout.split()]


def py_layout(struct) -> list[int]:
    return [getattr(struct, name).offset for name, _ in struct._fields_] + [ctypes.sizeof(struct)]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (and its cuda.h)")
def test_graph_structures_lay_out_as_cuda_h(tmp_path):
    """Every field of the structures the graph calls take at cuda.h's offset, and the same
    size: the driver reads them by those offsets."""
    assert py_layout(KernelNodeParams) == c_layout(
        tmp_path, "CUDA_KERNEL_NODE_PARAMS_v2",
        ["func", "gridDimX", "blockDimX", "sharedMemBytes", "kernelParams", "extra", "kern",
         "ctx"])
    assert py_layout(GraphEdgeData) == c_layout(
        tmp_path, "CUgraphEdgeData", ["from_port", "to_port", "type", "reserved"])


def test_the_programmatic_edge_has_cuda_h_values():
    assert (PROGRAMMATIC_EDGE.from_port, PROGRAMMATIC_EDGE.to_port, PROGRAMMATIC_EDGE.type) \
        == (1, 0, 1)  # CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC, -, ..._DEPENDENCY_TYPE_PROGRAMMATIC


def test_a_kernel_node_points_at_its_slots(np_rng):
    """The node's parameters carry the function, the padded grid and block, the shared bytes
    and the address of the slot addresses; its live slots take a call's pointers."""
    from gpu.launch import Kernel, _Node

    function = int(np_rng.integers(1, 1 << 48))
    kernel = Kernel(SimpleNamespace(kernel=SimpleNamespace(ptr=function)), (37,), (128,),
                    8192, (np.uint64(0), np.uint64(0), np.uint32(5)), live=(1, 0))
    node = _Node(kernel)
    p = node.params
    assert (p.func, list(p.grid), list(p.block), p.shared_bytes) == (function, [37, 1, 1],
                                                                     [128, 1, 1], 8192)
    assert p.kernel_params == node.addresses.ctypes.data and not p.extra
    src, dst = (int(v) & ~0xff for v in np_rng.integers(1, 1 << 62, 2))
    node.point((src, dst))
    read = [ctypes.c_uint64.from_address(int(a)).value
            for a in np.frombuffer(ctypes.string_at(p.kernel_params, 24), dtype=np.uint64)]
    assert read[:2] == [dst, src] and read[2] & 0xffffffff == 5
