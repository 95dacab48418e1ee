"""A Filecoin partition's witness through the prover's phases: its shape's plan run on the
partition's private data (the C1's challenged values: about a megabyte at 32 GiB), on the
CPU or, for a backend with the plans' device steps, on the device (``snark.plan_staging``,
``gpu.plan_witness``: the path SnapDeals' and PoSt's partitions take too).

Either way the witness's public inputs are the ones the verifier derives, or the
partition is refused before it is proved.
"""

from __future__ import annotations

from functools import partial

from snark.backend import ProverBackend
from snark.filecoin.c1 import FilecoinC1
from snark.filecoin.circuit import StackedShape, witness_plan
from snark.filecoin.circuit.inputs import partition_data, public_inputs
from snark.filecoin.errors import FilecoinError
from snark.plan_staging import PlanWork, plan_work


def partition_work(c1: FilecoinC1, partition: int, backend: ProverBackend) -> PlanWork:
    """The partition's work for ``backend``."""
    return plan_work(StackedShape.of(c1.proof), witness_plan,
                     partition_data(c1, partition).flatten(),
                     partial(check_public_inputs, partition,
                             expected=public_inputs(c1, partition)), backend)


def check_public_inputs(partition: int, got: list[int], expected: list[int]) -> None:
    if got != expected:
        first = next(i for i, (g, e) in enumerate(zip(got + [None], expected + [None]))
                     if g != e)
        raise FilecoinError(f"partition {partition}: the witness's public input {first} is not "
                            "the one the seed and the graph derive (the C1's proofs open other "
                            "nodes)")
