"""A SnapDeals partition's vanilla proof as arrays (``storage-proofs-update`` ``PartitionProof``).

``comm_c``, the partition's apex leaves (tree D nodes ``below_apex`` levels up) and, per
challenge, three openings: the old replica's node in tree R (``r_old``), the new data's node
in tree D (``d_new``, binary SHA-256) and the new replica's node in tree R (``r_new``). Each
opening is a ``MerklePath`` whose arrays lead with the challenge axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.filecoin.c1 import MerklePath


@dataclass(frozen=True)
class PartitionProof:
    comm_c: np.ndarray        # uint8 (32,)
    apex_leaves: np.ndarray   # uint8 (apex_leaves, 32)
    r_old: MerklePath
    d_new: MerklePath
    r_new: MerklePath

    @property
    def challenges(self) -> int:
        return len(self.r_old.leaf)
