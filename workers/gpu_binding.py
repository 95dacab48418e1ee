"""Which device a worker process owns, and the identity its locks and ledger are keyed by.

A worker serves one GPU. ``pin_process`` restricts CUDA to that GPU through
``CUDA_VISIBLE_DEVICES`` — it must run before anything initialises CUDA, after which the GPU
is device 0 inside the process. Locks are keyed by host name and GPU UUID (stable across
processes and reboots, unlike an index that depends on the visible-device list). A CPU
worker gets the pseudo-UUID ``cpu-N`` for "GPU N", so several CPU processes can stand in for
workers sharing one GPU; without a GPU number each CPU process is a device of its own
(``cpu_devices`` makes them share a few instead).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from workers.locks import GpuId


class BindingError(RuntimeError):
    """The requested GPU cannot be bound; the message says why."""


@dataclass(frozen=True)
class Binding:
    gpu: GpuId
    device_id: int | None    # CUDA device inside this process (0 after pinning); None on CPU
    total_bytes: int         # device memory (host RAM for the CPU backend), read once

    @property
    def label(self) -> str:
        return self.gpu.uuid


def host_name() -> str:
    return socket.gethostname()


#: Set with the pin, so a child process (fork or spawn) sees its parent already pinned.
PINNED_ENV = "PROOFQ_PINNED_GPU"


def pin_process(number: int) -> None:
    """Make GPU ``number`` the only CUDA device of this process (device 0).

    If a launcher already narrowed ``CUDA_VISIBLE_DEVICES``, ``number`` indexes that list.
    Pinning again to the same GPU (here or in a parent) is a no-op; to another one, an
    error, since CUDA may already be up.
    """
    if number < 0:
        raise BindingError(f"gpu: {number} is not a GPU number (expected >= 0)")
    pinned = os.environ.get(PINNED_ENV)
    if pinned is not None:
        if pinned != str(number):
            raise BindingError(f"gpu {number}: this process is already pinned to gpu {pinned}")
        return
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        entries = [v.strip() for v in visible.split(",") if v.strip()]
        if not 0 <= number < len(entries):
            raise BindingError(f"gpu {number}: CUDA_VISIBLE_DEVICES={visible!r} lists "
                               f"{len(entries)} device(s)")
        os.environ["CUDA_VISIBLE_DEVICES"] = entries[number]
    else:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(number)
    os.environ[PINNED_ENV] = str(number)


def bind_gpu(number: int) -> Binding:
    """Pin to GPU ``number`` and read its UUID and total memory once."""
    pin_process(number)
    from gpu import device

    return Binding(GpuId(host_name(), device.uuid(0)), 0, device.total_memory(0))


def bind_cpu(number: int | None, *, devices: int | None = None) -> Binding:
    """A CPU worker: standing in for GPU ``number`` (pseudo-UUID ``cpu-N``, shared by every
    process given that number), or else a "device" of its own (``cpu.p<pid>``), or one of
    ``devices`` per host (``cpu.<pid mod devices>``) when the CPU worker processes of a host
    are to take turns."""
    if number is not None and number < 0:
        raise BindingError(f"gpu: {number} is not a GPU number (expected >= 0)")
    if number is not None:
        uuid = f"cpu-{number}"
    elif devices is None:
        uuid = f"cpu.p{os.getpid()}"
    else:
        uuid = f"cpu.{os.getpid() % devices}"
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return Binding(GpuId(host_name(), uuid), None, ram)


#: Run in a child: pin GPU argv[1], start the backend on it (CUDA, NVRTC, every kernel).
_PROBE = """
import sys
from workers.gpu_binding import pin_process
pin_process(int(sys.argv[1]))
import gpu
try:
    gpu.get_backend(0)
except gpu.BackendUnavailable as exc:
    sys.exit(str(exc))
"""


def probe_gpu(number: int, timeout_s: float = 600.0) -> tuple[bool, str]:
    """Can GPU ``number`` run the backend? ``(True, "")`` or ``(False, why not)``.

    It runs in a child process, so the caller (a Celery parent before it forks its pool)
    never initialises CUDA, which a forked child could not use. The child also fills the
    kernel cache the pool processes then load from.
    """
    root = Path(__file__).resolve().parents[1]
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE, str(number)], cwd=root,
                              capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False, f"gpu {number}: the backend did not start within {timeout_s:g} s"
    if done.returncode == 0:
        return True, ""
    lines = done.stderr.strip().splitlines()
    return False, f"gpu {number}: {lines[-1] if lines else f'exit status {done.returncode}'}"
