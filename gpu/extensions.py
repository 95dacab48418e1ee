"""The proof types' device steps on the GPU, by the capability they implement
(``snark.backend.Capability``): each is a class composed with a ``GpuBackend`` (it takes the
backend, and runs on its device and stream), made when the backend starts.

A proof type with device steps names their class in its plug-in record
(``snark.plugins.ProofTypePlugin.device_steps``, under its capability's name); this module
and ``gpu.backend`` name no type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from snark.plugins import load_attribute
from snark.registry import plugins

if TYPE_CHECKING:
    from gpu.backend import GpuBackend


def make_all(backend: GpuBackend) -> dict[str, object]:
    """Every installed type's device steps, composed with ``backend`` (their kernels
    compile here), by capability name."""
    made: dict[str, object] = {}
    for plugin in plugins():  # types may share a capability (SnapDeals' and PoSt's plans)
        if plugin.capability is not None and plugin.device_steps is not None \
                and plugin.capability not in made:
            made[plugin.capability] = load_attribute(plugin.device_steps)(backend)
    return made
