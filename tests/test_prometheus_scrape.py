"""The real Prometheus given the compose deployment's config, on the cpu profile's network.

Without a Docker engine, ``tests/prometheus_netns.py`` stands in for Docker's network in a
private namespace (``unshare -mn``: root): its DNS answers only for worker-cpu, as Docker's
embedded DNS does when the cpu profile runs.  Prometheus (Debian's package) starts through
``docker/prometheus-entrypoint.sh`` with a random Flower login.  Before: 17 of 19 targets
listed on the cpu profile were down.  Skipped without ``prometheus`` or ``unshare`` rights.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # Prometheus started, scrapes waited for (about 10 s)

ROOT = Path(__file__).resolve().parent.parent


def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-mn", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(shutil.which("prometheus") is None,
                    reason="no prometheus (Debian's package prometheus) installed")
@pytest.mark.skipif(not _can_unshare(), reason="no private network namespace (needs root)")
def test_on_the_cpu_profile_every_target_is_a_running_service_and_up(tmp_path):
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    login = f"ops{rng.randrange(10**6)}:pa'ss:{rng.randrange(10**12)}&\\|"
    run = subprocess.run(
        ["unshare", "-mn", sys.executable, str(ROOT / "tests" / "prometheus_netns.py"),
         str(tmp_path), str(ROOT / "docker" / "prometheus-entrypoint.sh"),
         str(ROOT / "docker" / "prometheus.yml"), "90"],
        env={**os.environ, "FLOWER_BASIC_AUTH": login}, capture_output=True, text=True,
        timeout=180)
    log_file = tmp_path / "prometheus.log"
    log = log_file.read_text() if log_file.exists() else ""
    assert run.returncode == 0, run.stderr + log[-3000:]
    targets = json.loads(run.stdout)
    found = sorted((t["labels"]["job"], t["labels"].get("service", ""),
                    t["scrapeUrl"], t["health"], t["lastError"]) for t in targets)
    assert found == [
        ("flower", "", "http://flower:5555/metrics", "up", ""),  # with Flower's login
        ("proofq-workers", "worker-cpu", "http://127.0.0.1:9100/metrics", "up", ""),
        ("proofq-workers", "worker-cpu", "http://127.0.0.1:9101/metrics", "up", ""),
    ], f"{found}\n{log[-2000:]}"
