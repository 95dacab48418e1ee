"""A unit whose witness is a circuit's ``WitnessPlan`` run on its private values, through
the prover's phases: on the CPU, or on the device.

``plan_work`` decides once per unit (SnapDeals' and PoSt's partitions take this path):

- ``HostWitness`` (``snark.unit_work``): the plan's tapes run on the CPU, the witness
  uploaded whole;
- ``PlanInputs``: for a backend with ``PLAN_WITNESS`` steps, only the unit's private
  values (the challenged leaves and paths), uploaded in the memory phase; the device runs
  the plan's tapes in the compute phase (``gpu.plan_witness``).

Either way the witness's public inputs go through the unit's ``check`` (the ones its
request derives) before it is proved.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from snark.backend import Capability, ProverBackend
from snark.gadgets.evaluation import WitnessPlan
from snark.keys import ProvingKey
from snark.unit_work import HostWitness

#: A circuit's plan per shape (a family's cached ``witness_plan``): hashable, as the shape.
PlanOf = Callable[[Any], WitnessPlan]
#: Raises where a witness's public inputs (without ONE) are not the unit's derived ones.
CheckInputs = Callable[[list[int]], None]


class PlanWitnessSteps(Protocol):
    """A plan's witness computed on the device.

    memory phase   load_plan_values   (the assignment's buffer, the values uploaded)
    compute phase  plan_witness       (the tapes run, the public inputs read back and
                                       checked) → the handle ``evaluate_abc`` takes
    """

    def load_plan_values(self, key: ProvingKey, work: "PlanInputs") -> Any: ...

    def plan_witness(self, key: ProvingKey, staged: Any) -> Any: ...


class FencedPlanWitness:
    """``PlanWitnessSteps`` that call ``check()`` (the held lock's lease) first."""

    def __init__(self, steps: PlanWitnessSteps, check: Callable[[], None]) -> None:
        self._steps = steps
        self._check = check

    def load_plan_values(self, key: ProvingKey, work: "PlanInputs") -> Any:
        self._check()
        return self._steps.load_plan_values(key, work)

    def plan_witness(self, key: ProvingKey, staged: Any) -> Any:
        self._check()
        return self._steps.plan_witness(key, staged)


PLAN_WITNESS: Capability[PlanWitnessSteps] = Capability("plan-witness", FencedPlanWitness)


@dataclass(frozen=True)
class PlanInputs:
    """A unit's private values, flat as its plan reads them, and how to check the public
    inputs its witness comes to."""

    shape: Hashable
    plan_of: PlanOf
    values: np.ndarray
    check: CheckInputs

    def plan(self) -> WitnessPlan:
        return self.plan_of(self.shape)

    def stage(self, key: ProvingKey, backend: ProverBackend) -> Any:
        backend.prepare(key)
        return _steps(backend).load_plan_values(key, self)

    def handle(self, key: ProvingKey, staged: Any, backend: ProverBackend) -> Any:
        return _steps(backend).plan_witness(key, staged)


def _steps(backend: ProverBackend) -> PlanWitnessSteps:
    steps = backend.extension(PLAN_WITNESS)
    if steps is None:  # the work was made for another backend
        raise TypeError(f"{backend.name} backend: has no device witness steps for plans")
    return steps


PlanWork = HostWitness | PlanInputs


def plan_work(shape: Hashable, plan_of: PlanOf, values: np.ndarray, check: CheckInputs,
              backend: ProverBackend) -> PlanWork:
    """The unit's work for ``backend``."""
    plan = plan_of(shape)  # made here, outside the locks, the first time a shape is seen
    if backend.extension(PLAN_WITNESS) is not None:
        return PlanInputs(shape, plan_of, values, check)
    assignment = plan.run(values)
    check(assignment.public_inputs())
    return HostWitness(assignment.assignment())
