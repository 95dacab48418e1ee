"""SnapDeals (EmptySectorUpdate): Filecoin's sector updates as rust-fil-proofs proves them.

``shape`` what a sector size fixes (partitions, challenges, apex leaves, h) and the
registered update proofs; ``randomness`` challenges, phi and rho; ``proofs`` a partition's
vanilla proof as arrays, ``bincode`` reading and writing it; ``update`` an update as Curio
sends it and its JSON form; ``checks`` what is checked before proving; ``generate`` test
updates; ``circuit`` the ``EmptySectorUpdateCircuit``, ``inputs`` a partition's private values and
public inputs for it.
"""
