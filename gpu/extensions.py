"""The proof types' device steps on the GPU, by the capability they implement
(``snark.backend.Capability``): each is a class composed with a ``GpuBackend`` (it takes the
backend, and runs on its device and stream), made when the backend starts.

A proof type with device steps of its own adds its capability's line here and its module
beside the others; ``gpu.backend`` does not change.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from snark.filecoin.staging import FILECOIN_WITNESS
from snark.plan_staging import PLAN_WITNESS
from snark.porep.staging import POREP_WITNESS

if TYPE_CHECKING:
    from gpu.backend import GpuBackend

#: Capability name → ``"module:class"`` of its GPU implementation.
EXTENSIONS: dict[str, str] = {
    POREP_WITNESS.name: "gpu.porep_witness:PorepWitnessDevice",
    FILECOIN_WITNESS.name: "gpu.filecoin_witness:FilecoinWitnessDevice",
    PLAN_WITNESS.name: "gpu.plan_witness:PlanWitnessDevice",
}


def make_all(backend: GpuBackend) -> dict[str, object]:
    """Every extension, composed with ``backend`` (their kernels compile here)."""
    made = {}
    for name, path in EXTENSIONS.items():
        module, _, attribute = path.partition(":")
        made[name] = getattr(importlib.import_module(module), attribute)(backend)
    return made
