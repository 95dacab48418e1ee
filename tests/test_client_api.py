"""The Python API's waiting, against a real redis-server and no worker."""

from __future__ import annotations

import re
import time

import pytest

from client.api import Client
from config.settings import load_settings
from snark.porep.seal import seal


def test_a_deadline_passing_during_check_is_a_timeout_not_a_negative_sleep(redis_url):
    with Client(redis_url, load_settings(redis_url=redis_url)) as client:
        job = client.submit(seal(2048, 1, 1))  # no worker: it stays queued

        def slow_check() -> None:
            time.sleep(0.1)  # outlasts the whole timeout

        with pytest.raises(TimeoutError, match=f"job {job}: still queued"):
            client.wait(job, timeout=0.05, check=slow_check)


def test_a_clients_own_limits_apply_not_the_process_settings(redis_url, monkeypatch, rng):
    """``Client(redis_url, settings)`` parses with its settings' limits, whatever the process
    settings (``get_settings``, here from the environment) say."""
    from config.settings import get_settings
    from tasks.submission import SubmitError

    c1 = seal(2048, rng.randrange(1, 4), 1)
    size = len(c1.to_json())
    monkeypatch.setenv("PROOFQ_MAX_INPUT_BYTES", str(size - 1))  # the process refuses it
    get_settings.cache_clear()
    try:
        roomy = load_settings(redis_url=redis_url, max_input_bytes=size)
        with Client(redis_url, roomy) as client:
            job = client.submit(c1)
            assert client.status(job).partitions == c1.partitions
        tight = load_settings(redis_url=redis_url, max_input_bytes=size - rng.randrange(1, 64))
        assert get_settings().max_input_bytes == size - 1
        monkeypatch.setenv("PROOFQ_MAX_INPUT_BYTES", str(size))  # now the process allows it
        get_settings.cache_clear()
        with Client(redis_url, tight) as client, \
                pytest.raises(SubmitError, match=rf"c1: {size} bytes exceeds max_input_bytes"):
            client.submit(c1)
    finally:
        get_settings.cache_clear()


@pytest.mark.parametrize("as_path", [False, True])
def test_a_file_name_for_the_job_gets_a_hint_to_pass_its_content(redis_url, tmp_path, as_path):
    """Before: 'c1: not valid JSON (expected value at line 1 column 1)' and nothing more."""
    from pathlib import Path

    from tasks.submission import SubmitError

    path = tmp_path / "c1.json"
    path.write_text(seal(2048, 1, 1).to_json())
    given = path if as_path else str(path)
    with Client(redis_url, load_settings(redis_url=redis_url)) as client:
        with pytest.raises(SubmitError) as refused:
            client.submit(given)
        assert str(refused.value).endswith(
            f"(job_input {str(path)!r} looks like a file name: submit takes the job's "
            f"content, e.g. Path({str(path)!r}).read_bytes())")
        assert client.submit(Path(path).read_bytes())  # the content is a job
        with pytest.raises(SubmitError) as refused:
            client.submit('{"sector_size": 2048}')  # JSON text: no hint
        assert "looks like a file name" not in str(refused.value)


def test_the_readme_points_only_to_files_users_have():
    """Before: it named a design document in a repository users do not have."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    text = (root / "README.md").read_text()
    assert "../shared" not in text and "DESIGN.md" not in text
    for name in set(re.findall(r"`((?:docs|bench|docker|tests)/[\w./-]+\.(?:md|py|sh|png|yml))`",
                               text)) | set(re.findall(r"\]\((docs/[\w./-]+)\)", text)):
        assert (root / name).exists(), name


def test_a_keyed_job_of_any_type_that_takes_a_key(redis_url, tmp_path, rng):
    """``keyed_job`` is what ``submit --type T --key K`` sends; ``<type>_job`` names it for a
    type that takes a key (``circom_job``, and ``groth16_job`` by circom's former name)."""
    wtns = [bytes(rng.getrandbits(8) for _ in range(64)), tmp_path / "w.wtns"]
    wtns[1].write_bytes(bytes(rng.getrandbits(8) for _ in range(64)))
    with Client(redis_url, load_settings(redis_url=redis_url)) as client:
        made = client.keyed_job("circom", "f" * 32, wtns)
        assert [ref.wtns for ref in made.witnesses] == [wtns[0], wtns[1].read_bytes()]
        assert client.circom_job("f" * 32, wtns) == made == client.groth16_job("f" * 32, wtns)
        for name in ("snap_job", "nothing_job", "circom"):
            with pytest.raises(AttributeError, match=name):
                getattr(client, name)
