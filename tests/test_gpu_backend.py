"""The GPU backend against the CPU backend: A·w, B·w, C·w, the quotient and whole Groth16
proofs (byte-identical for the same witness and r, s, and verifying), for both H forms.
Needs a GPU."""

from __future__ import annotations


import numpy as np
import pytest

import gpu
from snark import groth16
from snark.cpu_backend import CpuBackend
from snark.backend import DeviceMemoryError
from snark.fields import FR_MODULUS as R
from snark.fields import (fr_to_limbs, from_montgomery, limbs_to_ints, random_fr,
                          to_montgomery)
from snark.qap import COSET, ODD
from tests.circuits import random_circuit

GPU_OK, GPU_WHY = gpu.available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)]


@pytest.fixture(scope="module")
def backend():
    return gpu.get_backend()


@pytest.fixture(scope="module", params=[300, 1500], ids=["one-pass", "two-pass"])
def circuit(request, module_rng):
    # 300 constraints: a 2^9 domain (one NTT pass); 1500: 2^11 (two passes).
    return random_circuit(num_inputs=3, num_constraints=request.param, rng=module_rng)


@pytest.fixture(scope="module", params=[COSET, ODD], ids=str)
def key(circuit, request):
    """Both H forms: this project's coset form and snarkjs's odd points of the 2n-domain."""
    return groth16.setup(circuit.compile(), qap=request.param)


def _host(backend, x) -> np.ndarray:
    """Copy a handle to the host on the backend's stream: its kernels run on a non-blocking
    stream, so a copy on the default stream could overtake them."""
    return x.get(stream=backend.stream)


def test_abc_matches_cpu(backend, key, circuit):
    cpu = CpuBackend()
    w = circuit.witness()
    want = cpu.evaluate_abc(key, cpu.load_witness(key, w))
    got = backend.evaluate_abc(key, backend.load_witness(key, w))
    for name, g, c in zip("abc", got, want):
        assert from_montgomery(_host(backend, g), R) == limbs_to_ints(c), name


def test_quotient_matches_cpu(backend, key, circuit):
    cpu = CpuBackend()
    w = circuit.witness()
    want = cpu.quotient(key, cpu.evaluate_abc(key, cpu.load_witness(key, w)))
    abc = backend.evaluate_abc(key, backend.load_witness(key, w))
    h = backend.quotient(key, abc)
    assert h.shape == (len(key.h_g1), 4)
    assert limbs_to_ints(_host(backend, h)) == limbs_to_ints(want)


def test_quotient_of_any_abc_matches_cpu(backend, key, np_rng):
    """Random A·w, B·w, C·w, which no witness satisfies: the coset form's shortcut (C's
    coefficients from its intt alone) holds for any c, as the CPU's transforms do."""
    n = key.domain_size
    abc = tuple(random_fr(n, np_rng) for _ in range(3))
    want = CpuBackend().quotient(key, abc)
    backend.prepare(key)
    with backend.on_device() as cupy:
        on_device = tuple(cupy.asarray(to_montgomery(limbs_to_ints(v), R, 4)) for v in abc)
    h = backend.quotient(key, on_device)
    assert limbs_to_ints(_host(backend, h)) == limbs_to_ints(want)


def test_proof_is_byte_identical_to_cpu_and_verifies(backend, key, circuit, rng):
    w = circuit.witness()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    on_gpu = groth16.prove(key, w, backend, r=r, s=s)
    assert on_gpu.to_bytes() == groth16.prove(key, w, CpuBackend(), r=r, s=s).to_bytes()
    assert groth16.verify(key.vk, circuit.public_inputs(), on_gpu)


def test_window_tables_give_the_same_proofs(key, circuit, rng):
    """A backend whose budget tables every basis proves byte-identically to the CPU, and
    says what the tables hold; one that can table only b_g2 does that alone."""
    from gpu.backend import table_choice

    everything = table_choice(key, 1 << 40)
    assert set(everything) == {"a_g1", "b_g1", "b_g2", "l_g1", "h_g1"}
    w = circuit.witness()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    want = groth16.prove(key, w, CpuBackend(), r=r, s=s).to_bytes()
    for budget, tabled in ((1 << 40, everything), (everything["b_g2"], {"b_g2"})):
        tabled_backend = gpu.get_backend(table_budget_bytes=budget)
        planned = tabled_backend.extra_resident_bytes(key)
        assert planned == sum(everything[name] for name in tabled)
        assert groth16.prove(key, w, tabled_backend, r=r, s=s).to_bytes() == want
        assert tabled_backend.extra_resident_bytes(key) == planned  # as built
        # the single MSMs read the tables too; l_g1 through its leading infinities
        cpu, ni = CpuBackend(), key.r1cs.num_inputs
        on_gpu, on_cpu = tabled_backend.load_witness(key, w), cpu.load_witness(key, w)
        assert tabled_backend.msm_g2(key, "b_g2", on_gpu) == cpu.msm_g2(key, "b_g2", on_cpu)
        assert (tabled_backend.msm_g1(key, "l_g1", on_gpu[ni:])
                == cpu.msm_g1(key, "l_g1", on_cpu[ni:]))


def test_the_default_table_budget_is_an_eighth_of_the_device():
    from gpu import device

    assert (gpu.get_backend(table_budget_bytes=None).table_budget_bytes
            == device.total_memory(0) // 8)


def test_a_table_the_device_refuses_falls_back_to_plain_bases(key, circuit, rng, monkeypatch):
    """Out of device memory for a table: the basis stays plain, the proof is the same, and
    the ledger is told only what was built."""
    import gpu.backend
    from gpu.msm import MsmBases

    class RefusedTables(MsmBases):
        def __init__(self, points, stream=None, leading_infinity=0, table=None):
            if table is not None:
                raise DeviceMemoryError("simulated: no room for the table")
            super().__init__(points, stream, leading_infinity)

    monkeypatch.setattr(gpu.backend, "MsmBases", RefusedTables)
    refused = gpu.get_backend(table_budget_bytes=1 << 40)
    assert refused.extra_resident_bytes(key) > 0  # planned
    w = circuit.witness()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    assert (groth16.prove(key, w, refused, r=r, s=s).to_bytes()
            == groth16.prove(key, w, CpuBackend(), r=r, s=s).to_bytes())
    assert refused.extra_resident_bytes(key) == 0  # as built


def test_wrong_witness_gives_a_failing_proof(backend, key, circuit, rng):
    w = circuit.witness().copy()
    i = rng.randrange(key.r1cs.num_inputs, len(w))
    w[i] = fr_to_limbs([(limbs_to_ints(w[i:i + 1])[0] + rng.randrange(1, R)) % R])[0]
    proof = groth16.prove(key, w, backend)
    assert not groth16.verify(key.vk, circuit.public_inputs(), proof)


def test_load_witness_rejects_bad_input(backend, key, circuit, rng):
    w = circuit.witness()
    with pytest.raises(ValueError, match="witness: expected shape"):
        backend.load_witness(key, w[:-1])
    bad = w.copy()
    bad[rng.randrange(len(bad))] = np.uint64(2**64 - 1)
    with pytest.raises(ValueError, match="not a canonical Fr element"):
        backend.load_witness(key, bad)


def test_allocation_failure_is_device_memory_error(backend):
    with pytest.raises(DeviceMemoryError):
        with backend.on_device() as cupy:
            cupy.empty((1 << 43,), dtype=cupy.uint8)  # 8 TiB


def test_device_facts():
    from gpu import device

    assert device.uuid(0).startswith("GPU-") and len(device.uuid(0)) == 40
    assert device.total_memory(0) > 1 << 30


#: A process whose kernel writes through a null pointer: its CUDA context is lost.
FAULTING_CHILD = """
import cupy
import gpu
from workers.failures import Failure, classify
from snark.backend import DeviceLost

backend = gpu.get_backend(0)
kernel = cupy.RawKernel(r'extern "C" __global__ void fault(int* p) { p[threadIdx.x] = 1; }',
                        "fault")
try:
    with backend.on_device():
        kernel((1,), (32,), (cupy.uint64(0),))
        backend.stream.synchronize()
except DeviceLost as exc:
    print("lost", classify(exc).value, str(exc).splitlines()[0])
"""


def test_a_lost_context_is_the_workers_fault_not_the_jobs():
    """A kernel fault leaves the process's context unusable: ``DeviceLost``, which the
    failure taxonomy gives back to the queue (refused), never a failed job. Run in a child
    process of its own, since its context is gone afterwards."""
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", FAULTING_CHILD], capture_output=True,
                          text=True, timeout=300, cwd=Path(__file__).resolve().parents[1])
    assert done.stdout.startswith("lost refused GPU 0: "), done.stdout + done.stderr
