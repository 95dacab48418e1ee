"""The reaper against a real redis-server and Celery's own Redis transport (no worker)."""

from __future__ import annotations

import json
import time

import redis

from config.settings import load_settings
from tasks.application import GPU_QUEUE, create_app
from config.redis_keys import DEFAULT_KEYS
from tasks.recovery import Reaper

LEASE_S = 0.3


def _deliver(app, count: int) -> list:
    """Take ``count`` messages off the gpu queue the way a worker does, then "die": the
    channel closes without giving them back, as after a kill -9."""
    with app.connection_for_read() as connection:
        channel = connection.channel()
        channel.qos.restore_at_shutdown = False
        messages = [channel.basic_get(GPU_QUEUE, no_ack=False) for _ in range(count)]
        channel.close()
    return messages


def _jobs_in_queue_order(app) -> list[str]:
    with app.connection_for_read() as connection:
        channel = connection.channel()
        jobs = []
        while (message := channel.basic_get(GPU_QUEUE, no_ack=True)) is not None:
            jobs.append(json.loads(message.body)[0][0])
        channel.close()
    return jobs


def test_an_unclaimed_message_goes_back_in_front_and_a_claimed_one_stays(redis_url):
    app = create_app(load_settings(redis_url=redis_url))
    client = redis.Redis.from_url(redis_url)
    for job in ("dead", "alive", "queued"):
        app.send_task("proofq.prove_partition", args=[job, 0], queue=GPU_QUEUE)
    dead, alive = _deliver(app, 2)
    assert [json.loads(m.body)[0][0] for m in (dead, alive)] == ["dead", "alive"]

    reaper = Reaper(app, "live-node", client, reap_after_s=LEASE_S, settle_s=LEASE_S)
    held = {alive.delivery_tag}  # what the live worker holds; nobody holds "dead"
    assert reaper.round(held) == 0  # just connected: others have not renewed claims yet
    assert client.get(DEFAULT_KEYS.claim(alive.delivery_tag)) == b"live-node"
    time.sleep(LEASE_S * 2)
    assert reaper.round(held) == 1
    assert reaper.round(held) == 0  # restored once

    assert _jobs_in_queue_order(app) == ["dead", "queued"]  # in front, marked redelivered
    unacked = client.hkeys("unacked")
    assert unacked == [alive.delivery_tag.encode()]
    reaper.close()
    app.close()


def test_after_an_outage_the_reaper_waits_a_whole_lease_before_reaping(redis_url):
    """Others' claims may have lapsed during the outage: they get a lease to renew them."""
    app = create_app(load_settings(redis_url=redis_url))
    client = redis.Redis.from_url(redis_url)
    app.send_task("proofq.prove_partition", args=["held-elsewhere", 0], queue=GPU_QUEUE)
    [message] = _deliver(app, 1)
    time.sleep(LEASE_S * 2)  # old enough to reap, and nobody claims it
    reaper = Reaper(app, "node", client, reap_after_s=LEASE_S, settle_s=0)
    reaper.client = redis.Redis(port=1, socket_connect_timeout=0.2)  # an outage
    assert reaper.round(set()) == 0
    reaper.client = client  # back
    assert reaper.round(set()) == 0  # would reap at once without the outage (settle_s=0)
    assert client.hkeys("unacked") == [message.delivery_tag.encode()]
    time.sleep(LEASE_S * 2)
    assert reaper.round(set()) == 1
    reaper.close()
    app.close()
