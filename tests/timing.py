"""How long the tests may take here: every limit (pytest's timeout, a test's own waits) is
its value on an idle machine times ``TIME_FACTOR``.

A 2-core machine at load 12 runs a CPU proof about six times slower than an idle one, and
a fixed limit that is generous idle (600 s) then fails a test that is only slow. The factor
is ``PROOFQ_TEST_TIME_FACTOR`` when set, else the 1-minute load per core at the session's
start (at least 1). Waits for something that should happen at once (a refusal, a reply)
keep their fixed limits: only the ones that wait for proofs scale.
"""

from __future__ import annotations

import os


def _factor() -> float:
    configured = os.environ.get("PROOFQ_TEST_TIME_FACTOR")
    if configured:
        return float(configured)
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


TIME_FACTOR = _factor()

#: pytest's limit for a test (pyproject's ``timeout``) and for one marked ``long``, idle.
TEST_TIMEOUT_S = 600
LONG_TIMEOUT_S = 2400


def scaled(seconds: float) -> float:
    """``seconds`` on an idle machine, as a limit here."""
    return seconds * TIME_FACTOR
