"""Filecoin's device steps (``snark.unit_work.DeviceWitnessSteps`` of
``snark.filecoin.staging.FILECOIN_WITNESS``) on a GPU backend: each circuit shape's plan
resident once (``gpu.witness.DevicePlan``), a partition's private data uploaded in the
memory phase and its witness written by the tapes in the compute phase, on the backend's
stream. Filecoin's plug-in record (``snark.filecoin.plugin``) names it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu.witness import DevicePlan
from snark.fields import limbs_to_ints
from snark.filecoin.circuit import StackedShape, witness_plan
from snark.filecoin.staging import DeviceInputs, check_public_inputs
from snark.keys import ProvingKey

if TYPE_CHECKING:
    from gpu.backend import GpuBackend


class FilecoinWitnessDevice:
    def __init__(self, backend: GpuBackend) -> None:
        self._backend = backend
        self._plans: dict[StackedShape, DevicePlan] = {}

    def _plan(self, shape: StackedShape) -> DevicePlan:
        plan = self._plans.get(shape)
        if plan is None:
            with self._backend.on_device():
                plan = self._plans[shape] = DevicePlan(witness_plan(shape),
                                                       self._backend.device_id,
                                                       self._backend.stream)
        return plan

    def load(self, key: ProvingKey, work: DeviceInputs):
        plan = self._plan(work.shape)
        if plan.num_inputs + plan.num_aux != key.r1cs.num_variables:
            raise ValueError(f"{work.shape.name}: {plan.num_inputs + plan.num_aux} variables, "
                             f"the key's circuit has {key.r1cs.num_variables}")
        with self._backend.on_device():
            return work, plan.upload(work.values)

    def witness(self, key: ProvingKey, staged):
        """The tapes' assignment, its public inputs read back (a few kilobytes: the one
        wait of this step, on the backend's stream) and checked."""
        work, uploaded = staged
        plan = self._plan(work.shape)
        with self._backend.on_device():
            assignment = plan.run(uploaded)
            inputs = assignment[1:plan.num_inputs].get(stream=self._backend.stream)
        self._backend.release(uploaded[0])
        check_public_inputs(work.partition, limbs_to_ints(inputs), work.public)
        return assignment
