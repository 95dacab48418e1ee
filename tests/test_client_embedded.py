"""The embedded redis-server: a start that fails leaves no process and no directory behind."""

from __future__ import annotations

import tempfile

import pytest
import redis

from client import embedded
from client.embedded import EmbeddedRedis


def test_a_failed_start_cleans_up(monkeypatch):
    made, original = [], tempfile.mkdtemp

    def mkdtemp(**kwargs):
        made.append(original(**kwargs))
        return made[-1]

    monkeypatch.setattr(embedded.tempfile, "mkdtemp", mkdtemp)
    server = EmbeddedRedis(start_timeout_s=0)  # no time to become ready
    with pytest.raises(RuntimeError, match="did not start"):
        server.start()
    [directory] = made
    assert not embedded.Path(directory).exists()
    assert server._proc is None


def test_start_serves_and_stop_removes_everything():
    with EmbeddedRedis() as server:
        directory = server._dir
        assert redis.Redis.from_url(server.url).ping()
    assert not directory.exists() and server._proc is None
