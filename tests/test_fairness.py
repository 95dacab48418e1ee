"""One large job cannot starve the jobs behind it at its priority: its units past the fair
share go one or two transport steps behind, never into the next priority (the measured
case, a 20,000-partition job, is ``bench/chaos.py --only huge``)."""

from __future__ import annotations

import pytest

from config.settings import load_settings
from tasks.application import (DEFAULT_PRIORITY, GPU_QUEUE, PRIORITIES, PRIORITY_STEPS, band,
                               create_app, unit_priority)


@pytest.mark.parametrize("priority", list(PRIORITIES))
def test_units_past_the_fair_share_step_back_within_their_priority(priority, rng):
    share = rng.randrange(1, 20)
    steps = [unit_priority(priority, unit, share) for unit in range(share * share + 5)]
    level = PRIORITIES[priority]
    assert steps[:share] == [level] * share
    assert set(steps[share:share * share]) <= {level + 1}
    assert steps[-1] == level + 2
    assert all(step in PRIORITY_STEPS for step in steps)
    later = [p for p in PRIORITIES.values() if p > level]
    assert not later or max(steps) < min(later)


@pytest.mark.parametrize("priority", list(PRIORITIES))
def test_every_unit_of_a_job_waits_for_the_gpu_locks_in_its_priority_s_band(priority, rng):
    share = rng.randrange(1, 20)
    units = range(share * share + 5)
    assert {band(unit_priority(priority, unit, share)) for unit in units} == {
        PRIORITIES[priority]}
    assert band(None) == PRIORITIES[DEFAULT_PRIORITY]


def test_a_small_job_is_served_before_a_large_job_s_later_units(redis_url, rng):
    """Through the real transport: the large job's unit past its share was sent first, the
    small job's first unit after it, and the small one is taken first."""
    share = rng.randrange(2, 10)
    app = create_app(load_settings(redis_url=redis_url))
    big = unit_priority("normal", share + rng.randrange(100), share)
    app.send_task("proofq.prove_partition", ("big", share), queue=GPU_QUEUE, priority=big)
    app.send_task("proofq.prove_partition", ("small", 0), queue=GPU_QUEUE,
                  priority=unit_priority("normal", 0, share))
    with app.connection_for_read() as connection:
        queue = app.amqp.queues[GPU_QUEUE](connection.default_channel)
        first, second = queue.get(no_ack=True), queue.get(no_ack=True)
    assert [first.headers["argsrepr"], second.headers["argsrepr"]] == [
        "('small', 0)", f"('big', {share})"]
    app.close()
