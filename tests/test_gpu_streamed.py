"""Streamed MSM bases on the GPU: the same points as resident bases, byte for byte, at
2^12..2^16 in one chunk, several, and a ragged last one; G1 and G2; leading infinities;
mixed with resident bases in one ``msm_many``; and a backend whose budget streams every
basis proving the same proofs as the CPU (and a resident backend), its segments removed on
eviction. Needs a GPU (marker ``gpu``); the planning and ordering: test_streamed_bases.py."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import gpu
from snark.fields import FR_MODULUS as R
from snark.fields import random_fr

GPU_OK, GPU_WHY = gpu.available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)]


@pytest.fixture(scope="module")
def pools(module_rng):
    """2^16 distinct random points per group (k·G on the GPU), some set to infinity."""
    from gpu.fixed_base import GpuFixedBase

    mul = GpuFixedBase()
    rng = np.random.default_rng(module_rng.getrandbits(64))
    pools = {1: mul.mul_g1(random_fr(1 << 16, rng)), 2: mul.mul_g2(random_fr(1 << 16, rng))}
    for points in pools.values():
        holes = rng.choice(len(points), size=64, replace=False)
        points.xy[holes], points.inf[holes] = 0, True
    return pools


def _streamed(points, lead, chunk_rows, buffers=3):
    from gpu.streamed_bases import HostBases, StreamedBases, device_ring, row_bytes

    ring = device_ring(0, buffers, chunk_rows * row_bytes(points.group))
    return StreamedBases(HostBases(points, lead), ring, 0)


def _scalars(np_rng, n, lead=0):
    import cupy

    limbs = random_fr(n, np_rng)
    limbs[np_rng.random(n) < 0.5] = 0  # witness-like: many zeros
    limbs[np_rng.random(n) < 0.3] = np.array([1, 0, 0, 0], dtype=np.uint64)  # and ones
    limbs[:lead] = 0
    return cupy.asarray(limbs)


@pytest.mark.parametrize("group", [1, 2])
@pytest.mark.parametrize("log_n", [12, 14, 16])
@pytest.mark.parametrize("chunks", [1, 3, 7.5])
def test_streamed_msm_equals_resident(pools, np_rng, group, log_n, chunks):
    from gpu.msm import MsmBases, msm

    n, lead = 1 << log_n, 5
    points = pools[group][:n - lead]
    chunk_rows = int(-(-n // chunks))
    scalars = _scalars(np_rng, n, lead)
    streamed = _streamed(points, lead, chunk_rows)
    try:
        assert len(streamed) == n
        assert streamed.chunk_rows == chunk_rows
        want = msm(MsmBases(points, leading_infinity=lead), scalars)
        got = msm(streamed, scalars)
        assert got.to_compressed_bytes() == want.to_compressed_bytes()
        shorter = scalars[:n - chunk_rows // 2]  # fewer scalars than bases: a prefix
        assert msm(streamed, shorter) == msm(MsmBases(points, leading_infinity=lead), shorter)
        again = msm(streamed, scalars)  # the ring's buffers reused by a second call
        assert again == want
    finally:
        streamed.host.close()


@pytest.mark.parametrize("buffers", [1, 2, 3])
def test_many_streamed_and_resident_msms_in_one_batch(pools, np_rng, buffers):
    """As ``proof_msms`` queues them: one ring for every streamed basis, G2 on its own
    stream, two G1 streams, resident bases sharing the scalars' sort."""
    import cupy

    from gpu.msm import MsmBases, msm_many
    from gpu.streamed_bases import HostBases, StreamedBases, device_ring

    n = (1 << 13) + 77
    scalars, other = _scalars(np_rng, n), _scalars(np_rng, n)
    ring = device_ring(0, buffers, 1000 * 96)
    streamed = [StreamedBases(HostBases(points), ring, 0)
                for points in (pools[1][:n], pools[2][:n], pools[1][1000:1000 + n])]
    resident = [MsmBases(pools[1][:n]), MsmBases(pools[2][:n]), MsmBases(pools[1][1000:1000 + n])]
    streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(3)]
    try:
        def jobs(bases):
            return [(bases[0], scalars), (resident[0], scalars), (bases[1], scalars),
                    (bases[2], other)]

        got = msm_many(jobs(streamed), stream=streams[0], g2_stream=streams[1],
                       g1_streams=(streams[2],))
        want = msm_many(jobs(resident))
        assert [p.to_compressed_bytes() for p in got] == [p.to_compressed_bytes() for p in want]
    finally:
        for bases in streamed:
            bases.host.close()


def test_segments_are_shared_and_removed_by_the_last_holder(pools):
    first, second = _streamed(pools[1][:4096], 0, 1000), _streamed(pools[1][:4096], 0, 1000)
    path = first.host.segment.path
    assert second.host.segment.path == path and path.exists()
    first.host.close()
    assert path.exists()
    second.host.close()
    assert not path.exists()


def test_bases_dropped_unclosed_let_go_of_their_segment(pools):
    """Collected without ``close()`` (a backend dropped with its state), the host rows unpin and
    unmap their segment: a registration left behind made a later mapping at the same
    address fail ("part or all of the requested memory range is already mapped")."""
    import cupy

    bases = _streamed(pools[2][:1000], 3, 400)
    path, address = bases.host.segment.path, bases.host.segment.address
    del bases
    gc.collect()
    assert not path.exists()
    with pytest.raises(cupy.cuda.runtime.CUDARuntimeError, match="NotRegistered"):
        cupy.cuda.runtime.hostUnregister(address)  # nothing registered there any more


@pytest.fixture(scope="module")
def key(module_rng):
    from snark import groth16
    from tests.circuits import random_circuit

    circuit = random_circuit(num_inputs=3, num_constraints=1500, rng=module_rng)
    return circuit, groth16.setup(circuit.compile())


def test_a_backend_over_budget_streams_its_bases_and_proves_the_same(key, rng):
    from gpu.backend import GpuBackend
    from snark import groth16
    from snark.cpu_backend import CpuBackend
    from snark.keys import POINT_BASES

    circuit, pk = key
    w = circuit.witness()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    want = groth16.prove(pk, w, CpuBackend(), r=r, s=s).to_bytes()
    small = GpuBackend(0, 0, vram_budget_bytes=1, ring_buffer_bytes=333 * 96)
    planned = small.extra_resident_bytes(pk)
    assert small.streamed_bases(pk) == set(POINT_BASES)
    assert planned < 0  # the ring is smaller than the bases it streams
    assert groth16.prove(pk, w, small, r=r, s=s).to_bytes() == want
    assert small.extra_resident_bytes(pk) == planned  # as built
    resident = GpuBackend(0, 0)
    on_small, on_resident = small.load_witness(pk, w), resident.load_witness(pk, w)
    h_small = small.quotient(pk, small.evaluate_abc(pk, on_small))
    h_resident = resident.quotient(pk, resident.evaluate_abc(pk, on_resident))
    got, expected = (b.proof_msms(pk, wit, h) for b, wit, h in
                     ((small, on_small, h_small), (resident, on_resident, h_resident)))
    assert {k: p.to_compressed_bytes() for k, p in got.items()} == \
        {k: p.to_compressed_bytes() for k, p in expected.items()}
    ni = pk.r1cs.num_inputs
    assert small.msm_g1(pk, "l_g1", on_small[ni:]) == resident.msm_g1(pk, "l_g1", on_resident[ni:])
    paths = [b.host.segment.path for b in small._states.get(pk).bases.values()]
    assert all(p.exists() for p in paths)
    small.evict(pk)
    assert not any(p.exists() for p in paths)


def test_a_budget_between_streams_only_the_largest(key, rng):
    from gpu.backend import GpuBackend
    from gpu.msm import MsmBases
    from gpu.spmv_plan import matrix_bytes
    from snark import groth16
    from snark.cpu_backend import CpuBackend

    circuit, pk = key
    sizes = {n: MsmBases.nbytes(getattr(pk, n), pk.r1cs.num_inputs if n == "l_g1" else 0)
             for n in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1")}
    largest = max(sizes, key=sizes.get)
    ring = 3 * 500 * 96
    budget = (sum(matrix_bytes(m) for m in (pk.r1cs.a, pk.r1cs.b, pk.r1cs.c)) + ring
              + sum(sizes.values()) - sizes[largest])
    backend = GpuBackend(0, 0, vram_budget_bytes=budget, ring_buffer_bytes=500 * 96)
    assert backend.streamed_bases(pk) == {largest}
    w = circuit.witness()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    assert (groth16.prove(pk, w, backend, r=r, s=s).to_bytes()
            == groth16.prove(pk, w, CpuBackend(), r=r, s=s).to_bytes())
    assert backend.streamed_bases(pk) == {largest}
    backend.evict(pk)


def test_a_basis_the_device_refuses_streams(key, rng, monkeypatch):
    import gpu.backend
    from gpu.backend import GpuBackend
    from gpu.msm import MsmBases
    from snark import groth16
    from snark.backend import DeviceMemoryError
    from snark.cpu_backend import CpuBackend

    circuit, pk = key
    h_rows = len(pk.h_g1)

    class RefusedH(MsmBases):
        def __init__(self, points, stream=None, leading_infinity=0, table=None):
            if len(points) == h_rows:
                raise DeviceMemoryError("simulated: no room for h_g1")
            super().__init__(points, stream, leading_infinity, table)

    monkeypatch.setattr(gpu.backend, "MsmBases", RefusedH)
    backend = GpuBackend(0, 0, ring_buffer_bytes=700 * 96)
    w = circuit.witness()
    r, s = rng.randrange(1, R), rng.randrange(1, R)
    assert (groth16.prove(pk, w, backend, r=r, s=s).to_bytes()
            == groth16.prove(pk, w, CpuBackend(), r=r, s=s).to_bytes())
    assert "h_g1" in backend.streamed_bases(pk)
    backend.evict(pk)
