"""The commit a benchmark ran at, for its JSON record.

The device machine receives a copy of the working tree without ``.git``: there the caller
passes the commit as ``PROOFQ_COMMIT`` (see ``bench/device.sh``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def commit() -> str:
    if os.environ.get("PROOFQ_COMMIT"):
        return os.environ["PROOFQ_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
