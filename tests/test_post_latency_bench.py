"""The PoSt latency bench runs end to end on the CPU stand-in and reports what it measured."""

from __future__ import annotations

import json
import shutil

import pytest

from bench import post_latency


def test_percentile_is_the_nearest_rank():
    values = [float(v) for v in range(1, 21)]
    assert post_latency.percentile(values, 0.5) == 10.0
    assert post_latency.percentile(values, 0.99) == 20.0  # p99 of 20: their maximum
    assert post_latency.percentile([3.0], 0.99) == 3.0 and post_latency.percentile([], 0.5) is None


@pytest.mark.slow
def test_cpu_run_writes_a_report(post_2kib_dev_params, tmp_path, capsys):
    params = tmp_path / "params"  # the session's PoSt keys; the PoRep one made here
    shutil.copytree(post_2kib_dev_params, params)
    rc = post_latency.main(["--backend", "cpu", "-c", "2", "--critical-slots", "1",
                            "--winning", "2", "--idle-winning", "1", "--window", "1",
                            "--partitions", "2", "--baseline-jobs", "1", "--interval", "0.2",
                            "--params", str(params), "--out", str(tmp_path)])
    assert rc == 0
    [path] = tmp_path.glob("post-latency-*.json")
    report = json.loads(path.read_text())
    assert report["command"] and report["commit"] and report["device"] and report["date"]
    for name, count in (("winning_idle", 1), ("winning_under_load", 2),
                        ("window_under_load", 1)):
        figures = report[name]
        assert figures["requests"] == count and figures["failed"] == 0
        assert 0 < figures["p50_s"] <= figures["p99_s"]
    assert report["porep"]["jobs_done"] >= 2 and not report["porep"]["jobs_failed"]
    requests = report["requests"]
    assert all(r["ok"] and r["verified"] and "compute" in r["phases"] for r in requests)
    assert "WinningPoSt, PoRep load" in capsys.readouterr().out
