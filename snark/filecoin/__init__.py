"""Filecoin's PoRep (StackedDrg / SDR) as rust-fil-proofs computes it: no GPU, no Celery.

``registry`` the registered seal proofs (by name, or by Go's number: ``by_number``);
``domain`` 32-byte field elements and trimmed SHA-256; ``challenges`` replica_id and the
interactive and synthetic challenges (``chacha`` their ChaCha20, the graph's ChaCha8);
``graph`` the SDR graph and parent caches; ``sdr`` labels and encoding; ``trees`` tree D, C
and R_last and their paths;
``c1`` a parsed C1 as arrays, ``c1_schema`` reading one (``c1_lift`` its fast path),
``c1_write`` writing one; ``checks`` what a C2 prover checks before proving; ``seal`` test
sealers. Neptune's Poseidon is ``snark.poseidon.neptune``.
"""

from snark.filecoin.c1 import (ColumnProofs, EncodingProofs, FilecoinC1, LabelingProofs,
                               MerklePath, PathLevel, VanillaProofs)
from snark.filecoin.c1_schema import parse_c1
from snark.filecoin.c1_write import curio_json, phase1_json
from snark.filecoin.challenges import (interactive_challenges, porep_challenges,
                                       prover_id_for_miner, replica_id, synthetic_challenges)
from snark.filecoin.checks import check_c1
from snark.filecoin.domain import from_limbs, sha256_fr, to_limbs
from snark.filecoin.errors import FilecoinError
from snark.filecoin.graph import SdrGraph, parent_cache, parent_cache_name
from snark.filecoin.registered_proofs import (REGISTERED_PROOFS, ApiVersion, RegisteredProof,
                                              TreeShape, by_number, for_sector,
                                              registered_proof)
from snark.filecoin.sdr import sdr_last_layer
from snark.filecoin.seal import seal, seal_sparse
from snark.poseidon.neptune import (PoseidonConstants, neptune_constants, poseidon_hash,
                                    poseidon_many)

__all__ = [
    "REGISTERED_PROOFS", "ApiVersion", "ColumnProofs", "EncodingProofs", "FilecoinC1",
    "FilecoinError", "LabelingProofs", "MerklePath", "PathLevel", "PoseidonConstants",
    "RegisteredProof", "SdrGraph", "TreeShape", "VanillaProofs", "by_number", "check_c1",
    "curio_json", "for_sector", "from_limbs", "interactive_challenges", "neptune_constants",
    "parent_cache", "parent_cache_name", "parse_c1", "phase1_json", "porep_challenges",
    "poseidon_hash", "poseidon_many", "prover_id_for_miner", "registered_proof", "replica_id",
    "sdr_last_layer", "seal", "seal_sparse", "sha256_fr", "synthetic_challenges", "to_limbs"]
