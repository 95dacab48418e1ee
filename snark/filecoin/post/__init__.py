"""Filecoin's WindowPoSt and WinningPoSt (FallbackPoSt) as rust-fil-proofs runs them.

``registry`` the registered PoSt proofs (Go's numbering, api versions, parameter names);
``vanilla`` Curio's bincode vanilla proofs; ``challenges`` what the randomness derives;
``checks`` the api's vanilla checks and the partition as the circuit proves it;
``circuit`` FallbackPoStCircuit, its fingerprints, witness and public inputs.
"""
