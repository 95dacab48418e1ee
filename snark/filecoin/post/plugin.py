"""``window-post`` and ``winning-post`` as plug-ins (``snark.plugins``): one PoSt partition
each, one unit; one worker half serves both, their witness (a plan's tapes) can be
computed on a GPU (``snark.plan_staging``, ``gpu.plan_witness``), their commands are
``client.commands.post``'s and their Curio kinds ``client.cuzk.filecoin_kinds``'."""

from __future__ import annotations

from snark.filecoin.post.proof_type import PostType
from snark.plugins import ProofTypePlugin


def _post(kind: str, curio_kinds: str, transient_key: bool) -> ProofTypePlugin:
    return ProofTypePlugin(PostType(kind), worker="snark.filecoin.post.worker:PostWorker",
                           settings="snark.filecoin.settings:FilecoinSettings",
                           unit="partition proof", commands="client.commands.post:COMMANDS",
                           curio_kinds=curio_kinds, capability="plan-witness",
                           device_steps="gpu.plan_witness:PlanWitnessDevice",
                           transient_key=transient_key)


#: WindowPoSt's key is transient: a few partitions a deadline, its 32 GiB device part
#: (15.4 GB with its bases streamed) beside a resident PoRep key would not leave a PoRep
#: compute room (docs/performance.md, "PoSt beside PoRep on one H200"). WinningPoSt's
#: (0.23 GB) stays, pinned.
WINDOW = _post("window", "client.cuzk.filecoin_kinds:WINDOW_POST", transient_key=True)
WINNING = _post("winning", "client.cuzk.filecoin_kinds:WINNING_POST", transient_key=False)
