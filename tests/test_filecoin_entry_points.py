"""A malformed Curio c1.json at every door a producer uses — the Python API, ``proofq
submit``, the intake stream, ``proofq prove`` — is one line naming the field, and nothing is
stored or written."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from client.api import Client, SubmitError
from client.intake import INTAKE_STREAM, Intake
from config.settings import load_settings
from snark.filecoin import registered_proof
from snark.filecoin.c1_write import curio_json
from tasks.jobs import RESULTS_STREAM
from tests.filecoin_c1s import random_c1

PROOFQ = str(Path(sys.executable).parent / "proofq")


def _bad_c1s(rng) -> dict[str, tuple[bytes, str]]:
    """Curio encodings broken in the wrapper and in the payload, with the error's start."""
    good = json.loads(curio_json(random_c1(registered_proof("StackedDrg2KiBV1_1"),
                                           np.random.default_rng(rng.getrandbits(64))), 3))
    payload = json.loads(base64.b64decode(good["Phase1Out"]))
    payload["seed"] = payload["seed"][:31]
    short_seed = dict(good, Phase1Out=base64.b64encode(json.dumps(payload).encode()).decode())
    return {
        "sector size": (json.dumps(dict(good, SectorSize=4096)).encode(), "SectorSize: 4096"),
        "short seed": (json.dumps(short_seed).encode(), "Phase1Out.seed: "),
        "not JSON": (b'{"SectorNum": 1, ', "not valid JSON"),
    }


@pytest.fixture()
def client(redis_url):
    with Client(redis_url, load_settings(redis_url=redis_url)) as c:
        yield c


def _nothing_stored(client: Client) -> bool:
    return client.store.redis.keys("proofq:job:*") == []


def _one_line(text: str) -> str:
    [line] = text.strip().splitlines()
    return line


def test_the_api_and_the_intake_refuse_in_one_line(client, rng):
    intake = Intake(client, name="t", block_s=0.1)
    for name, (raw, expected) in _bad_c1s(rng).items():
        with pytest.raises(SubmitError) as info:
            client.submit(raw.decode(), proof_type="filecoin")
        assert expected in _one_line(str(info.value)), (name, str(info.value))
        entry = client.store.redis.xadd(INTAKE_STREAM, {"type": "filecoin", "c1": raw}).decode()
        assert intake.process_once() == 1
        [(_, fields)] = [e for e in client.store.redis.xrange(RESULTS_STREAM)
                         if e[1][b"entry"].decode() == entry]
        assert fields[b"status"] == b"rejected"
        assert expected in _one_line(fields[b"error"].decode()), (name, fields)
        assert _nothing_stored(client), name


def test_submit_and_prove_from_the_cli_refuse_in_one_line(redis_url, rng, tmp_path):
    base = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    for name, (raw, expected) in _bad_c1s(rng).items():
        path = tmp_path / "c1.json"
        path.write_bytes(raw)
        for command in (["submit", "--type", "filecoin", str(path)],
                        ["prove", "--c1", str(path), "-o", str(tmp_path / "proof.bin"),
                         "--key", "development"]):
            run = subprocess.run([PROOFQ, *command], capture_output=True, text=True,
                                 env={**base, "PROOFQ_REDIS_URL": redis_url,
                                      "PROOFQ_PARAMS_DIR": str(tmp_path / "params")},
                                 timeout=300)
            assert run.returncode == 2, (name, command, run.stderr)
            line = _one_line(run.stderr)
            assert line.startswith("Error: ") and expected in line, (name, command, line)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["c1.json"], name
    import redis

    assert redis.Redis.from_url(redis_url).keys("proofq:job:*") == []


def _proofq(*args: str, env: dict[str, str], stdin: bytes | None = None
            ) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    run = subprocess.run([PROOFQ, *args], capture_output=True, input=stdin,
                         env={**base, **env}, timeout=300)
    return subprocess.CompletedProcess(run.args, run.returncode, run.stdout.decode(),
                                       run.stderr.decode())


def test_submit_tells_a_filecoin_c1_from_the_file(redis_url, rng, tmp_path):
    """Before: without --type a Curio c1.json was read as porep-demo's C1 ('c1: 9 required
    fields are missing'), though prove and verify tell the type from the file."""
    path = tmp_path / "c1.json"
    path.write_bytes(curio_json(random_c1(registered_proof("StackedDrg2KiBV1_1"),
                                          np.random.default_rng(rng.getrandbits(64))), 3))
    env = {"PROOFQ_REDIS_URL": redis_url}
    for key in ([], ["--key", "development"]):
        run = _proofq("submit", *key, str(path), "--json", env=env)
        assert run.returncode == 0, (key, run.stderr)
        assert json.loads(run.stdout)["proof_type"] == "filecoin", key
    run = _proofq("submit", "-", "--job-id", "from-stdin", "--json", env=env,
                  stdin=path.read_bytes())  # before: '-: No such file or directory'
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["proof_type"] == "filecoin"
    bad, expected = _bad_c1s(rng)["sector size"]
    path.write_bytes(bad)
    run = _proofq("submit", str(path), env=env)
    assert run.returncode == 2 and expected in _one_line(run.stderr), run.stderr
    run = _proofq("verify", "--c1", "-", "--proof", str(path), env=env, stdin=bad)
    assert run.returncode == 2 and _one_line(run.stderr).startswith("Error: -: SectorSize: 4096")


def test_verify_without_the_official_key_names_the_development_key(rng, tmp_path):
    """Before: a development-key proof verified without --key development said only that
    the official verifying key was missing."""
    path = tmp_path / "c1.json"
    path.write_bytes(curio_json(random_c1(registered_proof("StackedDrg2KiBV1_1"),
                                          np.random.default_rng(rng.getrandbits(64))), 3))
    proof = tmp_path / "proof.bin"
    proof.write_bytes(bytes(192))
    run = _proofq("verify", "--c1", str(path), "--proof", str(proof),
                  env={"PROOFQ_PARAMS_DIR": str(tmp_path / "params"),
                       "PROOFQ_FILECOIN_PARAMS_DIR": str(tmp_path / "official")})
    assert run.returncode == 2, run.stdout + run.stderr
    line = _one_line(run.stderr)
    assert "no verifying key of StackedDrg2KiBV1_1 (official)" in line, line
    assert line.endswith("(a proof made with --key development is verified with --key "
                         "development)"), line
