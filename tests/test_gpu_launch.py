"""``gpu.launch``: the kernel arguments packed as the driver reads them (run everywhere;
the launches themselves run under every GPU NTT test)."""

from __future__ import annotations

import ctypes
from types import SimpleNamespace

import numpy as np
import pytest

from gpu.launch import SLOT_BYTES, argument_slots, slot_addresses


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
