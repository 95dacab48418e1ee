"""GPU binding: CUDA_VISIBLE_DEVICES pinning and the identities locks are keyed by."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import gpu
from workers.gpu_binding import (PINNED_ENV, BindingError, bind_cpu, host_name, pin_process,
                                 probe_gpu)

pytestmark = pytest.mark.slow  # pinned child processes and a celery worker

GPU_OK, GPU_WHY = gpu.available()


@pytest.fixture()
def clean_env(monkeypatch):
    """Neither variable set; both restored after the test (pinning writes them)."""
    for name in ("CUDA_VISIBLE_DEVICES", PINNED_ENV):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    return monkeypatch


def test_pin_sets_the_only_visible_device(clean_env):
    pin_process(3)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "3"
    pin_process(3)  # again, same GPU: nothing changes
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "3"
    with pytest.raises(BindingError, match="already pinned to gpu 3"):
        pin_process(1)


def test_pin_indexes_a_launcher_narrowed_list(clean_env):
    clean_env.setenv("CUDA_VISIBLE_DEVICES", "4, 6")
    pin_process(1)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "6"


@pytest.mark.parametrize("visible, number, message", [
    ("4,6", 2, "lists 2 device"), (None, -1, "not a GPU number")])
def test_pin_refuses_what_is_not_there(clean_env, visible, number, message):
    if visible is not None:
        clean_env.setenv("CUDA_VISIBLE_DEVICES", visible)
    with pytest.raises(BindingError, match=message):
        pin_process(number)


def test_a_child_of_a_pinned_parent_keeps_the_pin(clean_env):
    pin_process(2)
    code = ("import os, json; from workers.gpu_binding import pin_process; pin_process(2); "
            "print(json.dumps(os.environ['CUDA_VISIBLE_DEVICES']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == "2"


def test_cpu_pseudo_uuid_is_shared_per_gpu_number():
    assert bind_cpu(1).gpu == bind_cpu(1).gpu
    assert bind_cpu(1).gpu.key_prefix == f"proofq:gpu:{host_name()}:cpu-1"
    assert bind_cpu(None).gpu.uuid == f"cpu.p{os.getpid()}"  # a CPU worker: its own device
    assert bind_cpu(None, devices=1).gpu.uuid == "cpu.0"    # or one shared per host
    assert bind_cpu(0).total_bytes > 0 and bind_cpu(0).device_id is None


def test_a_celery_pool_process_proves_on_the_gpu_its_worker_was_pinned_to(clean_env, redis_url):
    # `--gpu 1` pins the parent; a pool process starting its runtime must keep device 1,
    # not fall back to the launcher's device list (where device 0 is GPU 0).
    code = ("import os; from workers.gpu_binding import pin_process; pin_process(1); "
            "import tasks.worker as w; w._StartDecision.gpu = 1; w.runtime().close(); "
            "print(os.environ.get('CUDA_VISIBLE_DEVICES'))")
    env = {**os.environ, "PROOFQ_REDIS_URL": redis_url, "PROOFQ_BACKEND": "cpu"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.strip().splitlines()[-1] == "1"


def test_the_gpu_probe_runs_in_a_child_and_says_why(clean_env):
    ok, reason = probe_gpu(0)
    assert ok == GPU_OK
    if not ok:
        assert reason.startswith("gpu 0: ") and len(reason) > len("gpu 0: ")
    assert "CUDA_VISIBLE_DEVICES" not in os.environ  # the caller was not pinned


@pytest.mark.skipif(GPU_OK, reason="needs a machine without a usable GPU")
@pytest.mark.parametrize("backend", ["gpu", "auto"])
def test_a_gpu_worker_without_a_usable_gpu(clean_env, redis_url, tmp_path, backend):
    """backend=gpu: the worker refuses to start, so it takes no task it could only fail;
    auto: it warns and proves on the CPU."""
    from client.api import Client
    from client.local_cluster import WorkerProcess, worker_command
    from config.settings import load_settings

    node = f"probe-{backend}@%h"
    worker = WorkerProcess(redis_url, worker_command(gpu=0, concurrency=1, node=node),
                           log_dir=tmp_path, env={"PROOFQ_BACKEND": backend}).start()
    try:
        if backend == "auto":
            with Client(redis_url, load_settings(redis_url=redis_url)) as client:
                worker.wait_ready(client.app, 60, node=node)
            assert "this worker proves on the CPU (PROOFQ_BACKEND=auto)" in worker.log_tail(200)
        else:
            deadline = time.monotonic() + 120
            while worker.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not worker.alive()
            assert "proofq worker: gpu 0: " in worker.log_tail()
            assert "not starting (PROOFQ_BACKEND=gpu)" in worker.log_tail()
    finally:
        worker.stop(graceful=False)
