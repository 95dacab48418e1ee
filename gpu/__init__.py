"""The GPU prover backend (CuPy + NVRTC kernels), docs/ARCHITECTURE.md §4.

Importing this package never touches CUDA or CuPy, so it works on machines without a GPU:
``available()`` says whether a backend can be made here and, if not, why;
``get_backend()`` makes one or raises ``BackendUnavailable`` with that reason.
"""

from __future__ import annotations

from snark.backend import BackendUnavailable

from gpu import device


def available() -> tuple[bool, str]:
    """``(True, what was found)`` or ``(False, why not)``; never raises."""
    count, reason = device.device_count()
    if count == 0:
        return False, reason or "no CUDA device visible"
    return True, f"{count} CUDA device(s) visible"


def get_backend(device_id: int | None = None, table_budget_bytes: int | None = 0,
                device_steps: bool = True, msm_tuning=None, vram_budget_bytes: int | None = None,
                share_keys: bool = False):
    """A ``GpuBackend`` on ``device_id`` (an index into the visible devices; ``None``: the
    first) that gives keys MSM window tables within ``table_budget_bytes`` (None: an eighth
    of the device's memory; ``gpu.backend``), with the proof types' device steps
    (``gpu.extensions``) unless ``device_steps`` is False; ``msm_tuning``: a
    ``gpu.msm.MsmTuning`` other than the default (benchmarks); ``vram_budget_bytes``: the
    VRAM ledger's budget, beyond which bases stream from the host (None: all resident);
    ``share_keys``: keys loaded from a directory are held through the GPU's key keeper
    (``gpu.shared_keys``)."""
    index = device.resolve(device_id)
    from cupy.cuda.compiler import CompileException

    from gpu.backend import GpuBackend
    from gpu.msm import TUNING

    try:
        return GpuBackend(index, table_budget_bytes, device_steps=device_steps,
                          msm_tuning=msm_tuning or TUNING, vram_budget_bytes=vram_budget_bytes,
                          share_keys=share_keys)
    except (ImportError, OSError, RuntimeError, CompileException) as exc:
        # NVRTC missing or refusing a kernel, driver errors: one line, not a traceback
        raise BackendUnavailable(f"GPU backend failed to start on device {index} "
                                 f"({type(exc).__name__}: {exc})") from exc


__all__ = ["BackendUnavailable", "available", "get_backend", "device"]
