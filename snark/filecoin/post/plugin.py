"""``window-post`` and ``winning-post`` as plug-ins (``snark.plugins``): one PoSt partition
each, one unit; one worker half serves both, and their commands are
``client.commands.post``'s."""

from __future__ import annotations

from snark.filecoin.post.proof_type import PostType
from snark.plugins import ProofTypePlugin

WINDOW = ProofTypePlugin(PostType("window"), worker="snark.filecoin.post.worker:PostWorker",
                         unit="partition proof", commands="client.commands.post:COMMANDS")
WINNING = ProofTypePlugin(PostType("winning"), worker="snark.filecoin.post.worker:PostWorker",
                          unit="partition proof", commands="client.commands.post:COMMANDS")
