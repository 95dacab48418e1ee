"""``toy-lost-device``: ``toy-product`` (``tests.product_type``) whose worker loses its device
context once a host: the first unit any of its processes proves raises ``DeviceLost``, as a
kernel fault or an uncorrectable ECC error raises it from a GPU backend, and writes that
process's pid to ``PROOFQ_TOY_LOST_DEVICE_MARKER``. What the pipeline does with the process
afterwards (give the work back, end the process, its pool start another) is real."""

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
        raise DeviceLost("GPU 0: cudaErrorIllegalAddress (a test's loss: this process's CUDA "
                         "context is lost)")


PLUGIN = ProofTypePlugin(LostDeviceType(), worker="tests.lost_device_type:LostDeviceWorker",
                         settings="tests.lost_device_type:LostDeviceSettings")
