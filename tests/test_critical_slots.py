"""A worker's critical slots, through the real transport on a real Redis: while the
messages of other bands in hand fill every slot but the critical ones, the worker takes
only critical messages, so a WinningPoSt never waits for a PoRep partition to end."""

from __future__ import annotations

import time

import pytest
from kombu import Consumer

from config.settings import load_settings
from tasks.application import GPU_QUEUE, JOBS_QUEUE, PRIORITIES, create_app, unit_priority
from tasks.transport import Channel
from tasks.worker import _critical_slots


@pytest.fixture()
def app(redis_url):
    app = create_app(load_settings(redis_url=redis_url))
    yield app
    app.close()


def _send(app, label: str, priority: int, queue: str = GPU_QUEUE) -> None:
    app.send_task("proofq.prove_partition", (label, 0), queue=queue, priority=priority,
                  argsrepr=label)


def _take(app, processes: int, critical_slots: int, wait_s: float,
          send_later=()) -> list[str]:
    """What a consumer like a worker's (prefetch = its processes, acks late: nothing is
    acknowledged here) holds after ``wait_s``, and after ``wait_s`` more once
    ``send_later`` is sent."""
    held: list[str] = []
    with app.connection_for_read() as connection:
        channel = connection.channel()
        assert isinstance(channel, Channel)
        channel.critical_slots = critical_slots
        channel.basic_qos(0, processes, False)
        queues = [app.amqp.queues[GPU_QUEUE], app.amqp.queues[JOBS_QUEUE]]
        with Consumer(channel, queues=queues, accept=["json"],
                      callbacks=[lambda body, message: held.append(
                          message.headers["argsrepr"])]):
            for later in (send_later, ()):
                deadline = time.monotonic() + wait_s
                while time.monotonic() < deadline:
                    try:
                        connection.drain_events(timeout=0.2)
                    except TimeoutError:
                        pass
                for label, priority, queue in later:
                    _send(app, label, priority, queue)
    return held


def test_a_busy_worker_takes_a_winning_post_into_its_critical_slot(app, rng):
    processes = rng.randrange(2, 5)
    for i in range(processes + 2):
        _send(app, f"porep-{i}", unit_priority("normal", i, 100))
    later = [("winning-post", PRIORITIES["critical"], JOBS_QUEUE),
             ("porep-late", PRIORITIES["high"], GPU_QUEUE)]
    held = _take(app, processes, 1, wait_s=1.5, send_later=later)
    # the other slots took PoRep; the last one stayed free, then took the critical job
    # (its submit, on the jobs queue) and nothing of another band, however high
    assert held == [f"porep-{i}" for i in range(processes - 1)] + ["winning-post"]


def test_without_critical_slots_every_process_takes_porep(app, rng):
    processes = rng.randrange(2, 5)
    for i in range(processes + 2):
        _send(app, f"porep-{i}", PRIORITIES["normal"])
    later = [("winning-post", PRIORITIES["critical"], JOBS_QUEUE)]
    held = _take(app, processes, 0, wait_s=1.5, send_later=later)
    assert held == [f"porep-{i}" for i in range(processes)]  # the WinningPoSt waits


def test_critical_work_may_take_every_slot(app, rng):
    processes = rng.randrange(2, 5)
    for i in range(processes + 1):
        _send(app, f"winning-post-{i}", PRIORITIES["critical"] + rng.randrange(3))
    held = _take(app, processes, 1, wait_s=1.5)
    assert len(held) == processes and all(h.startswith("winning-post") for h in held)


def test_critical_slots_leave_a_process_for_other_work():
    assert _critical_slots(1, 3) == 1
    assert _critical_slots(0, 1) == 0
    with pytest.raises(SystemExit, match="--critical-slots 2 .* none of the 2 processes"):
        _critical_slots(2, 2)
