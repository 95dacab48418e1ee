"""A Redis that answers but refuses (``maxmemory`` with noeviction, an ACL user limited to
``proofq:*``), with a real redis-server each: workers' and producers' side."""

from __future__ import annotations

import logging
import threading
import time
import uuid

import pytest
import redis

from client.api import Client
from client.embedded import EmbeddedRedis
from config.settings import load_settings
from snark.job_input import InputLimits
from snark.porep.seal import seal
from tasks.application import PRIORITIES, create_app
from tasks.jobs import UNSENT, JobStore
from tasks.recovery import Reaper
from workers.redis_faults import refuses_writes
from tasks.submission import RedisFull, SubmitError, accept
from workers.failures import run_until_settled

WAIT_S = 120


@pytest.fixture()
def server():
    with EmbeddedRedis() as server:
        yield server


@pytest.fixture()
def admin(server):
    client = redis.Redis.from_url(server.url)
    yield client
    client.config_set("maxmemory", 0)
    client.close()


def _full(admin: redis.Redis) -> None:
    """Every write refused from now on: maxmemory below what is used (noeviction)."""
    admin.config_set("maxmemory-policy", "noeviction")
    admin.config_set("maxmemory", 1)


def _job_keys(admin: redis.Redis) -> list[bytes]:
    return admin.keys("proofq:job:*")


def test_a_refusal_is_recognised_from_a_command_a_pipeline_and_a_script(server, admin):
    """Before: a Lua script's refused write came back as a plain ResponseError, which no
    one recognised: a job transition met at maxmemory was retried at once, for ever."""
    client = redis.Redis.from_url(server.url)
    script = client.register_script("return redis.call('SET', KEYS[1], ARGV[1])")
    _full(admin)
    refusals = []
    for attempt in (lambda: client.set("proofq:a", 1),
                    lambda: client.pipeline().set("proofq:a", 1).execute(),
                    lambda: script(keys=["proofq:a"], args=[1])):
        with pytest.raises(redis.ResponseError) as caught:
            attempt()
        refusals.append(refuses_writes(caught.value))
    assert refusals == [True, True, True]
    assert not refuses_writes(redis.ResponseError("WRONGTYPE Operation against a key"))
    client.close()


def test_a_message_popped_while_redis_is_full_is_recorded_once_there_is_room(server, admin):
    """Before: kombu popped the message (BRPOP is allowed when full), its record in
    ``unacked`` was refused, the error killed the consumer and the message was in no queue
    and in no ``unacked`` hash: lost. Now the consumer holds it until Redis takes the
    record."""
    app = create_app(load_settings(redis_url=server.url))
    queue = f"t{uuid.uuid4().hex[:8]}"
    body = {"n": uuid.uuid4().hex}
    got, failed = [], []
    with app.connection_for_read() as connection:
        with connection.Producer() as producer:
            producer.publish(body, routing_key=queue, declare=[app.amqp.queues[queue]],
                             serializer="json")
        consumer = connection.Consumer(app.amqp.queues[queue], accept=["json"],
                                       callbacks=[lambda b, m: got.append((b, m))])
        consumer.consume()
        _full(admin)

        def drain() -> None:
            try:
                connection.drain_events(timeout=WAIT_S)
            except Exception as exc:  # noqa: BLE001 (what the test reports)
                failed.append(exc)

        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        deadline = time.monotonic() + WAIT_S
        while admin.llen(queue) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert admin.llen(queue) == 0  # popped
        time.sleep(1.0)  # the record is refused meanwhile
        assert not got and not failed
        admin.config_set("maxmemory", 0)
        thread.join(WAIT_S)
        assert not failed, failed
        [(received, message)] = got
        assert received == body
        assert admin.hexists("unacked", message.delivery_tag)  # recorded: never lost
        message.ack()
    app.close()


def test_a_task_meeting_a_full_redis_waits_without_spinning(server, admin, caplog):
    """Before: the run went again as soon as Redis answered a PING, which a full Redis
    does at once: thousands of runs and log lines a second."""
    client = redis.Redis.from_url(server.url)
    runs = []

    def run(resumed: bool) -> str:
        runs.append(resumed)
        client.set("proofq:job:x:parts", "a part")
        return "stored"

    _full(admin)
    result = []
    log = logging.getLogger("test.refusals")
    thread = threading.Thread(target=lambda: result.append(
        run_until_settled(run, client, log=log, name="partition")), daemon=True)
    with caplog.at_level(logging.WARNING, logger="test.refusals"):
        thread.start()
        commands = int(admin.info("stats")["total_commands_processed"])
        time.sleep(4.0)
        commands = int(admin.info("stats")["total_commands_processed"]) - commands
        admin.config_set("maxmemory", 0)
        thread.join(WAIT_S)
    print(f"{len(runs)} runs, {commands} Redis commands in 4 s of a full Redis")
    assert result == ["stored"] and runs[-1] is True
    assert len(runs) <= 8 and commands <= 100
    assert len(caplog.records) <= 3
    client.close()


def test_a_nearly_full_redis_refuses_new_jobs_at_the_door(server, admin):
    """Before: jobs were stored until Redis was full, and then workers met the OOM."""
    used = int(admin.info("memory")["used_memory"])
    admin.config_set("maxmemory", int(used / 0.9))  # above the 80% mark, below full
    assert admin.set("proofq:still-writable", 1)
    with Client(server.url, load_settings(redis_url=server.url)) as client:
        with pytest.raises(RedisFull, match="maxmemory"):
            client.submit(seal(2048, 1, 1))
        assert _job_keys(admin) == []
        admin.config_set("maxmemory", 0)
        deadline = time.monotonic() + WAIT_S
        while True:  # the gate reads INFO again after its cache second
            try:
                job = client.submit(seal(2048, 1, 1))
                break
            except RedisFull:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert client.status(job).status == "queued"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("worker_module_imported", [False, True])
def test_a_submit_whose_message_cannot_be_sent_stores_nothing(server, admin,
                                                              worker_module_imported):
    """An ACL user limited to ``proofq:*`` keys may store a job but not send its message
    (the queues are other keys). Before: the job stayed stored and ``queued`` for ever while
    the caller was told it failed. A process that imported the worker module (a test, a tool)
    is still a producer: its send is refused at once (it once waited for ever, as a starting
    worker waits to declare its queues)."""
    if worker_module_imported:
        import tasks.worker  # noqa: F401
    admin.acl_setuser("producer", enabled=True, passwords=["+secret"], keys=["proofq:*"],
                      commands=["+@all"])
    url = f"redis://producer:secret@127.0.0.1:{server.port}/0"
    with Client(url, load_settings(redis_url=url)) as client:
        with pytest.raises(SubmitError, match="nothing stored"):
            client.submit(seal(2048, 1, 1))
    assert _job_keys(admin) == [] and admin.zcard(UNSENT) == 0


def test_the_reaper_sends_a_job_stored_but_never_sent(server, admin):
    """A producer that died between storing a job and sending it: the reaper sends it."""
    settings = load_settings(redis_url=server.url)
    store = JobStore(admin, ttl_s=60, results_maxlen=100)
    job = accept(store, seal(2048, 1, 1), limits=InputLimits.of(settings)).job_id
    admin.zadd(UNSENT, {job: int(admin.time()[0]) - 120})  # stored two minutes ago
    app = create_app(settings)
    reaper = Reaper(app, "reaper@test", redis.Redis.from_url(server.url), reap_after_s=60,
                    settle_s=0)
    try:
        assert reaper.round(set()) == 1
        assert admin.llen(f"jobs:{PRIORITIES['normal']}") == 1  # its submit message
        assert admin.zcard(UNSENT) == 0
        assert reaper.round(set()) == 0
    finally:
        reaper.close()
        app.close()


def test_a_starting_worker_waits_to_declare_its_queues():
    """The wait is switched on by a worker's start (Celery's ``worker_init``), not by an
    import of the worker module."""
    from celery import signals

    import tasks.worker  # noqa: F401
    from tasks.transport import Channel

    assert Channel.wait_to_declare is False
    try:
        signals.worker_init.send(sender=None)
        assert Channel.wait_to_declare is True
    finally:
        Channel.wait_to_declare = False
