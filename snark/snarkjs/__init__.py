"""The snarkjs proof type's formats: circom/snarkjs Groth16 circuits on BLS12-381.

What a caller (the CLI today, a ``ProofType`` in the pipeline later) uses:

    key = import_zkey("circuit.zkey", params_dir)     # once; then load_key(params_dir, key.circuit_id)
    witness = read_wtns("witness.wtns")                 # (nVars, 4) standard-form Fr limbs
    check_witness(key, witness)                         # SnarkjsFormatError if it does not fit
    proof = snark.groth16.prove(key, witness, backend)  # or stage / compute / finalize
    public = public_inputs(key, witness)                # the public signals, ints
    snark.groth16.verify(key.vk, public, proof)
    proof_to_json(proof), public_to_json(public)        # snarkjs's proof.json / public.json

and for checking snarkjs's own files: ``vk_from_json``, ``proof_from_json``,
``public_from_json``. Imported keys use the ``odd`` H form (``snark.keys``).
"""

from __future__ import annotations

import numpy as np

from snark.fields import limbs_to_ints
from snark.keys import ProvingKey
from snark.snarkjs.binfile import SnarkjsFormatError
from snark.snarkjs.json_formats import (proof_from_json, proof_to_json, public_from_json,
                                        public_to_json, vk_from_json)
from snark.snarkjs.keystore import import_zkey, zkey_id
from snark.snarkjs.wtns import read_wtns
from snark.snarkjs.zkey import Zkey, read_zkey


def check_witness(key: ProvingKey, witness: np.ndarray, name: str = "witness") -> None:
    """The witness fits the key (one value per signal)."""
    expected = key.r1cs.num_variables
    if witness.shape != (expected, 4):
        raise SnarkjsFormatError(f"{name}: {witness.shape[0]} signals, the key "
                                 f"{key.circuit_id} has {expected}")


def public_inputs(key: ProvingKey, witness: np.ndarray) -> list[int]:
    """The public signals (outputs, then public inputs): what public.json lists."""
    return limbs_to_ints(witness[1:key.r1cs.num_inputs])


__all__ = [
    "SnarkjsFormatError", "Zkey", "check_witness", "import_zkey", "proof_from_json",
    "proof_to_json", "public_from_json", "public_inputs", "public_to_json", "read_wtns",
    "read_zkey", "vk_from_json", "zkey_id",
]
