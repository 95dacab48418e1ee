"""The ``porep`` proof type (docs/ARCHITECTURE.md §5): a proof of replication with Filecoin's shape.

``c1`` the job input (strict models), ``derive`` the hash-derived values, ``seal`` the
native sealer, ``vanilla`` native checks of the vanilla proofs, ``circuit`` the R1CS of
one partition, ``witness`` and ``staging`` its witness on the CPU or from compact inputs on
a device, ``prove`` Groth16 proofs of partitions and whole C1s, ``proof_type`` and
``worker`` the pipeline's ``porep`` type (its producer and worker halves).
"""
