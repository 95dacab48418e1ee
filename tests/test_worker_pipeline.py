"""The partition pipeline on the CPU backend with a real redis-server.

Multi-process tests run ``python -m workers.standalone`` processes that share "GPU 0"
(pseudo-UUID ``cpu-0``) and check the lock discipline from the event stream and the fencing
tokens; in-process tests cover the fallback path, cancellation and failure reporting.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import redis

from config.settings import load_settings
from snark.porep.c1 import C1, parse_c1
from snark.porep.proof_type import PorepType
from snark.porep.prove import load_or_setup_key, verify_partition
from snark.porep.witness import partition_witness
from snark.porep.seal import seal
from workers.telemetry import PhaseEvent, read_events
from snark.cpu_backend import CpuBackend
from workers.gpu_binding import bind_cpu, host_name
from config.redis_keys import DEFAULT_KEYS
from workers.card import read_cards
from workers.ledger import key_bytes, partition_bytes
from workers.failures import PartitionCancelled, PartitionFailed
from workers.runtime import WorkerRuntime
from workers.standalone import results_key

pytestmark = pytest.mark.slow  # standalone worker processes

LEASE_S = 2.0
POREP = PorepType()
QUEUE = "test:partitions"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def porep(tmp_path_factory):
    """A fresh porep-2KiB sector (one challenge per partition) and its proving key."""
    base = tmp_path_factory.mktemp("porep-demo")
    c1 = seal(2048, 9, 1)
    (base / "c1.json").write_text(c1.to_json())
    load_or_setup_key(c1, base / "params")
    return c1, base


def _settings(params: Path, **overrides):
    return load_settings(backend="cpu", params_dir=params, lock_lease_s=LEASE_S,
                         heartbeat_s=LEASE_S / 8, **overrides)


def _enqueue(client: redis.Redis, job: str, partitions) -> None:
    for p in partitions:
        client.rpush(QUEUE, json.dumps({"job": job, "partition": p}))


def _spawn(url: str, base: Path, name: str, *options: str) -> subprocess.Popen:
    env = dict(os.environ, PROOFQ_BACKEND="cpu", PROOFQ_PARAMS_DIR=str(base / "params"),
               PROOFQ_LOCK_LEASE_S=str(LEASE_S), PROOFQ_HEARTBEAT_S=str(LEASE_S / 8))
    return subprocess.Popen(
        [sys.executable, "-m", "workers.standalone", "--redis-url", url, "--gpu", "0",
         "--type", "porep-demo", "--input", str(base / "c1.json"), "--queue", QUEUE,
         "--name", name, *options],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _finish(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode in (0, -signal.SIGKILL), err.decode()[-2000:]


def _results(client: redis.Redis) -> list[dict]:
    return [json.loads(r) for r in client.lrange(results_key(QUEUE), 0, -1)]


def _assert_proofs_valid(c1: C1, base: Path, results: list[dict], partitions) -> None:
    key = load_or_setup_key(c1, base / "params")
    proofs = {r["partition"]: bytes.fromhex(r["proof"]) for r in results if "proof" in r}
    assert sorted(proofs) == sorted(partitions)
    for p, proof in proofs.items():
        assert verify_partition(c1, p, key.vk, proof), f"partition {p}"


def _phases(events: list[PhaseEvent], name: str, *, ok: bool = True) -> list[PhaseEvent]:
    return sorted((e for e in events if e.phase == name and (not e.error) == ok),
                  key=lambda e: e.start)


def _assert_exclusive(computes: list[PhaseEvent]) -> None:
    """Successful compute phases are disjoint in time and their fences grow with time."""
    for before, after in zip(computes, computes[1:]):
        assert before.end <= after.start, (before, after)
        assert before.fence < after.fence


COMPUTE_KEY = f"proofq:gpu:{host_name()}:cpu-0:compute"


def _holder_of_compute(client: redis.Redis) -> str | None:
    value = client.get(COMPUTE_KEY)
    return value.decode() if value else None


def _stop_compute_holder(client: redis.Redis, procs: dict[str, subprocess.Popen]):
    """SIGSTOP a worker while it provably holds the compute lock; return (name, token)."""
    for _ in range(60_000):
        token = _holder_of_compute(client)
        if token:
            name = token.split(":")[0]
            os.kill(procs[name].pid, signal.SIGSTOP)
            if _holder_of_compute(client) == token:
                return name, token
            os.kill(procs[name].pid, signal.SIGCONT)
        time.sleep(0.002)
    raise AssertionError("no worker ever held the compute lock")


# -- several worker processes on one GPU --------------------------------------------------

def test_three_workers_never_overlap_compute_and_stage_meanwhile(redis_url, porep):
    c1, base = porep
    client = redis.Redis.from_url(redis_url)
    _enqueue(client, "j-overlap", range(c1.partitions))
    _finish([_spawn(redis_url, base, f"w{i}") for i in range(3)])

    _assert_proofs_valid(c1, base, _results(client), range(c1.partitions))
    events = read_events(client, job="j-overlap")
    computes = _phases(events, "compute")
    assert len(computes) == c1.partitions
    _assert_exclusive(computes)
    assert {e.worker for e in computes} == {"w0", "w1", "w2"}
    # Fences are unique across both locks: one fencing counter per GPU.
    fences = [e.fence for e in events if e.phase in ("mem", "compute")]
    assert len(fences) == len(set(fences)) == 2 * c1.partitions
    # While one process computed, another one held the memory lock (pre-staged).
    mems = _phases(events, "mem")
    assert all(e.path == "prestage" for e in mems)
    assert any(m.worker != c.worker and c.start < m.start and m.end < c.end
               for m in mems for c in computes)


def test_killed_compute_holder_frees_the_gpu_and_its_partition_reruns(redis_url, porep, rng):
    c1, base = porep
    client = redis.Redis.from_url(redis_url)
    partitions = rng.sample(range(c1.partitions), 6)
    _enqueue(client, "j-kill", partitions)
    procs = {f"w{i}": _spawn(redis_url, base, f"w{i}") for i in range(3)}
    victim, token = _stop_compute_holder(client, procs)
    os.kill(procs[victim].pid, signal.SIGKILL)
    killed_at = time.time()
    # The dead holder's lock outlives it by at most one lease.
    ttl_ms = client.pttl(COMPUTE_KEY)
    assert _holder_of_compute(client) in (token, None) and ttl_ms <= LEASE_S * 1000
    _finish(list(procs.values()))

    events = read_events(client, job="j-kill")
    assert any(e.start > killed_at for e in _phases(events, "compute")), \
        "no waiter got the compute lock after the holder died"
    done = {r["partition"] for r in _results(client) if "proof" in r}
    lost = [p for p in partitions if p not in done]
    assert len(lost) == 1  # the victim's in-flight partition; Celery would redeliver it
    _enqueue(client, "j-kill", lost)
    _finish([_spawn(redis_url, base, "rerun")])
    _assert_proofs_valid(c1, base, _results(client), partitions)
    _assert_exclusive(_phases(read_events(client, job="j-kill"), "compute"))


def test_lease_lost_mid_compute_is_a_transient_failure_then_retried(redis_url, porep, rng):
    c1, base = porep
    client = redis.Redis.from_url(redis_url)
    partitions = rng.sample(range(c1.partitions), 4)
    _enqueue(client, "j-lease", partitions)
    procs = {f"w{i}": _spawn(redis_url, base, f"w{i}") for i in range(2)}
    victim, token = _stop_compute_holder(client, procs)
    # Frozen (a stall, not a death): its lease lapses and the other worker takes over.
    for _ in range(60_000):
        holder = _holder_of_compute(client)
        if holder is not None and holder != token:
            break
        time.sleep(0.002)
    os.kill(procs[victim].pid, signal.SIGCONT)
    _finish(list(procs.values()))

    failures = [r for r in _results(client) if "error" in r]
    assert [(r["worker"], r["transient"]) for r in failures] == [(victim, True)]
    assert failures[0]["error"].startswith("compute: LeaseLost")
    _assert_proofs_valid(c1, base, _results(client), partitions)
    events = read_events(client, job="j-lease")
    failed = _phases(events, "compute", ok=False)
    assert [e.worker for e in failed] == [victim] and "lease lost" in failed[0].error
    _assert_exclusive(_phases(events, "compute"))


def test_a_lingering_worker_takes_later_entries_and_stops_when_told(redis_url, porep):
    """``--linger``: a worker waits for entries pushed after its queue ran empty, and an
    entry ``{"stop": true}`` ends it at once (the benches feed rounds this way)."""
    c1, base = porep
    client = redis.Redis.from_url(redis_url)
    client.delete(QUEUE, results_key(QUEUE))
    worker = _spawn(redis_url, base, "lingerer", "--linger", "600")
    try:
        _enqueue(client, "j-linger", [0])
        deadline = time.monotonic() + 300
        while len(_results(client)) < 1:
            assert time.monotonic() < deadline and worker.poll() is None, "no first proof"
            time.sleep(0.05)
        _enqueue(client, "j-linger", [1])  # after the queue ran empty
        client.rpush(QUEUE, json.dumps({"stop": True}))
        assert worker.wait(timeout=120) == 0  # long before its 600 s of lingering
    finally:
        worker.kill()
    _assert_proofs_valid(c1, base, _results(client), [0, 1])


# -- one runtime in this process ----------------------------------------------------------

@pytest.fixture()
def runtime_factory(redis_url, porep):
    started = []

    def start(**overrides) -> WorkerRuntime:
        runtime = WorkerRuntime.start(redis_url=redis_url, gpu=0,
                                      settings=_settings(porep[1] / "params", **overrides),
                                      worker_name=f"inproc{len(started)}")
        started.append(runtime)
        return runtime

    yield start
    for runtime in started:
        runtime.close()


@pytest.mark.parametrize("overrides, path", [
    ({}, "prestage"),
    ({"vram_budget_bytes": 1}, "stream"),   # nothing fits: fallback inside compute
    ({"prestage": False}, "stream"),
])
def test_staging_path_and_the_proof_is_valid(runtime_factory, porep, overrides, path, rng):
    c1, base = porep
    runtime = runtime_factory(**overrides)
    partition = rng.randrange(c1.partitions)
    seen = []
    cards = []  # the worker's card as readers see it, at each phase

    def progress(phase, info):
        seen.append(phase)
        cards.append(next(c for c in read_cards(runtime.client, DEFAULT_KEYS.card_prefix)
                          if c.worker == "inproc0"))

    proof = runtime.prove_partition(job_id="j-path", partition=partition, proof_type=POREP,
                                    job_input=c1, progress=progress)
    assert seen == ["synthesize", "mem_wait", "mem", "compute_wait", "compute", "finalize",
                    "verify"]
    assert verify_partition(c1, partition, load_or_setup_key(c1, base / "params").vk, proof)
    events = read_events(runtime.client, job="j-path")
    assert [e.path for e in events if e.phase in ("mem", "compute")] == [path, path]
    # Only the resident key stays reserved once the partition is done.
    assert runtime.ledger.reserved_bytes() == key_bytes(load_or_setup_key(c1, base / "params"))
    # The card said what the worker proved, and says which key it holds now.
    assert {(c.job, c.partition, c.proof_type) for c in cards} == {("j-path", partition,
                                                                   POREP.name)}
    assert not cards[0].keys and cards[-1].keys  # resident from the memory phase on
    [after] = read_cards(runtime.client, DEFAULT_KEYS.card_prefix)
    assert (after.job, after.partition, after.ordinal, after.device_name) == (
        "", -1, 0, "CPU (cpu backend)")
    assert list(after.keys.values()) == [key_bytes(load_or_setup_key(c1, base / "params"))]


def test_budget_for_exactly_the_key_and_one_partition(runtime_factory, porep):
    c1, base = porep
    key = load_or_setup_key(c1, base / "params")
    runtime = runtime_factory(vram_budget_bytes=key_bytes(key) + partition_bytes(key))
    blocker = runtime.ledger.reserve("other-worker", 1)  # another worker's staged partition
    runtime.prove_partition(job_id="j-tight", partition=1, proof_type=POREP, job_input=c1)
    blocker.release()
    runtime.prove_partition(job_id="j-tight", partition=2, proof_type=POREP, job_input=c1)
    paths = [e.path for e in read_events(runtime.client, job="j-tight") if e.phase == "mem"]
    assert paths == ["stream", "prestage"]


def test_cancel_at_a_phase_boundary_holds_nothing(runtime_factory, porep):
    c1, base = porep
    runtime = runtime_factory()
    seen = []
    with pytest.raises(PartitionCancelled):
        runtime.prove_partition(job_id="j-cancel", partition=0, proof_type=POREP, job_input=c1,
                                progress=lambda phase, info: seen.append(phase),
                                cancelled=lambda: "mem" in seen)
    assert seen == ["synthesize", "mem_wait", "mem"]
    assert runtime.locks.mem.holder() is None and runtime.locks.compute.holder() is None
    assert runtime.ledger.reserved_bytes() == key_bytes(load_or_setup_key(c1, base / "params"))


def test_cancel_during_compute_stops_at_the_next_device_call(runtime_factory, porep,
                                                               monkeypatch):
    """Before: a running compute phase saw a cancel only when it ended (71 s on the CPU),
    its device busy all that time."""
    import workers.runtime

    monkeypatch.setattr(workers.runtime, "CANCEL_POLL_S", 0.0, raising=False)
    c1, base = porep
    runtime = runtime_factory()
    seen = []
    with pytest.raises(PartitionCancelled, match="cancelled during compute"):
        runtime.prove_partition(job_id="j-cancel-c", partition=0, proof_type=POREP,
                                job_input=c1, progress=lambda phase, info: seen.append(phase),
                                cancelled=lambda: "compute" in seen)
    assert seen[-1] == "compute"
    [compute] = [e for e in read_events(runtime.client, job="j-cancel-c")
                 if e.phase == "compute"]
    assert "cancelled during compute" in compute.error
    assert runtime.locks.mem.holder() is None and runtime.locks.compute.holder() is None
    assert runtime.ledger.reserved_bytes() == key_bytes(load_or_setup_key(c1, base / "params"))


def test_forged_leaf_fails_in_synthesize_naming_the_challenge(runtime_factory, porep):
    c1, _ = porep
    data = json.loads(c1.to_json())
    leaf = data["vanilla_proofs"][0]["challenges"][0]
    leaf["data_leaf"] = f"0x{(int(leaf['data_leaf'], 16) + 1) % (1 << 250):064x}"
    forged = parse_c1(data)
    with pytest.raises(PartitionFailed) as info:
        runtime_factory().prove_partition(job_id="j-bad", partition=0, proof_type=POREP,
                                          job_input=forged)
    assert (info.value.phase, info.value.transient) == ("synthesize", False)
    assert "vanilla_proofs[0].challenges[0]" in info.value.reason


def test_wrong_witness_fails_verification_permanently(runtime_factory, porep, monkeypatch):
    """The pairing check is the last net: a witness that slipped past every check is refused."""
    import snark.porep.staging

    def tampered(c1, partition, check=False):
        witness = partition_witness(c1, partition, check=check).copy()
        witness[-1, 0] ^= 1
        return witness

    monkeypatch.setattr(snark.porep.staging, "partition_witness", tampered)
    c1, _ = porep
    with pytest.raises(PartitionFailed) as info:
        runtime_factory().prove_partition(job_id="j-bad", partition=0, proof_type=POREP,
                                          job_input=c1)
    assert (info.value.phase, info.value.transient) == ("verify", False)
    assert str(info.value).startswith("verify: the proof does not pass")


def test_bad_partition_number_fails_in_synthesize(runtime_factory, porep):
    c1, _ = porep
    runtime = runtime_factory()
    with pytest.raises(PartitionFailed) as info:
        runtime.prove_partition(job_id="j-bad", partition=c1.partitions, proof_type=POREP,
                                job_input=c1)
    assert (info.value.phase, info.value.transient) == ("synthesize", False)
    [event] = read_events(runtime.client, job="j-bad")
    assert (event.phase, event.error) == ("synthesize", info.value.reason)


def test_queued_phase_and_metrics_endpoint(runtime_factory, porep):
    c1, _ = porep
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    runtime = runtime_factory(metrics_port=port)
    queued_at = time.time() - 1.5
    runtime.prove_partition(job_id="j-metrics", partition=0, proof_type=POREP, job_input=c1,
                            queued_at=queued_at)
    [queued] = [e for e in read_events(runtime.client, job="j-metrics") if e.phase == "queued"]
    assert queued.start == queued_at and queued.end >= queued_at + 1.5
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
    for phase in ("queued", "synthesize", "mem", "compute", "verify"):
        assert f'proofq_phase_seconds_count{{phase="{phase}"}}' in body
    for lock in ("mem", "compute"):
        assert f'proofq_lock_wait_seconds_count{{lock="{lock}"}}' in body
        assert f'proofq_lock_hold_seconds_count{{lock="{lock}"}}' in body


def test_a_refused_budget_starts_no_heartbeat_thread(redis_url):
    import threading

    from config.settings import SettingsError
    from workers.runtime import WorkerRuntime

    before = {t for t in threading.enumerate() if t.name == "proofq-heartbeat"}
    with pytest.raises(SettingsError, match="PROOFQ_VRAM_HEADROOM_BYTES"):
        WorkerRuntime.start(redis_url=redis_url, gpu=None,
                            settings=load_settings(vram_headroom_bytes=1 << 62))
    after = {t for t in threading.enumerate() if t.name == "proofq-heartbeat"}
    assert after == before


def test_a_cpu_worker_speaks_of_host_memory_not_vram(redis_url, caplog):
    """Before: a CPU worker logged a 'VRAM budget'."""
    import logging

    from workers.runtime import WorkerRuntime

    with caplog.at_level(logging.INFO, logger="workers.runtime"):
        WorkerRuntime.start(redis_url=redis_url, gpu=None, worker_name="cpu-words",
                            settings=load_settings(backend="cpu")).close()
    [line] = [r.getMessage() for r in caplog.records if "cpu-words" in r.getMessage()]
    assert "host memory budget" in line and "VRAM" not in line, line


class CachingCpu(CpuBackend):
    """The CPU backend as a GPU's would be after a compute phase: ``cached`` bytes of
    scratch kept for reuse; notes when it was told to give them back."""

    def __init__(self, cached: int) -> None:
        super().__init__()
        self.cached = cached
        self.returned_at: list[float] = []

    def cached_bytes(self) -> int:
        return self.cached

    def return_cached(self) -> None:
        self.returned_at.append(time.time())


@pytest.mark.parametrize("room_for", [3, 1])
def test_scratch_is_kept_only_with_room_for_another_working_set(redis_url, porep, room_for):
    """A compute phase's scratch stays cached (reserved in the ledger) while one more
    working set of its size fits beside it and the key; else it goes back to the device
    before the compute phase ends, while the lock is still held."""
    c1, base = porep
    key = load_or_setup_key(c1, base / "params")
    cache = 10_000
    settings = _settings(base / "params", prestage=False,
                         vram_budget_bytes=key_bytes(key) + room_for * cache)
    backend = CachingCpu(cache)
    runtime = WorkerRuntime(client=redis.Redis.from_url(redis_url), settings=settings,
                            worker_name=f"cache{room_for}", binding=bind_cpu(0),
                            backend=backend)
    try:
        for partition in (0, 1):
            runtime.prove_partition(job_id=f"j-cache{room_for}", partition=partition,
                                    proof_type=POREP, job_input=c1)
        computes = _phases(read_events(runtime.client, job=f"j-cache{room_for}"), "compute")
        if room_for == 3:
            assert backend.returned_at == []
            assert runtime.ledger.reserved_bytes() == key_bytes(key) + cache  # once, not twice
        else:
            assert len(backend.returned_at) == 2
            assert all(e.start <= t <= e.end for e, t in zip(computes, backend.returned_at))
            assert runtime.ledger.reserved_bytes() == key_bytes(key)
    finally:
        runtime.close()
    # closing gives back the key's reservation and the cache's
    assert redis.Redis.from_url(redis_url).hlen(runtime.ledger.bytes_key) == 0
