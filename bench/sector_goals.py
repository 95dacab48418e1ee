"""The records of the 32 GiB sector goals (``filecoin-32gib-<date>.json``, issue 42): every
record carries the same fields, null where its run did not measure them, so that runs of
different benchmarks (a partition's GPU time, a sector end to end, a key made) read alike.
"""

from __future__ import annotations

#: Each record's fields, in this order, before whatever else its benchmark adds.
FIELDS = ("device", "commit", "command", "partition_gpu_s", "sector_wall_s", "verified",
          "scratch_bytes", "keygen_points_per_s", "workers")


def goal_record(fields: dict) -> dict:
    """``fields`` with every goal field present (None where absent), those first."""
    return {**dict.fromkeys(FIELDS), **fields}
