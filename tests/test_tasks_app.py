"""The Celery configuration that the pipeline's guarantees rest on, shown by what a real
broker does with it: priority order, JSON only, redelivery of unacknowledged messages."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
from kombu.exceptions import ContentDisallowed, EncodeError

from config.settings import load_settings
from tasks.application import GPU_QUEUE, PRIORITIES, PriorityError, create_app, priority_level


def _probe(label: str) -> str:
    return label


@pytest.fixture()
def app(redis_url):
    """An app on the test's Redis, with a probe task and a 1 s visibility timeout."""
    app = create_app(load_settings(redis_url=redis_url, visibility_timeout_s=1))
    app.task(name="proofq.probe")(_probe)
    yield app
    app.close()


@contextmanager
def gpu_queue(app, *, accept=None):
    """A plain consumer of the gpu queue (messages are read, not run)."""
    with app.connection_for_read() as connection:
        queue = connection.SimpleQueue(app.amqp.queues[GPU_QUEUE],
                                       accept=accept or app.conf.accept_content)
        try:
            yield queue
        finally:
            queue.close()


def test_higher_priorities_are_served_first_and_unnamed_messages_are_normal(app):
    probe = app.tasks["proofq.probe"]
    probe.apply_async(["low"], priority=PRIORITIES["low"])
    probe.apply_async(["unnamed"])
    app.send_task("proofq.probe", args=["unnamed, by name"])
    probe.apply_async(["high"], priority=PRIORITIES["high"])
    probe.apply_async(["normal"], priority=PRIORITIES["normal"])
    probe.apply_async(["critical"], priority=PRIORITIES["critical"])
    probe.apply_async(["low, behind"], priority=PRIORITIES["low"] + 2)
    with gpu_queue(app) as queue:
        served = []
        for _ in range(7):
            message = queue.get(timeout=30)
            served.append(message.decode()[0][0])
            message.ack()
    assert served == ["critical", "high", "unnamed", "unnamed, by name", "normal", "low",
                      "low, behind"]
    with pytest.raises(PriorityError, match="priority: unknown priority 'urgent'"):
        priority_level("urgent")


def test_only_json_crosses_the_wire(app):
    """A pickled message is refused by a consumer with the app's settings; what JSON cannot
    carry is refused when sent."""
    app.tasks["proofq.probe"].apply_async(["pickled"], serializer="pickle")
    with gpu_queue(app) as queue, pytest.raises(ContentDisallowed, match="pickle"):
        queue.get(timeout=30)
    with pytest.raises(EncodeError):
        app.tasks["proofq.probe"].apply_async([object()])


def test_a_message_whose_consumer_vanished_is_delivered_again(app):
    """Late acks: a message taken but never acknowledged (a worker killed mid-task) comes
    back once the visibility timeout (1 s here) has passed, to another consumer."""
    app.tasks["proofq.probe"].apply_async(["once"])
    with app.connection_for_read() as lost:
        taken = lost.SimpleQueue(app.amqp.queues[GPU_QUEUE], accept=["json"]).get(timeout=30)
        assert taken.decode()[0] == ["once"]
        deadline = time.monotonic() + 120
        with gpu_queue(app) as queue:
            while True:
                try:
                    again = queue.get(timeout=1)
                    break
                except queue.Empty:
                    assert time.monotonic() < deadline, "the message was never delivered again"
            assert again.decode()[0] == ["once"]
            again.ack()
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost


def test_results_are_kept_in_the_configured_redis(app, redis_url):
    app.backend.store_result("probe-result", {"ok": 1}, "SUCCESS")
    assert app.AsyncResult("probe-result").result == {"ok": 1}
    assert redis.Redis.from_url(redis_url).exists("celery-task-meta-probe-result")


def _modules_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after ``statement`` (what a producer pays)."""
    code = f"import json, sys; {statement}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1]).stdout
    return set(json.loads(out.splitlines()[-1]))


#: What only a worker needs: the task graph, the bootstep and runtime, GPU code, metrics,
#: the prover, the proof types' worker halves (``snark.registry`` imports them on a worker).
WORKER_ONLY = ("tasks.pipeline", "tasks.worker", "workers", "gpu", "prometheus_client",
               "snark.groth16", "snark.porep.prove", "py_arkworks_bls12381",
               "snark.porep.worker", "snark.snarkjs.worker", "snark.unit_work",
               "snark.filecoin.worker", "snark.filecoin.circuit", "snark.gadgets",
               "snark.filecoin.params", "snark.native")

#: What a producer may take from ``workers/``: what a refused Redis write looks like (a
#: producer waits it out, or refuses new jobs near ``maxmemory``). Nothing else of it.
PRODUCER_SAFE = ("workers", "workers.redis_faults")


@pytest.mark.parametrize("statement", [
    "import client.api", "import tasks", "from tasks.submission import accept, enqueue",
    "import client.intake", "from snark.filecoin.post.job import curio_request"])
def test_producers_do_not_import_the_worker_machinery(statement):
    loaded = _modules_after(statement)
    pulled = sorted(m for m in loaded if (m.split(".")[0] in WORKER_ONLY or m in WORKER_ONLY)
                    and m not in PRODUCER_SAFE)
    assert not pulled, f"{statement} imports worker machinery: {pulled}"
    assert {"tasks.submission", "snark.registry"} <= _modules_after("import client.api")


def test_a_worker_half_is_imported_when_first_asked_for():
    loaded = _modules_after(
        "from pathlib import Path; from snark.proof_types import Storage; "
        "from snark.registry import proof_type, worker_half; "
        "assert 'snark.porep.worker' not in sys.modules; "
        "worker_half(proof_type('porep-demo'), Storage(Path('.')))")
    assert "snark.porep.worker" in loaded and "snark.snarkjs.worker" not in loaded


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


def test_a_task_result_is_a_typed_record_sent_as_json():
    import json

    from tasks.jobs import JobStatus, Outcome
    from tasks.pipeline import TaskResult

    given_back = TaskResult("j1", Outcome.RETURNED, 3, error="setup: KeyFileError: gone")
    assert json.loads(json.dumps(given_back.to_json())) == {
        "job": "j1", "outcome": "returned", "partition": 3,
        "error": "setup: KeyFileError: gone"}
    assert TaskResult("j2", JobStatus.DONE).to_json() == {"job": "j2", "outcome": "done"}
