"""One backend rule (``workers.backend_choice``) for the CLI, the worker and the local cluster.

The compile-failure case (a device is visible, NVRTC refuses the kernels) is simulated
without a GPU by a stand-in ``cupy`` package put first on ``PYTHONPATH``: it reports one
device and raises ``CompileException`` from ``RawModule.compile``. Everything above it is
the real code: ``gpu.get_backend``, the probe child, the worker bootstep and runtime.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

import gpu
from snark.backend import BackendUnavailable
from workers.backend_choice import choose_backend, make_backend

ROOT = Path(__file__).resolve().parents[1]
GPU_OK, _ = gpu.available()

_STUB = {
    "cupy/__init__.py": """
        from cupy import cuda


        class RawModule:
            def __init__(self, code, options=()):
                self.code = code

            def compile(self):
                raise cuda.compiler.CompileException(
                    "nvrtc: error: simulated compile failure")
        """,
    "cupy/cuda/__init__.py": """
        from cupy.cuda import compiler, runtime


        class Device:
            def __init__(self, device=0):
                self.id = device

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False


        class Stream(Device):
            def __init__(self, non_blocking=False):
                super().__init__()
        """,
    "cupy/cuda/runtime.py": """
        def getDeviceCount():
            return 1
        """,
    "cupy/cuda/compiler.py": """
        class CompileException(Exception):
            pass
        """,
}


@pytest.fixture()
def nvrtc_fails(tmp_path) -> dict[str, str]:
    """The environment of a process that sees one GPU whose kernels do not compile."""
    for name, text in _STUB.items():
        path = tmp_path / "stub" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_VISIBLE_DEVICES", "PROOFQ_PINNED_GPU")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "stub"), str(ROOT)])
    return env


@pytest.mark.parametrize("setting, usable, expected", [
    ("cpu", True, "cpu"), ("cpu", False, "cpu"),
    ("auto", True, "gpu"), ("auto", False, "cpu"),
    ("gpu", True, "gpu"), ("gpu", False, BackendUnavailable)])
def test_the_rule(setting, usable, expected):
    asked = []

    def check():
        asked.append(True)
        return usable, "found" if usable else "gpu 0: NVRTC refused a kernel"

    if expected is BackendUnavailable:
        with pytest.raises(BackendUnavailable, match="NVRTC refused a kernel"):
            choose_backend(setting, check)
        return
    choice = choose_backend(setting, check)
    assert choice.name == expected
    assert choice.fell_back == (setting == "auto" and not usable)
    assert asked == ([] if setting == "cpu" else [True])  # cpu never looks for a GPU
    if choice.fell_back:
        assert choice.reason == "gpu 0: NVRTC refused a kernel"


def test_no_gpu_asked_for_is_the_cpu_and_unknown_settings_are_refused():
    assert choose_backend("gpu", None).name == "cpu"
    with pytest.raises(ValueError, match="backend: 'tpu'"):
        choose_backend("tpu", None)


@pytest.mark.skipif(GPU_OK, reason="needs a machine without a usable GPU")
def test_in_process_here_auto_is_the_cpu_and_gpu_says_why():
    assert make_backend("auto").name == "cpu"
    with pytest.raises(BackendUnavailable):
        make_backend("gpu")


@pytest.mark.skipif(GPU_OK, reason="simulates the failure on a machine without a GPU")
def test_a_visible_gpu_whose_kernels_do_not_compile_in_process(nvrtc_fails):
    code = textwrap.dedent("""
        import logging, sys
        logging.basicConfig(level=logging.WARNING, stream=sys.stdout)
        from snark.backend import BackendUnavailable
        from workers.backend_choice import make_backend
        print("auto:", make_backend("auto").name)
        try:
            make_backend("gpu")
        except BackendUnavailable as exc:
            print("gpu refused:", exc)
        """)
    out = subprocess.run([sys.executable, "-c", code], env=nvrtc_fails, cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert "auto: cpu" in out
    assert "CompileException: nvrtc: error: simulated compile failure" in out
    assert "proving on the CPU (PROOFQ_BACKEND=auto)" in out
    assert "gpu refused: GPU backend failed to start on device 0" in out


@pytest.mark.skipif(GPU_OK, reason="simulates the failure on a machine without a GPU")
def test_the_local_cluster_asks_the_same_rule(nvrtc_fails):
    code = textwrap.dedent("""
        from client.local_cluster import ClusterError, choose_gpu
        from config.settings import load_settings
        print("auto:", choose_gpu(load_settings(backend="auto")))
        try:
            choose_gpu(load_settings(backend="gpu"))
        except ClusterError as exc:
            print("gpu refused:", exc)
        """)
    out = subprocess.run([sys.executable, "-c", code], env=nvrtc_fails, cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert "auto: None" in out
    assert "gpu refused: backend is 'gpu' but gpu 0: GPU backend failed" in out


@pytest.mark.slow
@pytest.mark.skipif(GPU_OK, reason="simulates the failure on a machine without a GPU")
@pytest.mark.parametrize("setting", ["auto", "gpu"])
def test_a_gpu_worker_whose_kernels_do_not_compile(nvrtc_fails, redis_url, tmp_path, setting):
    """auto: the worker says it proves on the CPU, and does (a job completes and verifies);
    gpu: it refuses to start, naming the compile failure."""
    from client.api import Client
    from client.local_cluster import WorkerProcess, worker_command
    from config.settings import load_settings
    from snark.porep.prove import load_or_setup_key, load_verifying_key, verify_c1
    from snark.porep.seal import seal

    c1 = seal(2048, 1, 1)
    load_or_setup_key(c1, tmp_path / "params")
    settings = load_settings(redis_url=redis_url, params_dir=tmp_path / "params")
    node = f"nvrtc-{setting}-{uuid.uuid4().hex[:6]}@%h"
    env = {**nvrtc_fails, "PROOFQ_BACKEND": setting,
           "PROOFQ_PARAMS_DIR": str(tmp_path / "params")}
    worker = WorkerProcess(redis_url, worker_command(gpu=0, concurrency=1, node=node),
                           log_dir=tmp_path, env=env).start()
    try:
        if setting == "auto":
            with Client(redis_url, settings) as client:
                worker.wait_ready(client.app, 120, node=node)
                proof = client.result(client.submit(c1), timeout=300, check=lambda: None)
            assert verify_c1(c1, load_verifying_key(c1, tmp_path / "params"), proof)
            log = worker.log_tail(400)
            assert "simulated compile failure" in log
            assert "this worker proves on the CPU (PROOFQ_BACKEND=auto)" in log
        else:
            deadline = time.monotonic() + 120
            while worker.alive() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not worker.alive()
            log = worker.log_tail()
            assert "proofq worker: gpu 0: GPU backend failed to start on device 0" in log
            assert "simulated compile failure" in log
            assert "not starting (PROOFQ_BACKEND=gpu)" in log
    finally:
        worker.stop(graceful=False)


@pytest.mark.gpu
@pytest.mark.skipif(not GPU_OK, reason="needs a GPU")
def test_on_a_gpu_keys_are_made_by_the_gpu_fixed_base_and_prove(tmp_path):
    """proofq setup, the submit task and the runtime take their fixed base from here."""
    from gpu.fixed_base import GpuFixedBase
    from snark.porep.prove import load_or_setup_key, prove_partition, verify_partition
    from snark.porep.seal import seal
    from workers.backend_choice import fixed_base_for

    backend = make_backend("auto")
    fixed_base = fixed_base_for(backend)
    assert backend.name == "gpu" and isinstance(fixed_base, GpuFixedBase)
    c1 = seal(2048, 1, 2)
    key = load_or_setup_key(c1, tmp_path, fixed_base=fixed_base)
    assert verify_partition(c1, 0, key.vk, prove_partition(c1, 0, key, backend))
