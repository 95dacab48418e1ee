"""``import gpu`` works without CUDA; availability is reported with a reason, never raised."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gpu
from snark.backend import BackendUnavailable


@pytest.mark.slow
def test_import_needs_no_cupy():
    code = ("import sys; sys.modules['cupy'] = None; import gpu; ok, why = gpu.available(); "
            "assert not ok and 'CuPy' in why, why; print(why)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "not importable" in result.stdout


def test_available_and_get_backend_agree():
    """``available`` answers without making a backend; its "no" is get_backend's refusal."""
    ok, why = gpu.available()
    if ok:
        assert gpu.get_backend().name == "gpu"
    else:
        with pytest.raises(BackendUnavailable) as refused:
            gpu.get_backend()
        assert str(refused.value) == why


def test_get_backend_without_cupy_raises_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(BackendUnavailable, match="CuPy"):
        gpu.get_backend()


def test_device_id_out_of_range_is_unavailable():
    ok, _ = gpu.available()
    with pytest.raises(BackendUnavailable):
        gpu.get_backend(10_000 if ok else None)


def test_uuid_format_keeps_zero_bytes():
    from gpu.device import format_uuid

    raw = bytes.fromhex("59f1799b206ce8113d3e00b793064179")
    assert format_uuid(raw) == "GPU-59f1799b-206c-e811-3d3e-00b793064179"


def test_uuid_without_a_driver_library_falls_back():
    """Where libcuda cannot be loaded the driver path declines (None) instead of raising."""
    import ctypes

    from gpu.device import _driver_uuid

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        _driver_uuid.cache_clear()
        assert _driver_uuid(0) is None
    else:
        pytest.skip("libcuda is present here")
