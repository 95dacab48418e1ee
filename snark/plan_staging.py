"""A unit whose witness is a circuit's ``WitnessPlan`` run on its private values, through
the prover's phases: on the CPU, or on the device.

``plan_work`` decides once per unit (SnapDeals' and PoSt's partitions take this path):

- ``HostWitness`` (``snark.unit_work``): the plan's tapes run on the CPU, the witness
  uploaded whole;
- ``WitnessOnDevice`` of ``PlanInputs`` (``snark.unit_work``): for a backend with
  ``PLAN_WITNESS`` steps, only the unit's private values (the challenged leaves and
  paths), uploaded in the memory phase; the device runs the plan's tapes in the compute
  phase (``gpu.plan_witness``).

Either way the witness's public inputs go through the unit's ``check`` (the ones its
request derives) before it is proved.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from snark.backend import ProverBackend
from snark.gadgets.evaluation import WitnessPlan
from snark.unit_work import HostWitness, WitnessOnDevice, device_witness

#: A circuit's plan per shape (a family's cached ``witness_plan``): hashable, as the shape.
PlanOf = Callable[[Any], WitnessPlan]
#: Raises where a witness's public inputs (without ONE) are not the unit's derived ones.
CheckInputs = Callable[[list[int]], None]

#: Plans' device steps, shared by the types whose witness is a plan: ``load`` takes a
#: unit's ``PlanInputs``.
PLAN_WITNESS = device_witness("plan-witness")


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


PlanWork = HostWitness | WitnessOnDevice[PlanInputs]


def plan_work(shape: Hashable, plan_of: PlanOf, values: np.ndarray, check: CheckInputs,
              backend: ProverBackend) -> PlanWork:
    """The unit's work for ``backend``."""
    plan = plan_of(shape)  # made here, outside the locks, the first time a shape is seen
    if backend.extension(PLAN_WITNESS) is not None:
        return WitnessOnDevice(PLAN_WITNESS, PlanInputs(shape, plan_of, values, check))
    assignment = plan.run(values)
    check(assignment.public_inputs())
    return HostWitness(assignment.assignment())
