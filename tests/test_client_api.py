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


def test_a_clients_own_limits_apply_not_the_process_settings(redis_url, monkeypatch, rng):
    """``Client(redis_url, settings)`` parses with its settings' limits, whatever the process
    settings (``get_settings``, here from the environment) say."""
    from config.settings import get_settings
    from tasks.submission import SubmitError

    c1 = seal(2048, rng.randrange(1, 4), 1)
    size = len(c1.to_json())
    monkeypatch.setenv("PROOFQ_MAX_INPUT_BYTES", str(size - 1))  # the process refuses it
    get_settings.cache_clear()
    try:
        roomy = load_settings(redis_url=redis_url, max_input_bytes=size)
        with Client(redis_url, roomy) as client:
            job = client.submit(c1)
            assert client.status(job).partitions == c1.partitions
        tight = load_settings(redis_url=redis_url, max_input_bytes=size - rng.randrange(1, 64))
        assert get_settings().max_input_bytes == size - 1
        monkeypatch.setenv("PROOFQ_MAX_INPUT_BYTES", str(size))  # now the process allows it
        get_settings.cache_clear()
        with Client(redis_url, tight) as client, \
                pytest.raises(SubmitError, match=rf"c1: {size} bytes exceeds max_input_bytes"):
            client.submit(c1)
    finally:
        get_settings.cache_clear()
