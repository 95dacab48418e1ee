"""The Celery configuration that the pipeline's guarantees rest on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def _modules_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after ``statement`` (what a producer pays)."""
    code = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1]).stdout
    return set(json.loads(out.splitlines()[-1]))


#: What only a worker needs: the task graph, the bootstep and runtime, GPU code, metrics,
#: the prover.
WORKER_ONLY = ("tasks.pipeline", "tasks.worker", "workers", "gpu", "prometheus_client",
               "snark.groth16", "snark.porep.prove", "py_arkworks_bls12381")


@pytest.mark.parametrize("statement", [
    "import client.api", "import tasks", "from tasks.submission import accept, enqueue",
    "import client.intake"])
def test_producers_do_not_import_the_worker_machinery(statement):
    loaded = _modules_after(statement)
    pulled = sorted(m for m in loaded if m.split(".")[0] in WORKER_ONLY or m in WORKER_ONLY)
    assert not pulled, f"{statement} imports worker machinery: {pulled}"
    assert "tasks.submission" in _modules_after("import client.api")


def test_a_worker_imports_the_task_graph_and_the_gpu_option_is_there_before():
    # `celery -A tasks worker` reads user options right after loading the app, and imports
    # the app's include (the task graph, the bootstep) when the worker starts.
    loaded = _modules_after(
        "import tasks; assert any(o.name == 'gpu' for o in tasks.app.user_options['worker']); "
        "tasks.app.loader.import_default_modules(); "
        "assert {'proofq.submit', 'proofq.prove_partition'} <= set(tasks.app.tasks); "
        "from tasks.worker import GpuBinding; assert GpuBinding in tasks.app.steps['worker']")
    assert {"tasks.pipeline", "tasks.worker"} <= loaded
    assert create_app(load_settings(redis_url="redis://x:1/0")).conf.broker_url == "redis://x:1/0"


def test_the_setup_lock_lease_is_renewed_from_the_heartbeat_thread(redis_url):
    # A setup outlives its lease; the heartbeat (another thread) must be able to renew it,
    # else a second setup starts and the first one's release fails its job.
    import threading

    import redis

    from tasks.pipeline import _LeaseRenewal, setup_lock

    client = redis.Redis.from_url(redis_url)
    lock = setup_lock(client, "c" * 32, lease_s=60)
    assert lock.acquire(blocking=False)
    client.pexpire(lock.name, 1000)
    errors = []

    def renew():
        try:
            _LeaseRenewal(lock).renew()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    thread = threading.Thread(target=renew)
    thread.start()
    thread.join()
    assert errors == []
    assert client.pttl(lock.name) > 1000
    lock.release()
