"""The Python API's waiting, against a real redis-server and no worker."""

from __future__ import annotations

import time

import pytest

from client.api import Client
from config.settings import load_settings
from snark.porep.seal import seal


def test_a_deadline_passing_during_check_is_a_timeout_not_a_negative_sleep(redis_url):
    with Client(redis_url, load_settings(redis_url=redis_url)) as client:
        job = client.submit(seal(2048, 1, 1))  # no worker: it stays queued

        def slow_check() -> None:
            time.sleep(0.1)  # outlasts the whole timeout

        with pytest.raises(TimeoutError, match=f"job {job}: still queued"):
            client.wait(job, timeout=0.05, check=slow_check)
