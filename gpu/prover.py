"""The GPU backend workers get from ``gpu.get_backend``: the Groth16 core (``gpu.backend``)
with the device steps of the proof types that have some (porep: ``gpu.porep_witness``)."""

from __future__ import annotations

from gpu.backend import GpuBackend
from gpu.porep_witness import PorepWitnessSteps


class GpuProver(PorepWitnessSteps, GpuBackend):
    """``snark.backend.ProverBackend`` on one CUDA device, plus porep's device witness."""
