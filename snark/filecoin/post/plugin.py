"""``window-post`` and ``winning-post`` as plug-ins (``snark.plugins``): one PoSt partition
each, one unit; one worker half serves both, their witness (a plan's tapes) can be
computed on a GPU (``snark.plan_staging``, ``gpu.plan_witness``), their commands are
``client.commands.post``'s and their Curio kinds ``client.cuzk.filecoin_kinds``'."""

from __future__ import annotations

from snark.filecoin.post.proof_type import PostType
from snark.plugins import ProofTypePlugin


def _post(kind: str, curio_kinds: str) -> ProofTypePlugin:
    return ProofTypePlugin(PostType(kind), worker="snark.filecoin.post.worker:PostWorker",
                           settings="snark.filecoin.settings:FilecoinSettings",
                           unit="partition proof", commands="client.commands.post:COMMANDS",
                           curio_kinds=curio_kinds, capability="plan-witness",
                           device_steps="gpu.plan_witness:PlanWitnessDevice")


WINDOW = _post("window", "client.cuzk.filecoin_kinds:WINDOW_POST")
WINNING = _post("winning", "client.cuzk.filecoin_kinds:WINNING_POST")
