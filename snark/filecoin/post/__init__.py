"""Filecoin's WindowPoSt and WinningPoSt (FallbackPoSt) as rust-fil-proofs runs them.

``registry`` the registered PoSt proofs (Go's numbering, api versions, parameter names and
digests); ``vanilla`` Curio's bincode vanilla proofs; ``challenges`` what the randomness
derives; ``checks`` the api's vanilla checks and the partition as the circuit proves it;
``circuit`` FallbackPoStCircuit, its fingerprints, witness and public inputs; ``prove`` one
partition's proof; ``generate`` test sectors and their vanilla proofs; ``job``,
``proof_type`` and ``worker`` the ``window-post`` and ``winning-post`` proof types.
"""
