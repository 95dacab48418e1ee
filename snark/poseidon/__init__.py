"""Poseidon over BLS12-381 Fr (``poseidonperm_x5_255_3``): constants, permutation, hash.

``grain`` derives the constants, ``native`` is the reference permutation, ``fast`` the
equivalent schedule used for hashing, ``hashing`` the two-to-one hash H(x, y), ``gadget``
its R1CS circuit.
"""

from snark.poseidon.gadget import poseidon_hash2_gadget
from snark.poseidon.hashing import hash2, hash2_many
from snark.poseidon.native import permute
from snark.poseidon.params import PoseidonParams, poseidon_x5_255_3

__all__ = ["PoseidonParams", "hash2", "hash2_many", "permute", "poseidon_hash2_gadget",
           "poseidon_x5_255_3"]
