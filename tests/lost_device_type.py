"""``toy-lost-device``: ``toy-product`` (``tests.product_type``) whose worker loses its device
context once a host: the first unit any of its processes proves writes that process's pid
to ``PROOFQ_TOY_LOST_DEVICE_MARKER`` and loses the context. On a GPU backend the loss is
real (a kernel writes through a null pointer, and CUDA refuses the process every call
after); on the CPU backend ``DeviceLost`` is raised as the GPU backend raises it. What the
pipeline does with the process afterwards (give the work back, end the process, its pool
start another) is real either way (``bench/chaos.py``'s ``lost`` scenario)."""

from __future__ import annotations

import os

from pydantic_settings import SettingsConfigDict

from snark.backend import DeviceLost, ProverBackend
from snark.keys import ProvingKey
from snark.plugins import ProofTypePlugin
from snark.proof_types import Storage
from snark.unit_work import HostWitness
from tests.product_type import ProductJob, ProductSettings, ProductType
from tests.product_worker import ProductWorker


class LostDeviceSettings(ProductSettings):
    """``PROOFQ_TOY_LOST_DEVICE_MARKER``: the file whose creation marks the one loss."""

    model_config = SettingsConfigDict(env_prefix="PROOFQ_TOY_LOST_DEVICE_", extra="forbid")

    marker: str = ""


class LostDeviceType(ProductType):
    name = "toy-lost-device"


class LostDeviceWorker(ProductWorker):
    def __init__(self, storage: Storage, settings: LostDeviceSettings) -> None:
        super().__init__(storage, settings)
        self.marker = settings.marker

    def work(self, job_input: ProductJob, unit: int, key: ProvingKey,
             backend: ProverBackend) -> HostWitness:
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return super().work(job_input, unit, key, backend)
        with os.fdopen(fd, "w") as marker:
            marker.write(str(os.getpid()))
        if getattr(backend, "name", "") == "gpu":
            lose_context(backend)  # raises DeviceLost through the backend
        raise DeviceLost("GPU 0: cudaErrorIllegalAddress (a test's loss: this process's CUDA "
                         "context is lost)")


#: A kernel that writes through a null pointer.
FAULT = r'extern "C" __global__ void fault(int* p) { p[threadIdx.x] = 1; }'


def lose_context(backend) -> None:
    """Fault a kernel on ``backend``'s device and stream: its ``on_device`` turns the
    sticky CUDA error into ``DeviceLost``."""
    import cupy

    kernel = cupy.RawKernel(FAULT, "fault")
    with backend.on_device():
        kernel((1,), (32,), (cupy.uint64(0),))
        backend.stream.synchronize()


PLUGIN = ProofTypePlugin(LostDeviceType(), worker="tests.lost_device_type:LostDeviceWorker",
                         settings="tests.lost_device_type:LostDeviceSettings")
