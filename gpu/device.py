"""Which CUDA device this process uses, and the facts about it read once at start.

``CUDA_VISIBLE_DEVICES`` is honoured by the CUDA runtime itself: an explicit ``device_id``
indexes the devices it leaves visible, and ``None`` means the first of them. Nothing here
runs on the proving path: the worker runtime calls these when it starts.
"""

from __future__ import annotations

import functools
import os

from snark.backend import BackendUnavailable


def cupy_or_reason():
    """``(cupy, None)`` when CuPy imports, else ``(None, why)``; never raises."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install raising at import
        return None, f"CuPy is not importable ({type(exc).__name__}: {exc})"
    return cupy, None


def device_count() -> tuple[int, str | None]:
    """How many devices are visible, or 0 and the reason none can be used."""
    cupy, reason = cupy_or_reason()
    if cupy is None:
        return 0, reason
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, no device, driver/runtime mismatch
        return 0, f"no usable CUDA device ({type(exc).__name__}: {exc})"
    if count == 0:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        return 0, "no CUDA device is visible" + (
            f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else "")
    return count, None


def resolve(device_id: int | None) -> int:
    """The device index to use, or ``BackendUnavailable`` naming why there is none."""
    count, reason = device_count()
    if count == 0:
        raise BackendUnavailable(reason)
    index = 0 if device_id is None else int(device_id)
    if not 0 <= index < count:
        raise BackendUnavailable(f"device_id {index} is out of range: {count} device(s) visible")
    return index


@functools.lru_cache(maxsize=None)
def _properties(device_id: int) -> dict:
    import cupy
    return cupy.cuda.runtime.getDeviceProperties(device_id)


def name(device_id: int) -> str:
    raw = _properties(device_id)["name"]
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def uuid(device_id: int) -> str:
    """``GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx``, the form ``nvidia-smi -L`` prints.

    CuPy's device properties hand the 16 UUID bytes over as a C string, cut at the first
    zero byte (seen on an H200 whose UUID has 0x00 as its 11th byte), so the driver is
    asked directly; the properties are only the fallback where libcuda cannot be loaded.
    """
    raw = _driver_uuid(device_id)
    if raw is None:
        raw = bytes(_properties(device_id)["uuid"])
    return format_uuid(raw)


def format_uuid(raw: bytes) -> str:
    h = raw.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


@functools.lru_cache(maxsize=None)
def _driver_uuid(device_id: int) -> bytes | None:
    """The UUID's 16 bytes from ``cuDeviceGetUuid`` (ordinals as the runtime numbers them,
    i.e. within ``CUDA_VISIBLE_DEVICES``), or ``None`` where the driver library is absent."""
    import ctypes

    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        get_uuid = getattr(libcuda, "cuDeviceGetUuid_v2", None) or libcuda.cuDeviceGetUuid
    except (OSError, AttributeError):
        return None
    device = ctypes.c_int()
    out = (ctypes.c_ubyte * 16)()  # a byte array, not a string: zero bytes are data
    if (libcuda.cuInit(0) or libcuda.cuDeviceGet(ctypes.byref(device), device_id)
            or get_uuid(out, device)):
        return None
    return bytes(out)


def total_memory(device_id: int) -> int:
    """Device memory in bytes (the VRAM budget's upper bound)."""
    return int(_properties(device_id)["totalGlobalMem"])
