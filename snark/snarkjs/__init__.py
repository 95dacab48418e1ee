"""The snarkjs proof type's formats: circom/snarkjs Groth16 circuits on BLS12-381.

What a caller uses, module by module (the package itself imports nothing, so a producer
that parses a circom job never loads the curve code)::

    key = keystore.import_zkey("circuit.zkey", params_dir)  # once; then params.load_key
    w = wtns.read_wtns("witness.wtns")                       # (nVars, 4) standard-form Fr
    witness.check_witness(key, w)                            # SnarkjsFormatError if no fit
    proof = snark.groth16.prove(key, w, backend)             # or stage / compute / finalize
    public = witness.public_inputs(key, w)                   # the public signals, ints
    snark.groth16.verify(key.vk, public, proof)
    json_formats.proof_to_json(proof), json_formats.public_to_json(public)

and for checking snarkjs's own files: ``json_formats.vk_from_json``, ``proof_from_json``,
``public_from_json``. Imported keys use the ``odd`` H form (``snark.keys``); the input of a
``circom`` job is ``job``, the proof type's producer half ``proof_type``, its worker half
``worker``.
"""
