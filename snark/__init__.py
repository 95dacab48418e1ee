"""The math and the formats of proofq: BLS12-381 fields, R1CS, Groth16, Poseidon, PoRep.

Knows nothing of GPUs, Redis or Celery; usable as a library on its own.
"""
