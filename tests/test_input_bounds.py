"""Every way in is bounded: nesting, duplicate keys, huge numbers, units per job and what a
job costs Redis, refused in one line at the API, the CLI and the intake (a poison entry
never stops the intake, nor the good entries behind it)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from client.api import Client
from client.cli import main
from client.intake import GROUP, INTAKE_STREAM, Intake
from config.settings import load_settings
from snark.job_input import InputLimits
from snark.porep.seal import seal
from snark.registry import names
from tasks.application import PRIORITIES
from tasks.jobs import RESULTS_STREAM
from tasks.submission import UNIT_REDIS_BYTES, SubmitError

KEY = "ab" * 16  # a circom key id's form (the producer never opens the key)


def _deep(levels: int) -> str:
    return '{"key": "' + KEY + '", "witnesses": ' + "[" * levels + "]" * levels + "}"


@pytest.fixture()
def client(redis_url):
    with Client(redis_url, load_settings(redis_url=redis_url)) as c:
        yield c


@pytest.mark.parametrize("proof_type", ["porep-demo", "circom", "filecoin"])
def test_deep_nesting_is_a_submit_error_not_a_recursion_error(client, proof_type, rng):
    levels = rng.randrange(2_000, 50_000)
    print(f"{levels} levels")
    with pytest.raises(SubmitError, match="nested too deeply"):
        client.submit(_deep(levels), proof_type=proof_type)
    assert client.store.redis.keys("proofq:job:*") == []


@pytest.mark.parametrize("proof_type", ["porep-demo", "circom", "filecoin"])
def test_a_duplicate_key_is_refused_naming_it(client, proof_type, rng):
    name = rng.choice(["key", "witnesses", "sector_size", "c1"])
    text = '{"%s": 1, "other": 2, "%s": 3}' % (name, name)
    with pytest.raises(SubmitError, match=f"^{name}: duplicate key$"):
        client.submit(text, proof_type=proof_type)


def test_a_duplicate_key_deep_inside_a_c1_names_its_place(client):
    c1 = json.loads(seal(2048, 2, 1).to_json())
    text = json.dumps(c1).replace('"index": ', '"index": 0, "index": ', 1)
    where = r"^vanilla_proofs\[0\]\.challenges\[0\]\.index"
    with pytest.raises(SubmitError, match=where + ": duplicate key"):
        client.submit(text)


@pytest.mark.parametrize("proof_type", ["porep-demo", "circom", "filecoin"])
def test_a_5000_digit_number_names_its_field(client, proof_type, rng):
    digits = rng.randrange(4_301, 6_000)
    text = '{"sector_size": ' + "9" * digits + "}"
    with pytest.raises(SubmitError, match=f"^sector_size: a number of {digits} digits"):
        client.submit(text, proof_type=proof_type)


def _circom_paths(units: int) -> str:
    return json.dumps({"key": KEY, "witnesses": [{"path": f"w{i}.wtns"} for i in range(units)]})


def test_units_per_job_are_bounded_by_the_setting(redis_url, rng):
    limit = rng.randrange(2, 50)
    settings = load_settings(redis_url=redis_url, max_units_per_job=limit)
    with Client(redis_url, settings) as client:
        client.submit(_circom_paths(limit), proof_type="circom")
        with pytest.raises(SubmitError, match=f"max_units_per_job \\({limit}"):
            client.submit(_circom_paths(limit + 1), proof_type="circom")


def test_a_job_that_would_amplify_past_the_ratio_is_refused(client):
    """10,000 witnesses by path: ~200 kB of request, ~20 MB of Redis (the finding: 90x)."""
    text = _circom_paths(10_000)
    with pytest.raises(SubmitError, match="max_amplification"):
        client.submit(text, proof_type="circom")
    inline = {"key": KEY, "witnesses": [{"wtns": "A" * 4096} for _ in range(600)]}
    client.submit(json.dumps(inline), proof_type="circom")  # 2.4 MB for 600 units: fine


def test_a_unit_costs_redis_no_more_than_the_estimate(client, redis_url):
    """``UNIT_REDIS_BYTES`` against a real partition message of the pipeline's shape."""
    from tasks.application import GPU_QUEUE, unit_priority
    app = client.app
    app.send_task("proofq.prove_partition", ("intake-1733000000000-0", 12345),
                  {"queued_at": 1.7e9}, queue=GPU_QUEUE,
                  priority=unit_priority("normal", 0, 8))
    r = client.store.redis
    [key] = [k for k in r.keys(f"{GPU_QUEUE}*") if r.type(k) == b"list"]
    message = r.lindex(key, 0)
    part = 192 * 2 + 64  # a porep proof in hex, a hash field's overhead
    print(f"message {len(message)} bytes, estimate {UNIT_REDIS_BYTES} per unit")
    assert len(message) + part <= UNIT_REDIS_BYTES


def test_a_poison_entry_is_rejected_and_the_good_ones_behind_it_become_jobs(client, rng):
    """Before: a deeply nested request raised RecursionError out of the intake, at every
    reclaim: the entries behind it never became jobs."""
    r = client.store.redis
    intake = Intake(client, name="a", block_s=0.1)
    c1 = seal(2048, 1, 1).to_json()
    poison = r.xadd(INTAKE_STREAM, {"type": "circom", "input": _deep(rng.randrange(2_000,
                                                                                  20_000))})
    good = [r.xadd(INTAKE_STREAM, {"job": f"good-{i}", "c1": c1}) for i in range(3)]
    handled = 0
    while handled < 4:
        handled += intake.process_once()
    assert [client.status(f"good-{i}").status for i in range(3)] == ["queued"] * 3
    [rejected] = [f for _, f in r.xrange(RESULTS_STREAM)]
    assert rejected[b"entry"] == poison and rejected[b"status"] == b"rejected"
    assert b"nested too deeply" in rejected[b"error"]
    assert r.xpending(INTAKE_STREAM, GROUP)["pending"] == 0 and len(good) == 3


def test_an_entry_that_breaks_the_submit_is_rejected_not_fatal(client, monkeypatch):
    """Whatever raises while an entry is handled (here a type's reader with a bug), the
    entry is answered and acknowledged."""
    from snark.porep.proof_type import PorepType

    def broken(self, raw, limits):
        raise KeyError("a bug")

    monkeypatch.setattr(PorepType, "admit", broken)
    r = client.store.redis
    entry = r.xadd(INTAKE_STREAM, {"c1": "{}"})
    assert Intake(client, name="a", block_s=0.1).process_once() == 1
    [rejected] = [f for _, f in r.xrange(RESULTS_STREAM)]
    assert rejected[b"entry"] == entry
    assert rejected[b"error"] == b"intake: the request could not be handled (KeyError)"
    assert r.xpending(INTAKE_STREAM, GROUP)["pending"] == 0


def test_the_cli_refuses_a_nested_job_in_one_line(redis_url, tmp_path):
    """Before: exit 1 and a 50-line RecursionError traceback."""
    job = tmp_path / "job.json"
    job.write_text(_deep(random.randrange(2_000, 20_000)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    result = subprocess.run([str(Path(sys.executable).parent / "proofq"), "submit", "--type",
                             "circom", str(job)], capture_output=True, text=True, timeout=120,
                            env={**env, "PROOFQ_REDIS_URL": redis_url})
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "nested too deeply" in result.stderr


@pytest.mark.parametrize("option", [["--type", "winning"], ["--priority", "urgent"]])
def test_a_bad_choice_is_one_line(option, tmp_path):
    result = CliRunner().invoke(main, ["submit", *option, str(tmp_path / "c1.json")])
    assert result.exit_code == 2
    choices = ", ".join(names() if option[0] == "--type" else PRIORITIES)
    assert result.output.splitlines() == [
        f"Error: {option[0]}: {option[1]!r} is not one of {choices}"]


def test_limits_come_from_the_settings():
    settings = load_settings(max_units_per_job=7, max_amplification=3.5)
    limits = InputLimits.of(settings)
    assert (limits.max_units, limits.max_amplification) == (7, 3.5)
