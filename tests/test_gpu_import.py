"""``import gpu`` works without CUDA; availability is reported with a reason, never raised."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gpu
from snark.backend import BackendUnavailable


def test_import_needs_no_cupy():
    code = ("import sys; sys.modules['cupy'] = None; import gpu; ok, why = gpu.available(); "
            "assert not ok and 'CuPy' in why, why; print(why)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "not importable" in result.stdout


def test_available_gives_a_reason():
    ok, why = gpu.available()
    assert isinstance(ok, bool) and why


def test_get_backend_without_cupy_raises_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(BackendUnavailable, match="CuPy"):
        gpu.get_backend()


def test_device_id_out_of_range_is_unavailable():
    ok, _ = gpu.available()
    with pytest.raises(BackendUnavailable):
        gpu.get_backend(10_000 if ok else None)
