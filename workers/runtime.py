"""The partition pipeline of one worker process bound to one GPU (docs/ARCHITECTURE.md §2).

A partition is one unit of work of a job: one Groth16 proof. Everything about its proof type
(key, witness, public inputs) comes from the type's worker half
(``snark.proof_types.ProofWorker``, found through ``snark.registry``); this module knows
Groth16, the backend interface and that protocol, and no type.

    synthesize    CPU, no lock: the type's work for the partition, its witness (the key is
                  loaded once per process); with a backend that has the type's device steps
                  (``gpu`` for porep), only the compact inputs (porep: leaves, paths,
                  indices, < 1% of its bytes)
    mem_wait/mem  memory lock: reserve VRAM in the ledger; if granted, upload the witness
                  or the compact inputs (pre-stage); a refused reservation or a failed
                  allocation takes the fallback path instead. Released before compute.
    compute_wait/compute
                  compute lock: (fallback: upload here) a device witness and its check,
                  A·w, B·w, C·w → H → the MSMs
    finalize      no lock: randomisation and serialisation
    verify        no lock: the pairing check; a proof that fails it is never returned

While one process holds compute, the others synthesize and pre-stage, so the GPU's kernels
run back to back. Every phase emits an event and observes a histogram (``workers.telemetry``);
every failure is a ``PartitionFailed`` naming the phase and the reason, of a kind of the
taxonomy in ``workers.failures`` (transient: retry; outage: wait for Redis; permanent: the
job fails).

Lease loss: all backend calls made under a lock (a proof type's own device steps too) go
through ``workers.fence``, which checks the lock's lease first, so a worker whose lease
expired stops before touching the GPU again.

Keys: the process's keys are held by one owner (``workers.key_residency``): loaded once,
made resident in the memory phase with their bytes reserved in the VRAM ledger, the least
recently used one evicted when the ledger has no room for another (never one a partition is
using). A transient key (``_transient_key``: WindowPoSt's) is resident only from its
partition's memory phase to the end of its compute phase, where its device part goes back to
the device with its reservation, under the compute lock as a partition's scratch does (or
from the start of its compute phase, where the device had no room for it earlier); its
bases stay in pinned host memory. A key can also be made resident ahead of work, or let go,
on request (``workers.key_requests``, the gRPC door's PreloadSRS and EvictSRS):
``carry_out``, in the requests' thread, through the same owner and, for a preload, under the
GPU's memory lock as a memory phase.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any
from wsgiref.simple_server import WSGIServer

import redis

from config.redis_keys import RedisKeys
from config.settings import Settings, SettingsError, get_settings
from workers.key_residency import Residency
from snark import groth16
from snark.backend import DeviceMemoryError, ProverBackend
from snark.cpu_backend import CpuBackend
from snark.errors import WorkerFault
from snark.keys import ProvingKey
from snark.proof_types import AnyWorker, ProofType, Storage
from snark.registry import UnknownProofType, plugin, worker_half
from snark.unit_work import UnitWork
from workers import gpu_binding
from workers.backend_choice import fixed_base_for, make_backend
from workers.card import Card, WorkerCard
from workers.telemetry import (CACHE_RETURNED, PARTITION_FAILURES, STAGING, EventLog, PhaseEvent,
                            serve_metrics)
from workers.failures import (Failure, PartitionCancelled, PartitionFailed, classify,
                              describe)
from workers.fence import fence
from workers.gpu_binding import Binding
from workers.heartbeat import Heartbeat
from workers.key_requests import KeyReply, KeyRequest, KeyRequests
from workers.phase_events import Phase
from workers.ledger import Reservation, VramLedger, key_bytes, partition_bytes
from workers.locks import HeldLock, LockPair, LockWaitAborted, PartitionLocks

log = logging.getLogger(__name__)

#: How often a compute phase reads whether its job was cancelled, at most (between device
#: calls: a cancel stops it at the next call after the read, not at the phase's end).
CANCEL_POLL_S = 0.5

Progress = Callable[[str, dict], None]


@dataclass
class _Phase:
    """What a running phase reports in its event (filled in while it runs)."""

    fence: int = 0
    path: str = ""


@dataclass
class _PartitionRun:
    job: str
    partition: int
    progress: Progress | None
    cancelled: Callable[[], bool] | None
    staged_path: str = ""
    key_in_compute: bool = False  # a transient key's device part is made resident there

    polled_at: float = 0.0

    def is_cancelled(self) -> bool:
        return bool(self.cancelled and self.cancelled())

    def stop_if_cancelled(self) -> None:
        """Between a compute phase's device calls (the fence's checks): a cancel read at
        most every ``CANCEL_POLL_S`` (one Redis read, no device sync) ends the partition
        there rather than when the phase ends; a Redis error leaves it to the next phase's
        check."""
        now = time.monotonic()
        if now - self.polled_at < CANCEL_POLL_S:
            return
        self.polled_at = now
        try:
            cancelled = self.is_cancelled()
        except redis.RedisError:
            return
        if cancelled:
            raise PartitionCancelled(f"job {self.job} cancelled during compute")


class WorkerRuntime:
    """One worker process's view of its GPU: locks, ledger, events, backend, keys."""

    def __init__(self, *, client: redis.Redis, settings: Settings, worker_name: str,
                 binding: Binding, backend: ProverBackend) -> None:
        self.client = client
        self.settings = settings
        self.worker_name = worker_name
        # the device's locks and ledger in this cluster's namespace
        binding = replace(binding, gpu=replace(binding.gpu, namespace=settings.namespace))
        self.binding = binding
        self.backend = backend
        self.storage = Storage.of(settings)
        budget = _budget(settings, binding)  # may refuse the settings: before any thread
        self.heartbeat = Heartbeat(settings.heartbeat_s)
        self.locks = LockPair(client, binding.gpu, lease_s=settings.lock_lease_s,
                              heartbeat=self.heartbeat)
        self.ledger = VramLedger(client, binding.gpu, budget_bytes=budget,
                                 lease_s=settings.lock_lease_s, heartbeat=self.heartbeat)
        keys = RedisKeys.of(settings)
        self.events = EventLog(client, settings.events_maxlen, keys.events)
        self.residency: Residency[tuple[str, str]] = Residency(
            backend, self._reserve_key, self._pin_key, self._transient_key)
        self.card = WorkerCard(client, _card(worker_name, binding, backend),
                               settings.lock_lease_s, keys.card_prefix)
        self.heartbeat.register(self.card)
        # reading requests from before the card is first written: whoever sees the card
        # live can ask this process
        self.key_requests = KeyRequests(client, keys, worker_name, self.carry_out)
        self._update_card()
        self._cache: Reservation | None = None  # what the backend keeps cached between partitions
        self.metrics: WSGIServer | None = None  # this process's /metrics, when configured
        log.info("worker %s on %s (%s backend), %s %.1f GiB", worker_name,
                 binding.gpu.key_prefix, backend.name,
                 "host memory budget" if binding.device_id is None else "VRAM budget",
                 budget / (1 << 30))

    # -- lifecycle ------------------------------------------------------------------------
    @classmethod
    def start(cls, *, redis_url: str, gpu: int | None, settings: Settings | None = None,
              worker_name: str | None = None, backend: str | None = None) -> "WorkerRuntime":
        """Bind the GPU (before CUDA starts), read its memory once, connect to Redis.

        ``backend``: the worker's decision ("gpu"/"cpu"); None decides here, by the setting.
        """
        settings = settings or get_settings()
        binding, prover = _bind(gpu, backend or settings.backend, settings)
        name = worker_name or f"{binding.gpu.host}:{binding.label}:{os.getpid()}"
        client = redis.Redis.from_url(redis_url)
        try:
            client.ping()
            runtime = cls(client=client, settings=settings, worker_name=name, binding=binding,
                          backend=prover)
        except BaseException:
            client.close()
            raise
        if settings.metrics_port is not None:
            runtime.metrics = serve_metrics(settings.metrics_port, settings.metrics_address)
        return runtime

    def close(self) -> None:
        """Stop renewing and serving metrics, give back the resident keys' reservations."""
        self.key_requests.close()
        if self._cache is not None:
            self._cache.release()
        self.heartbeat.close()
        try:
            self.card.remove()
        except redis.RedisError:  # it expires by itself
            pass
        if self.metrics is not None:
            self.metrics.shutdown()
            self.metrics.server_close()
        try:
            self.residency.close()
        finally:
            self.client.close()

    # -- the pipeline ---------------------------------------------------------------------
    def prove_partition(self, *, job_id: str, partition: int, proof_type: ProofType,
                        job_input: Any, progress: Progress | None = None,
                        cancelled: Callable[[], bool] | None = None,
                        queued_at: float | None = None,
                        key_seen: Callable[[str], str | None] | None = None,
                        band: int = 0) -> bytes:
        """Prove one partition of a job (its parsed input, of ``proof_type``) through all
        phases; return what the job stores of it (``ProofWorker.part``: the verified 192-byte
        proof, with its public inputs where the type keeps them).

        ``queued_at`` (Unix seconds), when the caller knows it, adds the ``queued`` phase:
        from enqueue to this worker picking the partition up.

        ``band``: the job's priority level (lower first): where the partition waits in the
        GPU's lock queues (``workers.locks``), ahead of every waiting partition of a lower
        band.

        ``key_seen(mine)``, when given, records this worker's key (``"<vk digest> <worker>"``)
        for the job and returns the first one recorded: a partition whose key is not the one
        the job's other partitions are proved with (workers with separate params directories
        make separate development keys) fails in ``synthesize``, before any proving, naming
        both workers (before: at assembly, after every partition was proved).
        """
        run = _PartitionRun(job_id, partition, progress, cancelled)
        if queued_at is not None:
            self._record(run, Phase.QUEUED, queued_at, time.time(), _Phase(), None)
        self._update_card(job=job_id, partition=partition, proof_type=proof_type.name)
        try:
            with self.residency.using(_key_name(proof_type, job_input)):
                return self._prove(run, proof_type, job_input, key_seen, band)
        finally:
            self._update_card(job="", partition=-1, proof_type="")

    def _prove(self, run: _PartitionRun, proof_type: ProofType, job_input: Any,
               key_seen: Callable[[str], str | None] | None, band: int) -> bytes:
        partition = run.partition
        worker = worker_half(proof_type, self.storage)
        with self._phase(run, Phase.SYNTHESIZE):
            key = self._key(proof_type, worker, job_input)
            if key_seen is not None:
                self._same_key_as_the_job(key, key_seen)
            work = worker.work(job_input, partition, key, self.backend)
            public = worker.public_inputs(job_input, partition, key, work)
        locks = self.locks.for_partition(self.worker_name, band)
        staged, reservation = self._memory_phase(run, locks, key, work)
        try:
            parts = self._compute_phase(run, locks, key, work, staged)
        finally:
            if reservation is not None:
                reservation.release()
        with self._phase(run, Phase.FINALIZE):
            proof = groth16.finalize(key, parts)
            encoded = worker.part(proof.to_bytes(), public)
        with self._phase(run, Phase.VERIFY):
            if not groth16.verify(key.vk, public, proof):
                raise PartitionFailed(Phase.VERIFY, "the proof does not pass the pairing check "
                                      "(the witness does not satisfy the circuit, or a "
                                      "backend computed a wrong MSM or quotient)",
                                      Failure.PERMANENT)
        return encoded

    def _same_key_as_the_job(self, key: ProvingKey, key_seen: Callable[[str], str | None]
                             ) -> None:
        digest = key.vk.digest()
        first = key_seen(f"{digest} {self.worker_name}")
        if first is None or first.split(" ", 1)[0] == digest:
            return
        theirs, other = first.split(" ", 1)
        raise KeyMismatch(
            f"proving key {key.circuit_id}: this worker's ({self.worker_name}, vk "
            f"{digest[:12]}) is not the one {other} proves this job with (vk {theirs[:12]}): "
            "every worker must load the same key (one PROOFQ_PARAMS_DIR for all, or the key "
            "copied into each); development keys made separately always differ")

    def _key(self, proof_type: ProofType, worker: AnyWorker, job_input: Any) -> ProvingKey:
        def load() -> ProvingKey:
            key = worker.load_key(job_input, fixed_base=fixed_base_for(self.backend))
            log.info("%s key %s loaded", proof_type.name, key.circuit_id)
            return key

        return self.residency.key(_key_name(proof_type, job_input), load)

    # -- keys on request (workers.key_requests) -------------------------------------------
    def carry_out(self, request: KeyRequest) -> KeyReply:
        """A preload or an eviction asked of every worker (the requests' thread), under the
        GPU's memory lock as the memory phase makes and evicts keys, waiting for it at most
        the request's ``wait_s``."""
        name = (request.proof_type, request.name)
        reply = KeyReply(self.worker_name, True,
                         device=f"{self.binding.gpu.host}:{self.binding.gpu.uuid}")
        kept = self.residency.held_by_name().get(name)  # resident, or transient on the host
        if kept is not None:
            reply = replace(reply, was_resident=True, nbytes=self._device_bytes(name),
                            shared=self.backend.shared_name(kept) is not None)
        if request.op == "evict":
            return reply if kept is None else self._let_go(name, reply, request.wait_s)
        if kept is not None:
            return reply
        directory = self.storage.params_dir / request.directory
        if not (directory / "manifest.json").is_file():
            return replace(reply, ok=False, error=(
                f"$PROOFQ_PARAMS_DIR/{request.directory}/manifest.json: missing (the key is "
                f"not made or converted yet: its first job makes it)"))
        started = time.monotonic()
        with self.residency.using(name):
            key = self.residency.key(name, lambda: ProvingKey.load(directory))
            held = self._memory_lock(started + request.wait_s)
            if held is None:
                return replace(reply, ok=False, error=(
                    f"the GPU's memory lock was not free within {request.wait_s:g} s (the key "
                    f"is loaded in this process, not resident)"))
            with held:
                self.residency.make_resident(key, fence(self.backend, held))
                self.residency.done_with_device(key)  # a transient key: its host part is ready
        self._update_card()
        elapsed = time.monotonic() - started
        log.info("key %s/%s made resident on request in %.1f s", *name, elapsed)
        return replace(reply, milliseconds=max(1, round(elapsed * 1000)),
                       nbytes=self._device_bytes(name),
                       shared=self.backend.shared_name(key) is not None)

    def _device_bytes(self, name: tuple[str, str]) -> int:
        """What a reply says the key named ``name`` holds on the device: its bytes while
        resident; nothing for a transient key between partitions (a preload of one builds
        its host part and gives its device part back at once)."""
        resident = self.residency.resident_by_name().get(name)
        return 0 if resident is None else key_bytes(resident)

    def _let_go(self, name: tuple[str, str], reply: KeyReply, wait_s: float) -> KeyReply:
        held = self._memory_lock(time.monotonic() + wait_s)
        if held is None:
            return replace(reply, ok=False, error=f"the GPU's memory lock was not free within "
                                                  f"{wait_s:g} s (the key stays resident)")
        with held:
            released = self.residency.let_go(name)
        self._update_card()
        if released is None:  # evicted meanwhile (the ledger needed its room)
            return replace(reply, nbytes=0)
        deferred = released[1]
        log.info("key %s/%s let go on request%s", *name,
                 " when its partition ends (in use)" if deferred else "")
        return replace(reply, deferred=deferred)

    def _memory_lock(self, give_up: float) -> HeldLock | None:
        """The GPU's memory lock, or None once ``give_up`` (monotonic) passed waiting."""
        try:
            return self.locks.for_partition(self.worker_name).memory(
                should_stop=lambda: time.monotonic() > give_up)
        except LockWaitAborted:
            return None

    def _update_card(self, **fields) -> None:
        """The card with ``fields`` and the keys resident now; never fails the work (the
        card is for readers, and the heartbeat writes it again)."""
        keys = {"/".join(map(str, name)): key_bytes(key)
                for name, key in self.residency.resident_by_name().items()}
        try:
            self.card.update(keys=keys, **fields)
        except redis.RedisError as exc:
            log.debug("card not written: %s", exc)

    def _resident_bytes(self, key: ProvingKey) -> int:
        return key_bytes(key) + self.backend.extra_resident_bytes(key)

    def _transient_key(self, name: tuple[str, str]) -> bool:
        """Whether the key named ``name`` has a transient device part: its type's record
        says so (``ProofTypePlugin.transient_key``: WindowPoSt's, proved a few partitions a
        deadline beside PoRep's steady work, which its device part would otherwise crowd
        out), unless ``PROOFQ_TRANSIENT_KEY_TYPES`` names the types instead (the operator
        knows the device: ``[]`` where every key fits)."""
        chosen = self.settings.transient_key_types
        if chosen is not None:
            return name[0] in chosen
        try:
            return plugin(name[0]).transient_key
        except UnknownProofType:  # a request's type this worker does not know
            return False

    def _pin_key(self, key: ProvingKey) -> bool:
        """Pin a key small enough to stay beside the pinned ones within
        ``pinned_key_bytes`` (a WinningPoSt key: never evicted for a PoRep one)."""
        pinned = sum(self._resident_bytes(k) for k in self.residency.pinned())
        return pinned + self._resident_bytes(key) <= self.settings.pinned_key_bytes

    def _reserve_key(self, key: ProvingKey, *, force: bool) -> Reservation | None:
        """The ledger's reservation of a resident key's bases, matrices and tables: the
        GPU's one for a key its processes share, else this process's own."""
        nbytes = self._resident_bytes(key)
        shared = self.backend.shared_name(key)
        if shared is not None:
            return self.ledger.reserve_shared(shared, self.worker_name, nbytes, force=force)
        return self.ledger.reserve(f"{self.worker_name}:key", nbytes, force=force)

    def _memory_phase(self, run: _PartitionRun, locks: PartitionLocks, key: ProvingKey,
                      work: UnitWork) -> tuple[Any, Reservation | None]:
        """Pre-stage when the ledger grants it; (None, None) means: stream in compute."""
        with self._phase(run, Phase.MEM_WAIT):
            held = locks.memory(should_stop=run.is_cancelled)
        with held, self._phase(run, Phase.MEM, fence=held.fence) as phase:
            fenced = fence(self.backend, held)
            run.staged_path = phase.path = "stream"
            # the key resident once, under this lock, either path
            if not self._make_resident(run, key, fenced):
                STAGING.labels(path="stream_key_in_compute").inc()
                return None, None
            self._update_card()
            if not self.settings.prestage:
                STAGING.labels(path="stream_disabled").inc()
                return None, None
            reservation = self.ledger.reserve(self.worker_name, partition_bytes(key))
            if reservation is None:
                STAGING.labels(path="stream_no_budget").inc()
                return None, None
            try:
                staged = work.stage(key, fenced)
            except DeviceMemoryError:
                reservation.release()
                STAGING.labels(path="stream_device_oom").inc()
                return None, None
            except BaseException:
                reservation.release()
                raise
            STAGING.labels(path="prestage").inc()
            run.staged_path = phase.path = "prestage"
            return staged, reservation

    def _make_resident(self, run: _PartitionRun, key: ProvingKey, backend: ProverBackend
                       ) -> bool:
        """The key resident, in the memory phase; False where the device had no room for a
        transient key's device part (another process's compute scratch is there, which the
        ledger does not count): it is made resident at the start of this partition's
        compute phase instead, once the last holder's scratch has gone back, within the
        reservation made now. Any other key's refusal fails the partition (retried)."""
        try:
            self.residency.make_resident(key, backend)
        except DeviceMemoryError:
            if not self.residency.is_transient(key):
                raise
            run.key_in_compute = True
            return False
        return True

    def _compute_phase(self, run: _PartitionRun, locks: PartitionLocks, key: ProvingKey,
                       work: UnitWork, staged: Any) -> groth16.MsmParts:
        """Compute under the lock; on any failure the partition's device buffers are freed."""
        try:
            with self._phase(run, Phase.COMPUTE_WAIT):
                held = locks.compute(should_stop=run.is_cancelled)
            with held, self._phase(run, Phase.COMPUTE, fence=held.fence,
                                     path=run.staged_path):
                run.polled_at = time.monotonic()  # the phase's own check has just read it
                fenced = fence(self.backend, held, stop=run.stop_if_cancelled)
                if run.key_in_compute:
                    self.residency.make_resident(key, fenced)
                if staged is None:
                    staged = work.stage(key, fenced)
                staged = work.handle(key, staged, fenced)
                parts = groth16.compute(key, staged, fenced)
                # A result computed past the lease may have shared the GPU with the next
                # holder: retry it, so every successful compute phase was exclusive.
                held.check()
                self.residency.done_with_device(key)  # a transient key's device part goes now
                self._settle_cache()
                return parts
        except BaseException:
            if staged is not None:
                self.backend.release(staged)
            raise

    def _settle_cache(self) -> None:
        """Keep the partition's scratch cached for the next one only where the ledger has
        room for it and for one more working set of its size (the next holder of the
        compute lock, this process or another); else give it back to the device now, while
        this process still holds the compute lock and no other process runs kernels (a
        32 GiB partition's ~60 GB: two workers' caches and the key exceed an H200)."""
        cached = self.backend.cached_bytes()
        if self._cache is not None:
            if 0 < cached <= self._cache.nbytes and self._cache.lost_reason is None:
                return  # already reserved: the steady state asks Redis nothing
            self._cache.release()
            self._cache = None
        if not cached:
            return
        self._cache = self.ledger.reserve(f"{self.worker_name}:cache", cached, leave_free=cached)
        if self._cache is None:
            self.backend.return_cached()
            CACHE_RETURNED.inc()

    # -- phases ---------------------------------------------------------------------------
    @contextmanager
    def _phase(self, run: _PartitionRun, name: str, *, fence: int = 0,
               path: str = "") -> Iterator[_Phase]:
        """Check cancellation, report progress, time the phase, name its failure."""
        try:
            cancelled = run.is_cancelled()
        except redis.RedisError as exc:  # the check reads Redis too: a transient failure
            raise _as_failure(name, exc, run) from exc
        if cancelled:
            raise PartitionCancelled(f"job {run.job} cancelled before {name}")
        phase = _Phase(fence, path)
        if run.progress is not None:
            try:
                run.progress(name, {"job": run.job, "partition": run.partition,
                                    "fence": fence, "gpu": self.binding.label,
                                    "worker": self.worker_name})
            except Exception:  # a monitoring hiccup must not fail the partition
                log.warning("progress report for %s failed", name, exc_info=True)
        start = time.time()
        error: BaseException | None = None
        try:
            yield phase
        except BaseException as exc:
            error = exc
            failure = _as_failure(name, exc, run)
            if failure is exc:
                raise
            raise failure from exc
        finally:
            self._record(run, name, start, time.time(), phase, error)

    def _record(self, run: _PartitionRun, name: str, start: float, end: float, phase: _Phase,
                error: BaseException | None) -> None:
        event = PhaseEvent(run.job, run.partition, self.worker_name, self.binding.label,
                           self.binding.gpu.host, name, start, end, phase.fence, phase.path,
                           describe(error) if error is not None else "")
        try:
            self.events.record(event)
        except redis.RedisError as exc:  # never let bookkeeping hide the partition's outcome
            log.warning("could not record %s event of %s/%d: %s", name, run.job, run.partition,
                        " ".join(str(exc).split())[:200])


def _key_name(proof_type: ProofType, job_input: Any) -> tuple[str, str]:
    """What the process's key owner names a job's key by (its card: ``<type>/<name>``)."""
    return proof_type.name, proof_type.key_name(job_input)


class KeyMismatch(WorkerFault):
    """This worker's key is not the one the job's other partitions are proved with: its
    proof could never assemble with theirs, a worker with the job's key can."""


def _as_failure(phase: str, exc: BaseException, run: _PartitionRun) -> BaseException:
    if isinstance(exc, (PartitionFailed, PartitionCancelled)):
        return exc
    if isinstance(exc, LockWaitAborted) and run.is_cancelled():
        return PartitionCancelled(f"job {run.job} cancelled while waiting ({phase})")
    if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: not ours to wrap
        return exc
    failure = PartitionFailed(phase, describe(exc), classify(exc))
    PARTITION_FAILURES.labels(phase=phase, transient=str(failure.transient).lower()).inc()
    return failure


def _card(worker_name: str, binding: Binding, backend: ProverBackend) -> Card:
    """What the worker's card says of its device: the GPU number it was started with (a CPU
    stand-in's ``cpu-N`` says N; -1 for none), the device's name and memory."""
    ordinal = os.environ.get(gpu_binding.PINNED_ENV)
    if ordinal is None and binding.gpu.uuid.startswith("cpu-"):
        ordinal = binding.gpu.uuid.removeprefix("cpu-")
    name = f"CPU ({backend.name} backend)"
    if binding.device_id is not None:
        from gpu import device

        name = device.name(binding.device_id)
    return Card(worker_name, binding.gpu.host, binding.gpu.uuid,
                int(ordinal) if ordinal is not None else -1, name, binding.total_bytes)


def _bind(gpu: int | None, setting: str, settings: Settings) -> tuple[Binding, ProverBackend]:
    """Pin GPU N (before anything in gpu/ can initialise CUDA) and prove on the backend
    ``workers.backend_choice`` picks for ``setting``; no ``gpu``: the CPU (as one of
    ``settings.cpu_devices`` per host, ``workers.gpu_binding.bind_cpu``)."""
    if gpu is None:
        return gpu_binding.bind_cpu(None, devices=settings.cpu_devices), CpuBackend()
    gpu_binding.pin_process(gpu)
    backend = make_backend(setting, device_id=0, table_budget_bytes=settings.msm_table_bytes,
                           device_steps=settings.witness_on_device,
                           vram_budget_bytes=settings.vram_budget_bytes,
                           share_keys=settings.shared_keys)
    if backend.name != "gpu":
        return gpu_binding.bind_cpu(gpu, devices=settings.cpu_devices), backend
    return gpu_binding.bind_gpu(gpu), backend


def _budget(settings: Settings, binding: Binding) -> int:
    """VRAM for keys and pre-staged partitions: configured, or device total − headroom."""
    if settings.vram_budget_bytes is not None:
        return settings.vram_budget_bytes
    budget = binding.total_bytes - settings.vram_headroom_bytes
    if budget <= 0:
        raise SettingsError(f"PROOFQ_VRAM_HEADROOM_BYTES: {settings.vram_headroom_bytes} leaves "
                            f"no budget on a device of {binding.total_bytes} bytes")
    return budget
