"""How long the tests may take here: every limit (pytest's timeout, a test's own waits) is
its value on an idle machine times ``TIME_FACTOR``.

A 2-core machine at load 12 runs a CPU proof about six times slower than an idle one, and
a fixed limit that is generous idle (600 s) then fails a test that is only slow. The factor
is ``PROOFQ_TEST_TIME_FACTOR`` when set, else the 1-minute load per core at the session's
start (at least 1) times the number of pytest-xdist workers sharing the machine. Waits for
something that should happen at once (a refusal, a reply) keep their fixed limits: only
the ones that wait for proofs scale.
"""

from __future__ import annotations

import os


def _factor() -> float:
    configured = os.environ.get("PROOFQ_TEST_TIME_FACTOR")
    if configured:
        return float(configured)
    # pytest-xdist's workers share the cores: each counts the others as load from the start
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        load = 0.0
    return max(1.0, load / (os.cpu_count() or 1)) * workers


TIME_FACTOR = _factor()

#: pytest's limit for a test (pyproject's ``timeout``) and for one marked ``long``, idle.
TEST_TIMEOUT_S = 600
LONG_TIMEOUT_S = 2400


def scaled(seconds: float) -> float:
    """``seconds`` on an idle machine, as a limit here."""
    return seconds * TIME_FACTOR
