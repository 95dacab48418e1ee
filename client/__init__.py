"""What users touch: the ``proofq`` CLI, the Python API, the embedded Redis, intake."""
