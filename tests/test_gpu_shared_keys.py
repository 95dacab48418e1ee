"""One device copy of a key for the processes of a GPU (``gpu.shared_keys``): two processes
prove under a key the keeper made resident once, byte-identically to the CPU backend,
with every basis resident (window tables too) or with the bases streamed from the host;
the copy is freed when the last holder lets go, and a holder that evicts the key and
prepares it again is served again. Needs a GPU; the socket protocol and the ledger's one
reservation are tested without one in ``tests/test_shared_keys.py``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import gpu
from snark import groth16
from snark.cpu_backend import CpuBackend
from snark.fields import FR_MODULUS as R
from snark.keys import ProvingKey
from tests.circuits import random_circuit

GPU_OK, GPU_WHY = gpu.available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)]

ROOT = Path(__file__).resolve().parent.parent

#: A second worker process: holds the key through the same keeper, proves, reports, and
#: lets go when told (a line on stdin).
CHILD = """
import json, sys
from pathlib import Path
import numpy as np
import gpu
from gpu import device
from gpu.shared_keys import SharedKeys
from snark import groth16
from snark.keys import ProvingKey

directory, keeper_dir, witness, r, s, budget, ring = sys.argv[1:8]
backend = gpu.get_backend(0, int(sys.argv[8]), vram_budget_bytes=None if budget == "-" else
                          int(budget), share_keys=True)
backend.ring_buffer_bytes = int(ring)
backend.shared_keys = SharedKeys(0, device.uuid(0), backend.shared_settings(), Path(keeper_dir))
key = ProvingKey.load(Path(directory))
proof = groth16.prove(key, np.load(witness), backend, r=int(r), s=int(s))
print(json.dumps({"proof": proof.to_bytes().hex(), "keeper": backend.shared_keys.status(),
                  "streamed": sorted(backend.streamed_bases(key))}), flush=True)
sys.stdin.readline()
backend.evict(key)
print(json.dumps(backend.shared_keys.status()), flush=True)
"""


def _shared_backend(keeper_dir: Path, table_bytes: int, budget: int | None, ring: int):
    from gpu import device
    from gpu.shared_keys import SharedKeys

    backend = gpu.get_backend(0, table_bytes, vram_budget_bytes=budget, share_keys=True)
    backend.ring_buffer_bytes = ring
    backend.shared_keys = SharedKeys(0, device.uuid(0), backend.shared_settings(), keeper_dir)
    return backend


def _socket_dir() -> Path:
    """A short directory of the test's own for the keeper's socket (a Unix socket's path
    has at most 107 bytes; pytest's temporary directories are longer)."""
    return Path(tempfile.mkdtemp(prefix="pqk-", dir="/tmp"))


def _holders(status: dict) -> list[int]:
    return [k["holders"] for k in status["keys"].values()]


@pytest.mark.parametrize("mode", ["resident", "tables", "streamed"])
def test_two_processes_prove_under_one_copy_like_the_cpu(tmp_path, rng, mode):
    circuit = random_circuit(num_inputs=3, num_constraints=1500, rng=rng)
    key = ProvingKey.load(groth16.setup(circuit.compile(), density=True).save(tmp_path / "p"))
    witness = circuit.witness()
    np.save(tmp_path / "w.npy", witness)
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    want = groth16.prove(key, witness, CpuBackend(), r=r, s=s).to_bytes()
    table_bytes = 1 << 40 if mode == "tables" else 0
    budget, ring = (1, 333 * 96) if mode == "streamed" else (None, 1 << 20)
    keeper_dir = _socket_dir()
    here = _shared_backend(keeper_dir, table_bytes, budget, ring)
    proof = groth16.prove(key, witness, here, r=r, s=s)
    assert proof.to_bytes() == want
    assert groth16.verify(key.vk, circuit.public_inputs(), proof)
    streamed = here.streamed_bases(key)
    assert bool(streamed) == (mode == "streamed")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(key.directory), str(keeper_dir), str(tmp_path / "w.npy"),
         str(r), str(s), "-" if budget is None else str(budget), str(ring), str(table_bytes)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        report = json.loads(child.stdout.readline() or "{}")
        assert report.get("proof") == want.hex()
        assert report["streamed"] == sorted(streamed)
        assert _holders(report["keeper"]) == [2]  # one copy, two holders
        here.evict(key)
        assert _holders(here.shared_keys.status()) == [1]
        child.stdin.write("\n")
        child.stdin.flush()
        assert json.loads(child.stdout.readline())["keys"] == {}  # the last one let go
        assert child.wait(timeout=120) == 0
        # evicted, then needed again: the keeper makes it resident anew
        assert groth16.prove(key, witness, here, r=r, s=s).to_bytes() == want
        assert _holders(here.shared_keys.status()) == [1]
    finally:
        child.kill()
        here.shared_keys.close()
        shutil.rmtree(keeper_dir, ignore_errors=True)


def test_the_copy_is_freed_for_the_device_when_its_last_holder_goes(tmp_path, rng):
    """The keeper's arrays are allocations of their own: once the last holder lets go, the
    device has the bytes back (read here, off any hot path, in the test alone)."""
    import cupy

    circuit = random_circuit(num_inputs=2, num_constraints=20000, rng=rng)
    key = ProvingKey.load(groth16.setup(circuit.compile()).save(tmp_path / "p"))
    keeper_dir = _socket_dir()
    here = _shared_backend(keeper_dir, 1 << 40, None, 1 << 20)  # tables: ~13x the bases
    try:
        free_before = cupy.cuda.runtime.memGetInfo()[0]
        here.prepare(key)
        held = free_before - cupy.cuda.runtime.memGetInfo()[0]
        table_bytes = here.extra_resident_bytes(key)
        assert held >= table_bytes > 0  # the keeper's copy, tables included
        here.evict(key)
        deadline = time.monotonic() + 60
        while free_before - cupy.cuda.runtime.memGetInfo()[0] > held - table_bytes:
            assert time.monotonic() < deadline, "the keeper kept the key's memory"
            time.sleep(0.1)
    finally:
        here.shared_keys.close()
        shutil.rmtree(keeper_dir, ignore_errors=True)


def test_a_killed_keeper_is_replaced_and_its_copy_let_go(tmp_path, rng):
    """kill -9 of the keeper between partitions: the next partition sees it gone, closes
    what this process opened of the dead copy, has a new keeper load the key once, and
    proves as the CPU does; the device holds one copy again, not two (read here, off any
    hot path, in the test alone)."""
    import os
    import signal

    import cupy

    circuit = random_circuit(num_inputs=2, num_constraints=20000, rng=rng)
    key = ProvingKey.load(groth16.setup(circuit.compile()).save(tmp_path / "p"))
    witness = circuit.witness()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    want = groth16.prove(key, witness, CpuBackend(), r=r, s=s).to_bytes()
    keeper_dir = _socket_dir()
    here = _shared_backend(keeper_dir, 1 << 40, None, 1 << 20)  # tables: a copy worth seeing
    try:
        free_before = cupy.cuda.runtime.memGetInfo()[0]
        assert groth16.prove(key, witness, here, r=r, s=s).to_bytes() == want
        one_copy = free_before - cupy.cuda.runtime.memGetInfo()[0]
        first = here.shared_keys.status()["pid"]
        os.kill(first, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not here.shared_keys.keeper_gone():
            assert time.monotonic() < deadline, "the keeper's death was not seen"
            time.sleep(0.05)
        assert groth16.prove(key, witness, here, r=r, s=s).to_bytes() == want
        second = here.shared_keys.status()
        assert second["pid"] != first and _holders(second) == [1]
        table_bytes = here.extra_resident_bytes(key)  # most of a copy
        grown = free_before - cupy.cuda.runtime.memGetInfo()[0] - one_copy
        assert table_bytes > 0 and grown < table_bytes / 2, \
            f"the device holds {grown} bytes more than before the keeper's death: the dead " \
            f"copy (tables {table_bytes} bytes) is still open"
    finally:
        here.shared_keys.close()
        shutil.rmtree(keeper_dir, ignore_errors=True)
