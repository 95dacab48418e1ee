"""Filecoin's PoRep (StackedDrg / SDR) as rust-fil-proofs computes it: no GPU, no Celery.

``registry`` the registered seal proofs, ``challenges`` replica_id and the interactive
challenges, ``domain`` 32-byte field elements and trimmed SHA-256; neptune's Poseidon lives
in ``snark.poseidon.neptune``.
"""

from snark.filecoin.challenges import interactive_challenges, prover_id_for_miner, replica_id
from snark.filecoin.errors import FilecoinError
from snark.filecoin.registry import (REGISTERED_PROOFS, ApiVersion, RegisteredProof, TreeShape,
                                     for_sector, registered_proof)
from snark.poseidon.neptune import neptune_constants, poseidon_hash, poseidon_many

__all__ = ["REGISTERED_PROOFS", "ApiVersion", "FilecoinError", "RegisteredProof", "TreeShape",
           "for_sector", "interactive_challenges", "neptune_constants", "poseidon_hash",
           "poseidon_many", "prover_id_for_miner", "registered_proof", "replica_id"]
