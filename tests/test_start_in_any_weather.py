"""A Celery worker and the intake started while Redis is down, full (``maxmemory``) or a
read-only replica: they wait, with a rate-limited log line, and serve once it recovers.
Real redis-servers and a real ``celery -A tasks worker`` (CPU backend)."""

from __future__ import annotations

import logging
import threading
import time
import uuid

import pytest
import redis

from client.api import Client
from client.embedded import EmbeddedRedis
from client.intake import INTAKE_STREAM, Intake
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark.porep.seal import seal
from tasks.application import create_app
from tasks.submission import send_submit

WAIT_S = 120
WEATHERS = ("down", "full", "read-only")


class Weather:
    """Bad weather for a real redis-server, and its end."""

    def __init__(self, server: EmbeddedRedis, kind: str) -> None:
        self.server, self.kind = server, kind
        self.admin = redis.Redis.from_url(server.url)

    def begin(self) -> None:
        if self.kind == "down":
            self.server.shut_down()
        elif self.kind == "full":
            self.admin.config_set("maxmemory-policy", "noeviction")
            self.admin.config_set("maxmemory", 1)
        else:
            self.admin.replicaof("127.0.0.1", 1)  # a primary that never answers: READONLY

    def end(self) -> None:
        if self.kind == "down":
            self.server.restart()
        elif self.kind == "full":
            self.admin.config_set("maxmemory", 0)
        else:
            self.admin.replicaof("NO", "ONE")


@pytest.fixture(params=WEATHERS)
def weather(request):
    with EmbeddedRedis() as server:
        yield Weather(server, request.param)


def _wait_for(condition, timeout_s: float = WAIT_S, message=lambda: "condition not reached"):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, message()
        time.sleep(0.1)
    return value


@pytest.mark.slow
def test_a_worker_started_in_bad_weather_waits_and_serves_when_it_clears(weather, tmp_path):
    """Before, full or read-only: ``Unrecoverable error: OutOfMemoryError`` (or
    ``ReadOnlyError``) from kombu's queue declaration, and the worker exited."""
    url = weather.server.url
    weather.begin()
    worker = WorkerProcess(url, worker_command(gpu=None, concurrency=1), log_dir=tmp_path,
                           env={"PROOFQ_BACKEND": "cpu"}).start()
    app = create_app(load_settings(redis_url=url))
    try:
        waiting = ("Cannot connect", "waits for Redis to take writes")
        _wait_for(lambda: not worker.alive() or any(w in worker.log_tail(200) for w in waiting),
                  message=worker.log_tail)
        time.sleep(5.0)  # a worker that dies of it has done so by now
        assert worker.alive(), worker.log_tail()
        weather.end()
        worker.wait_ready(app, WAIT_S)
        job = f"none-{uuid.uuid4().hex[:8]}"
        send_submit(app, job, "normal")  # a job that does not exist: taken and dropped
        admin = weather.admin
        _wait_for(lambda: not admin.llen("jobs:3") and "proofq.submit" in worker.log_tail(200)
                  and "succeeded" in worker.log_tail(200), message=worker.log_tail)
        log = worker.log_tail(10_000)
        assert "Unrecoverable error" not in log
        refused = [line for line in log.splitlines() if "waits for Redis" in line]
        assert len(refused) <= 4, refused  # rate-limited: a line, and "works again"
    finally:
        worker.stop(graceful=False)
        app.close()


def test_the_intake_started_in_bad_weather_waits_and_serves_when_it_clears(weather, caplog):
    """Before, down: ``proofq intake`` exited 2 (the group was made in the constructor)."""
    url = weather.server.url
    weather.begin()
    with Client(url, load_settings(redis_url=url)) as client:
        stop, failures = threading.Event(), []

        def serve() -> None:
            try:
                Intake(client, name="a", block_s=0.1, retry_first_s=0.05,
                       retry_longest_s=0.5).run(stop.is_set)
            except BaseException as exc:  # noqa: BLE001 - the test reports it
                failures.append(exc)
        with caplog.at_level(logging.WARNING, logger="client.intake"):
            thread = threading.Thread(target=serve)
            thread.start()
            try:
                time.sleep(3.0)
                assert thread.is_alive() and failures == []
                weather.end()
                entry = client.store.redis.xadd(INTAKE_STREAM, {"c1": seal(2048, 1, 1).to_json()})
                _wait_for(lambda: client.store.state(f"intake-{entry.decode()}"))
            finally:
                stop.set()
                thread.join(timeout=WAIT_S)
        assert failures == []
        waiting = [m for m in caplog.messages if "waits for Redis" in m]
        assert 1 <= len(waiting) <= 2, waiting  # one line (3 s < 30 s), then "works again"
