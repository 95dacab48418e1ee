"""CUDA sources of ``gpu/kernels`` compiled by NVRTC through ``cupy.RawModule``, per process.

The text handed to NVRTC is the ``.cu`` file with its local ``#include "…"`` headers
expanded in place (each once, as ``#pragma once`` would). CuPy's on-disk cache keys on
the source text, so a change to a header recompiles every kernel that includes it. The
CI compile test feeds the same files to ``nvcc -I gpu/kernels``. CuPy picks the target
architecture from the current device.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"
NVRTC_OPTIONS = ("-std=c++17",)

_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$', re.MULTILINE)
_PRAGMA_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once[ \t]*$", re.MULTILINE)


def expanded_source(name: str) -> str:
    """``name`` (relative to ``gpu/kernels``) with its local headers inlined."""
    return _expand(KERNEL_DIR / name, set())


def _expand(path: Path, seen: set[Path]) -> str:
    if path in seen:
        return ""
    seen.add(path)
    text = _PRAGMA_ONCE.sub("", path.read_text())

    def include(match: re.Match) -> str:
        header = (path.parent / match.group(1)).resolve()
        return f'// ---- {match.group(1)}\n{_expand(header, seen)}\n// ---- end {match.group(1)}'

    return _LOCAL_INCLUDE.sub(include, text)


@functools.lru_cache(maxsize=None)
def load(name: str, device_id: int):
    """The compiled module of ``name`` for ``device_id`` (compiled on first use)."""
    import cupy

    with cupy.cuda.Device(device_id):
        module = cupy.RawModule(code=expanded_source(name), options=NVRTC_OPTIONS)
        module.compile()
    return module


def function(name: str, kernel: str, device_id: int):
    """One ``extern "C"`` kernel of a source file."""
    return load(name, device_id).get_function(kernel)
