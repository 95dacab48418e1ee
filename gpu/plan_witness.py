"""Plans' device steps (``snark.unit_work.DeviceWitnessSteps`` for
``snark.plan_staging.PLAN_WITNESS``) on a GPU backend: each
circuit shape's plan resident once (``gpu.witness.DevicePlan``), a unit's private values
uploaded in the memory phase and its witness written by the tapes in the compute phase, on
the backend's stream. SnapDeals' and PoSt's partitions take this path."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from gpu.witness import DevicePlan
from snark.fields import limbs_to_ints
from snark.keys import ProvingKey
from snark.plan_staging import PlanInputs

if TYPE_CHECKING:
    from gpu.backend import GpuBackend


class PlanWitnessDevice:
    def __init__(self, backend: GpuBackend) -> None:
        self._backend = backend
        self._plans: dict[tuple[object, Hashable], DevicePlan] = {}

    def _plan(self, work: PlanInputs) -> DevicePlan:
        circuit = (work.plan_of, work.shape)
        plan = self._plans.get(circuit)
        if plan is None:
            with self._backend.on_device():
                plan = self._plans[circuit] = DevicePlan(work.plan(), self._backend.device_id,
                                                       self._backend.stream)
        return plan

    def load(self, key: ProvingKey, work: PlanInputs):
        plan = self._plan(work)
        if plan.num_inputs + plan.num_aux != key.r1cs.num_variables:
            raise ValueError(f"{work.shape}: {plan.num_inputs + plan.num_aux} variables, "
                             f"the key's circuit has {key.r1cs.num_variables}")
        with self._backend.on_device():
            return work, plan.upload(work.values)

    def witness(self, key: ProvingKey, staged):
        """The tapes' assignment, its public inputs read back (a few kilobytes: the one
        wait of this step, on the backend's stream) and checked."""
        work, uploaded = staged
        plan = self._plan(work)
        with self._backend.on_device():
            assignment = plan.run(uploaded)
            inputs = assignment[1:plan.num_inputs].get(stream=self._backend.stream)
        self._backend.release(uploaded[0])
        work.check(limbs_to_ints(inputs))
        return assignment
