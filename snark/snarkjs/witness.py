"""A circom witness against an imported key: does it fit, and what are its public signals."""

from __future__ import annotations

import numpy as np

from snark.fields import limbs_to_ints
from snark.keys import ProvingKey
from snark.snarkjs.binfile import SnarkjsFormatError


def check_witness(key: ProvingKey, witness: np.ndarray, name: str = "witness") -> None:
    """The witness fits the key (one value per signal)."""
    expected = key.r1cs.num_variables
    if witness.shape != (expected, 4):
        raise SnarkjsFormatError(f"{name}: {witness.shape[0]} signals, the key "
                                 f"{key.circuit_id} has {expected}")


def public_inputs(key: ProvingKey, witness: np.ndarray) -> list[int]:
    """The public signals (outputs, then public inputs): what public.json lists."""
    return limbs_to_ints(witness[1:key.r1cs.num_inputs])
