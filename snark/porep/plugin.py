"""``porep-demo`` as a plug-in (``snark.plugins``): the project's demo proof of replication,
its C1 proved one partition per unit; porep's witness can be computed on a GPU from compact
inputs (``gpu.porep_witness``); its local commands are ``client.commands.local``'s."""

from __future__ import annotations

from typing import Any

from snark.plugins import InputForms, ProofTypePlugin
from snark.porep.proof_type import PorepType


def demo_c1(head: bytes) -> bool:
    """Whether a C1 file whose first bytes are ``head`` is the demo's (its format field
    comes first) rather than Filecoin's."""
    return b'"format"' in head[:200] and b"proofq-porep-c1" in head[:200]


def _claim(head: bytes) -> int:
    if demo_c1(head):
        return 3
    return 0 if head.lstrip().startswith(b"{") else 1  # not JSON: no other type's


def _sample(key_id: str | None, sector_size: str, partitions: int,
            challenges: int) -> tuple[Any, str]:
    """A freshly sealed demo sector's C1."""
    from snark.porep.c1 import parse_size
    from snark.porep.seal import seal  # the Poseidon library: not for every command

    c1 = seal(parse_size(sector_size), partitions, challenges)
    return c1, (f"sealed a {sector_size} sector: {c1.circuit_name}, {partitions} "
                f"partition{'s' if partitions != 1 else ''}")


PLUGIN = ProofTypePlugin(
    PorepType(), worker="snark.porep.worker:PorepWorker",
    retired={"porep": "the project's demo circuit is now 'porep-demo' (it is not "
                      "Filecoin's); Filecoin sectors are 'filecoin'"},
    unit="partition proof",
    inputs=InputForms(claim=_claim, sample=_sample),
    capability="porep-witness", device_steps="gpu.porep_witness:PorepWitnessDevice",
    commands="client.commands.local:COMMANDS")
