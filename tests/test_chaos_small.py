"""``bench/chaos.py`` at a small scale in the suite, so a regression of what it measures
fails a build: workers started while Redis is full or read-only, requests through the
intake with a trimming producer, pool processes that lose their device context, and
whole-host crashes under load (Redis with AOF and
every worker ``kill -9`` at once, one of them with the AOF taken back a second, as a power
loss leaves it)."""

from __future__ import annotations

import json

import pytest

from bench import chaos

pytestmark = pytest.mark.slow  # real workers, crashes and restarts: ~2 min on 2 cores


def test_bad_weather_the_intake_and_host_crashes_lose_nothing_they_should_not(tmp_path):
    out = tmp_path / "chaos.json"
    chaos.main(["--only", "weather", "intake", "lost", "crash", "--scale", "0.25",
                "--crashes", "2", "--losses", "2",
                "--crash-every", "10", "--rate", "0.5", "--lose", "1", "--reap-after", "10",
                "--timeout", "600", "--out", str(out)])
    scenarios = json.loads(out.read_text())["scenarios"]
    print(json.dumps(scenarios, indent=1))
    for weather in scenarios["weather"].values():
        assert weather["worker_alive_while_refused"] and weather["worker_alive_after"]
        assert weather["done"] == weather["verified"] == weather["jobs"]
    intake = scenarios["intake"]
    assert intake["stream_entries_after"] == 0
    assert intake["statuses"] == {"done": intake["became_jobs"]}
    if intake["redis7"]:  # only Redis 7 counts what a producer trimmed unread
        assert intake["unaccounted"] == 0 and intake["reported_lost"] > 0
    lost = scenarios["lost"]  # a process whose device context is lost, replaced
    assert all(r["process_gone_and_pool_refilled"] for r in lost["losses"]), lost["losses"]
    assert lost["done"] == lost["verified"] == lost["jobs"] and lost["refusals"] == 0
    assert lost["lost_device_jobs_verified"] == lost["lost_device_jobs"] == 2
    assert lost["partitions_proved_more_than_once"] == 0
    result = scenarios["crash"]
    assert result["submitted"] >= 5 and result["workers_alive"] == 2
    assert result["done"] == result["verified"] == result["submitted"] - result["lost"]
    assert result["published_twice_or_more"] == 0
    for crash in result["crashes"]:  # a job lost only in a power loss's last second
        rewound = crash["aof_rewound_s"]
        window = rewound + 0.5 if rewound is not None else 0
        assert all(s <= window for s in crash["lost_submitted_within_s_before"]), crash
    assert result["lost"] == sum(len(c["lost_submitted_within_s_before"])
                                 for c in result["crashes"])
