"""A worker's card in Redis: written whole, renewed by the heartbeat, gone when the worker
stops or dies (its lease), read by the gateway's GetStatus."""

from __future__ import annotations

import time

import redis

from config.redis_keys import DEFAULT_KEYS
from workers.card import Card, WorkerCard, read_cards

PREFIX = DEFAULT_KEYS.card_prefix


def test_a_card_is_read_back_renewed_and_expires(redis_url, rng):
    client = redis.Redis.from_url(redis_url)
    total = rng.randrange(1, 1 << 40)
    card = WorkerCard(client, Card("host:gpu-a:1", "host", "GPU-a", 3, "NVIDIA H200", total),
                      lease_s=0.5, prefix=PREFIX)
    card.update(job="job-1", partition=4, proof_type="filecoin",
                keys={"filecoin/stem": 123})
    [read] = read_cards(client, PREFIX)
    assert (read.worker, read.gpu, read.ordinal, read.device_name, read.total_bytes) == (
        "host:gpu-a:1", "GPU-a", 3, "NVIDIA H200", total)
    assert (read.job, read.partition, read.proof_type, read.keys) == (
        "job-1", 4, "filecoin", {"filecoin/stem": 123})
    card.update(job="", partition=-1, proof_type="")
    time.sleep(0.3)
    card.renew()  # the heartbeat keeps it past its first lease
    time.sleep(0.3)
    [read] = read_cards(client, PREFIX)
    assert read.job == "" and read.keys == {"filecoin/stem": 123}
    time.sleep(0.7)  # a dead worker renews nothing
    assert read_cards(client, PREFIX) == []
    card.renew()
    card.remove()
    assert read_cards(client, PREFIX) == []


def test_cards_are_apart_from_the_other_keys_of_workers(redis_url, rng):
    """The quarantine's set of live workers per queue (``<ns>:workers:<queue>``) is no card:
    a reader of cards sees only cards (they once shared a prefix, and GetStatus failed)."""
    client = redis.Redis.from_url(redis_url)
    client.zadd(DEFAULT_KEYS.workers("gpu"), {"gpu@host": time.time()})
    card = WorkerCard(client, Card(f"w{rng.randrange(1 << 30)}", "host", "GPU-b", 0, "H200", 1),
                      lease_s=5, prefix=PREFIX)
    card.renew()
    assert [c.worker for c in read_cards(client, PREFIX)] == [card.key.removeprefix(PREFIX)]
