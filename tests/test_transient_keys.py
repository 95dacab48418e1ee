"""Keys whose device part is transient (WindowPoSt's beside PoRep, docs/performance.md): made
resident in a partition's memory phase, given back with their ledger reservation when the
last user's compute phase ends, their host part kept for the next partition.

On the CPU, everywhere: the owner of a process's keys (``workers.key_residency``) with the
CPU backend and a real ledger, then a worker runtime proving partitions on a real Redis
(which types are transient, when the reservation goes, an eviction on request). On the GPU
(marker ``gpu``): a transient key proved twice like the CPU, its device part gone between
and its host rows not built again."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pytest
import redis

import gpu
from config.settings import load_settings
from snark import groth16
from snark.backend import DeviceMemoryError
from snark.fields import FR_MODULUS
from snark.job_input import InputLimits
from snark.params import recorded_circuit_id
from snark.registry import proof_type, worker_half
from tests import product_type
from tests.product_worker import SHAPE
from tests.test_residency import RecordingCpu, _keys, _ledger, _owner
from tests.toy_distribution import toy_distribution
from workers.failures import PartitionFailed
from workers.gpu_binding import bind_cpu
from workers.key_requests import KeyRequest
from workers.ledger import key_bytes, partition_bytes
from workers.runtime import WorkerRuntime
from workers.telemetry import read_events

GPU_OK, GPU_WHY = gpu.available()
TYPE = product_type.PLUGIN.kind
NAME = (TYPE.name, "toy-product")


class SheddingCpu(RecordingCpu):
    """The CPU backend, noting which keys it was told are transient, when each was shed and
    made resident; it refuses the first ``refusals`` of those as a full device would."""

    def __init__(self, refusals: int = 0) -> None:
        super().__init__()
        self.marked: list[str] = []
        self.shed_at: list[tuple[str, float]] = []
        self.prepared_at: list[float] = []
        self.refusals = refusals

    def prepare(self, key) -> None:
        if self._states.get(key) is None:  # made resident now
            if self.refusals:
                self.refusals -= 1
                raise DeviceMemoryError("simulated: another process's compute scratch fills it")
            self.prepared_at.append(time.time())
        super().prepare(key)

    def mark_transient(self, key) -> None:
        self.marked.append(key.circuit_id)
        super().mark_transient(key)

    def shed(self, key) -> None:
        self.shed_at.append((key.circuit_id, time.time()))
        super().shed(key)


def _transient_owner(backend, ledger, transient: set[str], pin=None):
    return _owner(backend, ledger, pin=pin, transient=lambda name: name in transient)


# -- the owner of a process's keys ------------------------------------------------------
def test_a_transient_key_gives_its_reservation_back_when_its_compute_ends(
        redis_url, heartbeat, rng):
    backend = SheddingCpu()
    window, porep = _keys(rng, 2)
    ledger = _ledger(redis_url, heartbeat, 10 * (key_bytes(window) + key_bytes(porep)))
    owner = _transient_owner(backend, ledger, {"window"}, pin=lambda key: True)
    loads: list[str] = []

    def partition(name, key) -> None:
        """One partition's uses, as the runtime makes them."""
        with owner.using(name):
            owner.make_resident(owner.key(name, lambda: loads.append(name) or key))
            assert key in owner.resident()
            owner.done_with_device(key)

    for _ in range(rng.randrange(2, 5)):
        partition("window", window)
        assert ledger.reserved_bytes() == 0  # nothing of it reserved between partitions
        assert owner.resident() == [] and owner.held_by_name() == {"window": window}
        partition("porep", porep)
        partition("window", window)
        # the other key keeps its reservation; the transient one is held on the host
        assert ledger.reserved_bytes() == key_bytes(porep)
        assert owner.held_by_name() == {"porep": porep, "window": window}
        owner.evict("porep")
    assert loads.count("window") == 1  # loaded once, its host part kept
    assert backend.marked == [window.circuit_id]
    assert {c for c, _ in backend.shed_at} == {window.circuit_id}
    assert window.circuit_id not in backend.evicted
    assert owner.pinned() == []  # pinning would hold it resident: never a transient key
    owner.close()
    assert window.circuit_id in backend.evicted and ledger.reserved_bytes() == 0


def test_a_transient_key_evicts_no_other_key_for_its_room(redis_url, heartbeat, rng):
    """It holds its room for one partition: the steady key it would evict stays, and its
    reservation is forced instead; a key that stays evicts as before."""
    backend = SheddingCpu()
    window, porep, snap = _keys(rng, 3)
    ledger = _ledger(redis_url, heartbeat, max(key_bytes(k) for k in (window, porep, snap)))
    owner = _transient_owner(backend, ledger, {"window"})
    owner.make_resident(owner.key("porep", lambda: porep))
    with owner.using("window"):
        owner.make_resident(owner.key("window", lambda: window))
        assert owner.resident() == [porep, window] and backend.evicted == []
        assert ledger.reserved_bytes() == key_bytes(porep) + key_bytes(window)
        owner.done_with_device(window)
    owner.make_resident(owner.key("snap", lambda: snap))
    assert owner.resident() == [snap] and backend.evicted == [porep.circuit_id]
    owner.close()


def test_a_transient_key_stays_while_another_user_needs_it(redis_url, heartbeat, rng):
    backend = SheddingCpu()
    [window] = _keys(rng, 1)
    ledger = _ledger(redis_url, heartbeat, 10 * key_bytes(window))
    owner = _transient_owner(backend, ledger, {"window"})
    with owner.using("window"):  # a preload beside the partition
        with owner.using("window"):
            owner.make_resident(owner.key("window", lambda: window))
            owner.done_with_device(window)
            assert owner.resident() == [window] and backend.shed_at == []
        assert ledger.reserved_bytes() == key_bytes(window)
    assert owner.resident() == [] and len(backend.shed_at) == 1  # its last user ended
    assert ledger.reserved_bytes() == 0


def test_a_failed_partition_sheds_its_transient_key_when_its_use_ends(redis_url, heartbeat, rng):
    backend = SheddingCpu()
    [window] = _keys(rng, 1)
    ledger = _ledger(redis_url, heartbeat, 10 * key_bytes(window))
    owner = _transient_owner(backend, ledger, {"window"})
    with pytest.raises(RuntimeError, match="simulated"):
        with owner.using("window"):
            owner.make_resident(owner.key("window", lambda: window))
            raise RuntimeError("simulated: the compute phase failed")
    assert owner.resident() == [] and ledger.reserved_bytes() == 0
    assert [c for c, _ in backend.shed_at] == [window.circuit_id] and backend.evicted == []


def test_letting_go_of_a_transient_key_frees_its_host_part(redis_url, heartbeat, rng):
    backend = SheddingCpu()
    [window] = _keys(rng, 1)
    ledger = _ledger(redis_url, heartbeat, 10 * key_bytes(window))
    owner = _transient_owner(backend, ledger, {"window"})
    with owner.using("window"):
        owner.make_resident(owner.key("window", lambda: window))
        owner.done_with_device(window)
        assert owner.let_go("window") == (window, True)  # in use: when its user ends
    assert backend.evicted == [window.circuit_id] and owner.held_by_name() == {}
    with owner.using("window"):
        owner.make_resident(owner.key("window", lambda: window))
        owner.done_with_device(window)
    assert owner.let_go("window") == (window, False)  # shed, not resident: still let go
    assert backend.evicted == [window.circuit_id] * 2 and owner.let_go("window") is None


# -- a worker runtime -------------------------------------------------------------------
@pytest.fixture(scope="module")
def toy_installed(tmp_path_factory):
    """toy-product installed in this process, as its own distribution."""
    with toy_distribution(tmp_path_factory.mktemp("site")) as _:
        assert proof_type(TYPE.name) is TYPE
        yield


def _runtime(redis_url, params, refusals: int = 0, **settings) -> WorkerRuntime:
    return WorkerRuntime(client=redis.Redis.from_url(redis_url),
                         settings=load_settings(redis_url=redis_url, params_dir=params,
                                                **settings),
                         worker_name="transient@host/1", binding=bind_cpu(0),
                         backend=SheddingCpu(refusals))


def test_which_keys_are_transient(redis_url, tmp_path):
    by_records = _runtime(redis_url, tmp_path)
    chosen = _runtime(redis_url, tmp_path, transient_key_types=["toy-product"])
    none = _runtime(redis_url, tmp_path, transient_key_types=[])
    try:
        assert by_records._transient_key(("window-post", "k"))  # its plug-in's record
        assert not by_records._transient_key(("winning-post", "k"))
        assert not by_records._transient_key(("porep-demo", "k"))
        assert not by_records._transient_key(("no-such-type", "k"))
        assert chosen._transient_key(("toy-product", "k"))
        assert not chosen._transient_key(("window-post", "k"))
        assert not none._transient_key(("window-post", "k"))
    finally:
        for runtime in (by_records, chosen, none):
            runtime.close()


@pytest.mark.parametrize("transient", [True, False])
def test_a_transient_keys_reservation_ends_with_its_compute_phase(
        toy_installed, redis_url, tmp_path, rng, transient):
    runtime = _runtime(redis_url, tmp_path,
                       transient_key_types=["toy-product"] if transient else [])
    backend, seen = runtime.backend, {}

    def progress(phase: str, _info: dict) -> None:
        seen[phase] = runtime.ledger.reserved_bytes()

    try:
        for partition in range(2):
            raw = {"pairs": [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)]]}
            job_input = TYPE.parse(raw, InputLimits.of(runtime.settings))
            part = runtime.prove_partition(job_id=f"j{partition}", partition=0,
                                           proof_type=TYPE, job_input=job_input,
                                           progress=progress)
            worker = worker_half(TYPE, runtime.storage)
            assert worker.verify(job_input, worker.assemble(job_input, [part]))
            key = runtime.residency.held_by_name()[NAME]
            # resident from the memory phase on, beside the pre-staged partition
            assert seen["compute"] == key_bytes(key) + partition_bytes(key)
            assert seen["finalize"] == runtime.ledger.reserved_bytes() == (
                0 if transient else key_bytes(key))
            assert (runtime.residency.resident() == []) == transient
        computes = [e for e in read_events(runtime.client) if e.phase == "compute"]
        if transient:  # shed under the compute lock, once a partition
            assert len(backend.shed_at) == 2
            assert all(e.start <= t <= e.end for e, (_, t) in zip(computes, backend.shed_at))
            assert backend.marked == [key.circuit_id]
        else:
            assert backend.shed_at == [] and backend.marked == []
        # let go on request (EvictSRS): held, nothing on the device when transient
        reply = runtime.carry_out(KeyRequest("evict", *NAME))
        assert reply.ok and reply.was_resident and not reply.deferred
        assert reply.nbytes == (0 if transient else key_bytes(key))
        assert runtime.residency.held_by_name() == {} and backend.evicted == [key.circuit_id]
        assert runtime.ledger.reserved_bytes() == 0
        # loaded again on request (PreloadSRS): a transient key's device part goes at once
        reply = runtime.carry_out(KeyRequest("preload", *NAME,
                                             recorded_circuit_id(tmp_path, SHAPE)))
        assert reply.ok and not reply.was_resident, reply
        key = runtime.residency.held_by_name()[NAME]
        assert reply.nbytes == runtime.ledger.reserved_bytes() == (
            0 if transient else key_bytes(key))
        assert len(backend.shed_at) == (3 if transient else 0)
    finally:
        runtime.close()


def test_a_transient_key_the_device_refuses_in_the_memory_phase_is_made_resident_in_compute(
        toy_installed, redis_url, tmp_path, rng):
    runtime = _runtime(redis_url, tmp_path, refusals=1, transient_key_types=["toy-product"])
    try:
        raw = {"pairs": [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)]]}
        job_input = TYPE.parse(raw, InputLimits.of(runtime.settings))
        part = runtime.prove_partition(job_id="j", partition=0, proof_type=TYPE,
                                       job_input=job_input)
        worker = worker_half(TYPE, runtime.storage)
        assert worker.verify(job_input, worker.assemble(job_input, [part]))
        events = {e.phase: e for e in read_events(runtime.client, job="j")}
        assert events["mem"].path == events["compute"].path == "stream"
        [prepared] = runtime.backend.prepared_at
        assert events["compute"].start <= prepared <= events["compute"].end
        assert runtime.ledger.reserved_bytes() == 0 and runtime.residency.resident() == []
    finally:
        runtime.close()


def test_a_key_that_stays_and_that_the_device_refuses_fails_its_partition(
        toy_installed, redis_url, tmp_path, rng):
    runtime = _runtime(redis_url, tmp_path, refusals=1, transient_key_types=[])
    try:
        raw = {"pairs": [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)]]}
        with pytest.raises(PartitionFailed, match="simulated") as failed:
            runtime.prove_partition(job_id="j", partition=0, proof_type=TYPE,
                                    job_input=TYPE.parse(raw, InputLimits.of(runtime.settings)))
        assert failed.value.phase == "mem" and failed.value.transient  # retried
    finally:
        runtime.close()


# -- on the GPU -------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.skipif(not GPU_OK, reason=GPU_WHY)
def test_a_transient_key_proves_twice_like_the_cpu_its_host_rows_kept_between(
        rng, monkeypatch, tmp_path):
    import cupy

    import gpu.streamed_bases
    from gpu import device
    from gpu.backend import GpuBackend
    from gpu.shared_keys import SharedKeys
    from snark.cpu_backend import CpuBackend
    from snark.keys import POINT_BASES, ProvingKey
    from tests.circuits import random_circuit

    builds: list[int] = []
    write_rows = gpu.streamed_bases.write_rows

    def counted(rows, points, leading_infinity=0):
        builds.append(len(rows))
        write_rows(rows, points, leading_infinity)

    monkeypatch.setattr(gpu.streamed_bases, "write_rows", counted)
    circuit = random_circuit(num_inputs=3, num_constraints=1500, rng=rng)
    key = ProvingKey.load(groth16.setup(circuit.compile(), density=rng.random() < 0.5)
                          .save(tmp_path / "key"))
    # no budget, a table allowance and keys shared through a keeper: a key that stays
    # would be all resident, tabled, held through the keeper
    backend = GpuBackend(0, 1 << 40, ring_buffer_bytes=rng.randrange(200, 700) * 96,
                         share_keys=True)
    keeper_dir = Path(tempfile.mkdtemp(prefix="pqk-", dir="/tmp"))  # a socket's short path
    backend.shared_keys = SharedKeys(0, device.uuid(0), backend.shared_settings(), keeper_dir)
    assert backend.shared_name(key) is not None
    backend.mark_transient(key)
    assert backend.streamed_bases(key) == set(POINT_BASES) and backend.shared_name(key) is None
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    try:
        hosts = []
        for _ in range(2):
            w = circuit.witness()
            r, s = rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)
            want = groth16.prove(key, w, CpuBackend(), r=r, s=s)
            proof = groth16.prove(key, w, backend, r=r, s=s)
            assert proof.to_bytes() == want.to_bytes()
            assert groth16.verify(key.vk, circuit.public_inputs(), proof)
            resident = backend._states.get(key)
            assert resident.streamed == set(POINT_BASES) and resident.ring is not None
            assert backend.extra_resident_bytes(key) == (
                resident.ring.nbytes - sum(getattr(key, n).xy.nbytes for n in POINT_BASES))
            device_bytes = resident.ring.nbytes + sum(m.indices.nbytes
                                                      for m in resident.matrices)
            del resident
            host = backend._hosts.get(key)
            hosts.append({n: (b, b.segment.path) for n, b in host.bases.items()})
            used, held = pool.used_bytes(), pool.total_bytes()
            backend.shed(key)
            # the device part is gone, its memory back to the device; the rows stay
            assert backend._states.get(key) is None
            assert used - pool.used_bytes() >= device_bytes and pool.total_bytes() < held
            assert backend._hosts.get(key) is host
            assert all(path is None or path.exists() for _, path in hosts[-1].values())
        assert not backend.shared_keys.path.exists()  # no keeper was asked for it
        assert len(builds) == len(POINT_BASES)  # built for the first residency only
        assert hosts[0] == hosts[1]  # the same pinned rows, the same segments
        backend.evict(key)
        assert backend._hosts.get(key) is None
        assert not any(path and path.exists() for _, path in hosts[0].values())
    finally:
        backend.evict(key)
        shutil.rmtree(keeper_dir, ignore_errors=True)
