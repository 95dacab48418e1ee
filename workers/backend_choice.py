"""Which prover backend a process proves on: one rule for the CLI, the worker (its bootstep
and its runtime) and the local cluster.

    cpu    the CPU backend; no GPU is looked at
    gpu    the GPU backend; if it cannot start, ``BackendUnavailable`` saying why
    auto   the GPU backend if it starts, else the CPU backend, saying why

"Starts" means everything proving needs: CuPy imports, a device is visible and every kernel
compiles (NVRTC). A device that is visible but whose kernels do not compile is not usable,
so under ``auto`` that process proves on the CPU instead of failing every partition. Where
CUDA must stay out of the asking process (a Celery parent before its pool forks, the CLI
before it starts a worker) the question goes to a child (``gpu_binding.probe_gpu``); a
process that proves asks by making the backend (``make_backend``).

Key setup follows the same choice: ``fixed_base_for`` gives the GPU's batch k·G to a
process that proves on the GPU (a 2^20 key: ~40 s instead of > 5 min on the CPU).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from snark.backend import BackendUnavailable, ProverBackend

if TYPE_CHECKING:
    from snark.groth16 import FixedBaseMul

log = logging.getLogger(__name__)

SETTINGS = ("auto", "cpu", "gpu")

#: ``(True, what started)`` or ``(False, why the GPU backend cannot start)``.
GpuCheck = Callable[[], tuple[bool, str]]


@dataclass(frozen=True)
class BackendChoice:
    name: Literal["cpu", "gpu"]
    #: One line: why this backend (for a fallback: why not the GPU).
    reason: str
    #: ``auto`` looked for the GPU and did not find it usable: worth a warning.
    fell_back: bool = False


def choose_backend(setting: str, gpu_check: GpuCheck | None) -> BackendChoice:
    """The rule. ``gpu_check`` None: this process has no GPU to use (a worker without
    ``--gpu``), so the CPU backend whatever the setting."""
    if setting not in SETTINGS:
        raise ValueError(f"backend: {setting!r} is not one of {', '.join(SETTINGS)}")
    if setting == "cpu":
        return BackendChoice("cpu", "PROOFQ_BACKEND=cpu")
    if gpu_check is None:
        return BackendChoice("cpu", "no GPU asked for")
    usable, reason = gpu_check()
    if usable:
        return BackendChoice("gpu", reason)
    if setting == "gpu":
        raise BackendUnavailable(reason)
    return BackendChoice("cpu", reason, fell_back=True)


def make_backend(setting: str, device_id: int | None = None,
                 table_budget_bytes: int | None = 0, device_steps: bool = True,
                 vram_budget_bytes: int | None = None, share_keys: bool = False) -> ProverBackend:
    """The backend this process proves on, started here (CUDA starts in this process);
    ``table_budget_bytes``: the GPU's MSM window tables (``Settings.msm_table_bytes``);
    ``device_steps``: with the proof types' own steps on the GPU (porep's witness,
    ``Settings.witness_on_device``); ``vram_budget_bytes``: beyond it the GPU streams MSM
    bases from the host (``Settings.vram_budget_bytes``); ``share_keys``: keys loaded from a
    directory held through the GPU's keeper, one device copy for all its processes
    (``Settings.shared_keys``)."""
    started: list[ProverBackend] = []

    def start_gpu() -> tuple[bool, str]:
        import gpu

        try:
            started.append(gpu.get_backend(device_id, table_budget_bytes, device_steps,
                                           vram_budget_bytes=vram_budget_bytes,
                                           share_keys=share_keys))
        except BackendUnavailable as exc:
            return False, str(exc)
        return True, "the GPU backend started"

    choice = choose_backend(setting, start_gpu)
    if choice.name == "gpu":
        return started[0]
    if choice.fell_back:
        log.warning("%s; proving on the CPU (PROOFQ_BACKEND=auto)", choice.reason)
    from snark.cpu_backend import CpuBackend

    return CpuBackend()


def fixed_base_for(backend: ProverBackend) -> "FixedBaseMul":
    """Key setup's batch k·G on the device ``backend`` proves on (the current CUDA device)."""
    if backend.name == "gpu":
        from gpu.fixed_base import GpuFixedBase

        return GpuFixedBase()
    from snark.groth16 import CpuFixedBase

    return CpuFixedBase()
