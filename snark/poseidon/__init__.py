"""Poseidon over BLS12-381 Fr.

``grain`` derives constants, ``params`` the stand-in porep's instance
(``poseidonperm_x5_255_3``), ``native`` its reference permutation, ``fast`` the equivalent
sparse schedule used for hashing, ``hashing`` the two-to-one hash H(x, y) (on the native
engine), ``gadget`` its R1CS circuit; ``neptune`` Filecoin's instance. The package imports
none of them, so a producer reading a C1 loads no native engine.
"""
