"""``proofq view`` against a real cluster (redis-server, two ``celery -A tasks worker``
processes, real proofs): its data, and its page as headless Chromium renders it.

Three jobs: one done, one failed by its check, one whose partitions are parked in
``compute_wait`` (the CPU device's compute lock held here) while the page is looked at.
The Chromium test skips where Debian's chromium is not installed (apt-get install chromium)
and, with PROOFQ_VIEW_SCREENSHOTS=DIR, writes the screenshots docs/operators.md shows there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import redis

from client.api import Client, JobError
from client.embedded import EmbeddedRedis
from client.local_cluster import WorkerProcess, worker_command
from config.settings import load_settings
from snark.porep.prove import load_or_setup_key
from snark.porep.seal import seal
from workers.gpu_binding import host_name
from workers.heartbeat import Heartbeat
from workers.locks import GpuId, GpuLock
from tests.timing import scaled

pytestmark = pytest.mark.slow

SECTOR, K = 2048, 1
WAIT_S = scaled(300)  # waits for proofs: tests/timing.py
PROOFQ = str(Path(sys.executable).parent / "proofq")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Redis, two CPU workers sharing one CPU device, and the three jobs (the third parked)."""
    params = tmp_path_factory.mktemp("params")
    load_or_setup_key(seal(SECTOR, 1, K), params)
    env = {"PROOFQ_PARAMS_DIR": str(params), "PROOFQ_BACKEND": "cpu", "PROOFQ_CPU_DEVICES": "1",
           "PROOFQ_HEARTBEAT_S": "1"}
    with EmbeddedRedis() as server, Client(server.url, load_settings(
            redis_url=server.url, params_dir=params)) as client:
        workers = []
        try:
            for n in range(2):
                node = f"v{n}-{uuid.uuid4().hex[:6]}@%h"
                workers.append(WorkerProcess(server.url, worker_command(
                    gpu=None, concurrency=1, node=node), log_dir=params, env=env).start())
                workers[-1].wait_ready(client.app, 120, node=node)
            jobs = _three_jobs(client)
            yield server.url, client, jobs
        finally:
            for worker in workers:
                worker.stop(graceful=False)


def _three_jobs(client: Client) -> dict[str, str]:
    done = client.submit(seal(SECTOR, 2, K))
    client.result(done, timeout=WAIT_S)
    c1 = seal(SECTOR, 2, K)
    data = json.loads(c1.to_json())
    challenge = data["vanilla_proofs"][1]["challenges"][0]
    challenge["index"] = (challenge["index"] + 1) % c1.nodes
    failed = client.submit(data)
    with pytest.raises(JobError):
        client.result(failed, timeout=WAIT_S)
    return {"done": done, "failed": failed}


@pytest.fixture()
def parked(cluster):
    """A two-partition job whose partitions wait in compute_wait, both, while the test runs."""
    url, client, jobs = cluster
    heartbeat = Heartbeat(1.0)
    lock = GpuLock(redis.Redis.from_url(url), GpuId(host_name(), "cpu.0"), "compute",
                   lease_s=120, heartbeat=heartbeat)
    held = lock.acquire("test")
    try:
        job = client.submit(seal(SECTOR, 2, K))
        _poll(lambda: len([f for _, f in client.store.redis.xrange("proofq:events")
                           if f[b"job"].decode() == job and f[b"phase"] == b"mem"]) == 2)
        yield job
    finally:
        held.release()
        heartbeat.close()
    client.result(job, timeout=WAIT_S)


@pytest.fixture()
def view(cluster):
    """``proofq view --port 0`` as a user starts it; its base URL."""
    url, _, _ = cluster
    base = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    server = subprocess.Popen([PROOFQ, "view", "--port", "0"], env={**base,
                              "PROOFQ_REDIS_URL": url}, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        match = re.match(r"job view on (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops\)", line)
        assert match, line
        yield match.group(1)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _poll(condition, timeout_s: float = WAIT_S):
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.2)
    return value


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def test_the_view_data_has_jobs_partitions_phases_devices_and_failures(cluster, parked, view):
    _, _, jobs = cluster
    data = json.loads(_get(view + "api/view"))
    by_id = {job["job"]: job for job in data["jobs"]}
    assert [job["job"] for job in data["jobs"]][:3] == [parked, jobs["failed"], jobs["done"]]
    done = by_id[jobs["done"]]
    assert [u["partition"] for u in done["units"]] == [0, 1]
    for unit in done["units"]:
        phases = [s["phase"] for s in unit["phases"]]
        assert phases[0] == "queued" and phases[-1] == "verify" and "compute" in phases
        assert all(s["start"] <= s["end"] for s in unit["phases"])
    failed = by_id[jobs["failed"]]
    assert failed["status"] == "failed" and failed["units"] == []
    assert failed["error"].startswith("check: vanilla_proofs[1].challenges[0].index: ")
    running = by_id[parked]
    assert running["status"] == "proving"
    for unit in running["units"]:
        now = unit["phases"][-1]
        assert (now["phase"], now.get("running")) == ("compute_wait", True)
    [device] = data["devices"]
    assert device["device"].endswith("/cpu.0") and 0 < device["busy_share"] <= 1
    assert len(device["busy"]) == 2  # the done job's two compute phases
    locks = {w["lock"]: w for w in data["lock_waits"]}
    assert set(locks) == {"mem", "compute"} and locks["compute"]["count"] >= 2
    assert _get_status(view + "api/view?jobs=x") == 400
    assert _get_status(view + "nothing") == 404


def _get_status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("no chromium here (Debian: apt-get install chromium)")
    return found


def test_the_page_renders_in_headless_chromium(cluster, parked, view, tmp_path):
    chromium = _chromium()
    _, _, jobs = cluster
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--window-size=1400,780", "--virtual-time-budget=8000",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*flags, "--dump-dom", view], capture_output=True, text=True,
                         timeout=180).stdout
    # The jobs table: all three, with their stages.
    for job in (parked, jobs["failed"], jobs["done"]):
        assert f'data-job="{job}"' in dom, dom[:2000]
    assert re.search(rf'<tr data-job="{parked}" class="selected">', dom)  # the active one
    assert 'class="badge proving"' in dom and 'class="badge failed"' in dom
    # Its timeline: both partitions, each waiting for the compute lock now.
    assert dom.count('class="lane"') == 2
    assert len(re.findall(r'class="bar" data-phase="compute_wait"', dom)) >= 2
    assert 'data-phase="mem_wait"' in dom and 'data-phase="synthesize"' in dom
    # GPU busy over time, lock waits, and the failure with its reason.
    assert re.search(r'class="device" data-device="[^"]+/cpu\.0"', dom)
    assert re.search(r"\d+\.\d% busy", dom)
    assert 'data-lock="compute"' in dom
    assert "check: vanilla_proofs[1].challenges[0].index: " in dom
    # Screenshots: the live job, and the done one chosen by the page's address.
    shots = Path(os.environ.get("PROOFQ_VIEW_SCREENSHOTS") or tmp_path)
    for name, url in (("job-view-live.png", view), ("job-view-done.png",
                                                     f"{view}#job={jobs['done']}")):
        subprocess.run([*flags, f"--screenshot={shots / name}", url], capture_output=True,
                       timeout=180, check=True)
        shot = (shots / name).read_bytes()
        assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000, name
    selected = subprocess.run([*flags, "--dump-dom", f"{view}#job={jobs['done']}"],
                              capture_output=True, text=True, timeout=180).stdout
    assert re.search(rf'<tr data-job="{jobs["done"]}" class="selected">', selected)
    assert 'data-phase="verify"' in selected and 'data-phase="compute"' in selected


def test_the_page_takes_the_phases_from_the_enum():
    """One list of phases: the page gets ``Phase``'s words and order, and its waits."""
    import json
    import re

    from client.view.server import PAGE
    from workers.phase_events import PHASES, WAITS, Phase

    page = PAGE.decode()
    assert "__PHASES__" not in page and "__WAITS__" not in page
    phases = re.search(r"const PHASES = (\[[^\]]*\]);", page).group(1)
    assert json.loads(phases) == [p.value for p in Phase] == list(PHASES)
    waits = re.search(r"const WAITS = new Set\((\[[^\]]*\])\);", page).group(1)
    assert json.loads(waits) == ["queued", "mem_wait", "compute_wait"] == list(WAITS)
