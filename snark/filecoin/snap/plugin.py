"""``snap`` as a plug-in (``snark.plugins``): one SnapDeals update, one unit per partition;
its witness (a plan's tapes) can be computed on a GPU (``snark.plan_staging``,
``gpu.plan_witness``); its commands are ``client.commands.snap``'s."""

from __future__ import annotations

from snark.filecoin.plugin import sector_of
from snark.filecoin.snap.proof_type import SnapType
from snark.plugins import ProofTypePlugin

PLUGIN = ProofTypePlugin(SnapType(), worker="snark.filecoin.snap.worker:SnapWorker",
                         settings="snark.filecoin.settings:FilecoinSettings",
                         unit="partition proof", commands="client.commands.snap:COMMANDS",
                         curio_kinds="client.cuzk.filecoin_kinds:SNAP", sector_of=sector_of,
                         capability="plan-witness",
                         device_steps="gpu.plan_witness:PlanWitnessDevice")
