"""The Celery configuration that the pipeline's guarantees rest on."""

from __future__ import annotations

import pytest

from config.settings import load_settings
from tasks.application import (GPU_QUEUE, JOBS_QUEUE, PRIORITIES, PriorityError, celery_config,
                               create_app, priority_level)


@pytest.fixture()
def conf():
    return celery_config(load_settings(redis_url="redis://example:6379/2",
                                       visibility_timeout_s=12345))


def test_json_only_nothing_else_is_accepted(conf):
    assert conf["accept_content"] == ["json"] == conf["result_accept_content"]
    assert conf["task_serializer"] == conf["result_serializer"] == "json"


def test_visibility_timeout_is_set_everywhere_celery_reads_it(conf):
    assert conf["visibility_timeout"] == 12345
    assert conf["broker_transport_options"]["visibility_timeout"] == 12345
    assert conf["result_backend_transport_options"]["visibility_timeout"] == 12345


def test_a_lost_worker_gives_its_task_back(conf):
    assert conf["task_acks_late"] and conf["task_reject_on_worker_lost"]
    assert conf["worker_prefetch_multiplier"] == 1


def test_priorities_map_to_transport_steps_and_unnamed_messages_are_normal(conf):
    options = conf["broker_transport_options"]
    assert options["priority_steps"] == sorted(PRIORITIES.values())
    assert options["queue_order_strategy"] == "priority"
    # The Redis transport serves the lowest step first.
    assert PRIORITIES["high"] < PRIORITIES["normal"] < PRIORITIES["low"]
    assert conf["task_default_priority"] == PRIORITIES["normal"]
    with pytest.raises(PriorityError, match="priority: unknown priority 'urgent'"):
        priority_level("urgent")


def test_broker_backend_and_events_come_from_settings(conf):
    assert conf["broker_url"] == conf["result_backend"] == "redis://example:6379/2"
    assert conf["worker_send_task_events"] and conf["task_send_sent_event"]
    assert [q.name for q in conf["task_queues"]] == [JOBS_QUEUE, GPU_QUEUE]


def test_the_app_registers_the_task_graph_and_the_gpu_option():
    import tasks

    assert {"proofq.submit", "proofq.prove_partition"} <= set(tasks.app.tasks)
    assert any(o.name == "gpu" for o in tasks.app.user_options["worker"])
    assert create_app(load_settings(redis_url="redis://x:1/0")).conf.broker_url == "redis://x:1/0"


def test_the_setup_lock_lease_is_renewed_from_the_heartbeat_thread(redis_url):
    # A setup outlives its lease; the heartbeat (another thread) must be able to renew it,
    # else a second setup starts and the first one's release fails its job.
    import threading

    import redis

    from tasks.pipeline import setup_lease, setup_lock

    client = redis.Redis.from_url(redis_url)
    lock = setup_lock(client, "c" * 32, lease_s=60)
    assert lock.acquire(blocking=False)
    client.pexpire(lock.name, 1000)
    errors = []

    def renew():
        try:
            setup_lease(lock).renew()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=renew)
    thread.start()
    thread.join()
    assert errors == []
    assert client.pttl(lock.name) > 1000
    lock.release()
