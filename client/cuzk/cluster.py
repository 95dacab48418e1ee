"""The cluster as cuzk's GetStatus and GetMetrics describe a daemon, read from Redis.

- jobs: the job store's index (``proofq:jobs``, the newest ``results_maxlen`` jobs still
  stored), each job's status and type in one pipelined read; pending = queued, in progress =
  proving or assembling, per kind (``client.cuzk.kinds``);
- totals: the jobs ended since the cluster began (``proofq:totals``, counted once by the
  script that ends each job: they do not fall when jobs expire);
- GPUs and resident keys: the cards the workers keep (``workers.card``): one ``GPUStatus``
  per GPU (its first worker process's ordinal, name and memory; the job one of its
  processes proves), one ``SRSStatus`` per resident key (HOT, its bytes, the processes that
  hold it), under cuzk's circuit id where it has one (``porep-32g``,
  ``client.cuzk.circuits``);
- a finished job's timings: its phase events (``proofq:events`` from its creation on),
  summed over its partitions: ``synthesis_ms`` (witnesses), ``srs_load_ms`` (the memory
  phase: the key made resident and the inputs staged), ``gpu_compute_ms`` (the compute
  phase); ``queue_wait_ms`` is created → first partition started, ``total_ms`` created →
  finished.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from client.api import Client
from client.cuzk import proving_pb2 as pb
from client.cuzk.circuits import circuit_of_card_name
from client.cuzk.kinds import kind_of_type, kinds
from tasks.jobs import JobState, JobStatus
from workers.card import read_cards
from workers.phase_events import EVENTS_STREAM, PhaseEvent

_PENDING = (JobStatus.QUEUED,)
_RUNNING = (JobStatus.PROVING, JobStatus.ASSEMBLING)


@dataclass(frozen=True)
class _Job:
    job_id: str
    status: str
    proof_type: str
    created: float


def _ms(seconds: float | None) -> int:
    return max(0, round((seconds or 0.0) * 1000))


class ClusterView:
    def __init__(self, client: Client, *, started: float) -> None:
        self.client = client
        self.store = client.store
        self.redis = client.store.redis
        self.card_prefix = client.store.keys.card_prefix
        self.started = started
        self.circuit_ids = circuit_of_card_name()

    def jobs(self) -> Iterator[_Job]:
        """Every job the index lists and the store still holds, oldest first."""
        ids = [raw.decode() for raw in self.redis.zrange(self.store.keys.jobs_index, 0, -1)]
        with self.redis.pipeline(transaction=False) as pipe:
            for job_id in ids:
                pipe.hmget(self.store.key(job_id), "status", "proof_type", "created")
            rows = pipe.execute()
        for job_id, (status, proof_type, created) in zip(ids, rows):
            if status is not None:
                yield _Job(job_id, status.decode(), (proof_type or b"").decode(),
                           float(created or 0))

    def queue_position(self, job_id: str) -> int:
        """Jobs that are queued or proving and were created before ``job_id``."""
        ahead = 0
        for job in self.jobs():
            if job.job_id == job_id:
                return ahead
            ahead += job.status in (*_PENDING, *_RUNNING)
        return ahead

    def timings(self, state: JobState) -> pb.AwaitProofResponse:
        """The job's phase times, an answer's timing fields (the rest unset)."""
        phases: defaultdict[str, float] = defaultdict(float)
        for _, fields in self.redis.xrange(EVENTS_STREAM, min=f"{int(state.created * 1000)}-0"):
            event = PhaseEvent.from_fields(fields)
            if event.job == state.job_id:
                phases[event.phase] += event.seconds
        total = None if state.finished is None else state.finished - state.created
        return pb.AwaitProofResponse(
            queue_wait_ms=_ms(state.queue_s), srs_load_ms=_ms(phases["mem"]),
            synthesis_ms=_ms(phases["synthesize"]), gpu_compute_ms=_ms(phases["compute"]),
            total_ms=_ms(total))

    def _counts(self) -> tuple[dict[str, list[int]], Counter[str]]:
        """Per kind [pending, in progress], and the stored jobs per status."""
        queues = {kind.queue: [0, 0] for kind in kinds().values()}
        statuses: Counter[str] = Counter()
        for job in self.jobs():
            statuses[job.status] += 1
            kind = kind_of_type(job.proof_type)
            if kind is not None and job.status in (*_PENDING, *_RUNNING):
                queues[kind.queue][job.status in _RUNNING] += 1
        return queues, statuses

    def status(self) -> pb.GetStatusResponse:
        queues, _ = self._counts()
        totals = self.store.totals()
        cards = read_cards(self.redis, self.card_prefix)
        gpus: dict[tuple[str, str], pb.GPUStatus] = {}
        keys: dict[str, pb.SRSStatus] = {}
        for card in cards:
            gpu = gpus.setdefault((card.host, card.gpu), pb.GPUStatus(
                ordinal=max(card.ordinal, 0), name=card.device_name,
                vram_total_bytes=card.total_bytes))
            if card.job and not gpu.current_job_id:
                gpu.current_job_id = card.job
                kind = kind_of_type(card.proof_type)
                gpu.current_proof_kind = kind.queue if kind else card.proof_type
            for name, size in card.keys.items():
                circuit = self.circuit_ids.get(name, name)
                srs = keys.setdefault(circuit, pb.SRSStatus(circuit_id=circuit,
                                                            tier=pb.SRSStatus.HOT,
                                                            size_bytes=size))
                srs.ref_count += 1
        return pb.GetStatusResponse(
            gpus=list(gpus.values()), loaded_srs=list(keys.values()),
            queues=[pb.QueueStatus(proof_kind=name, pending=p, in_progress=r)
                    for name, (p, r) in queues.items()],
            total_proofs_completed=totals[JobStatus.DONE],
            total_proofs_failed=totals[JobStatus.FAILED],
            uptime_seconds=int(time.time() - self.started))

    def metrics(self) -> str:
        """Prometheus text: the job store's counts and the gateway's uptime and workers
        (each worker's own histograms stay on its /metrics)."""
        queues, statuses = self._counts()
        cards = read_cards(self.redis, self.card_prefix)
        lines = ["# HELP proofq_cuzk_jobs Jobs the store holds, by status",
                 "# TYPE proofq_cuzk_jobs gauge"]
        lines += [f'proofq_cuzk_jobs{{status="{s}"}} {statuses[s]}' for s in JobStatus]
        lines += ["# HELP proofq_cuzk_jobs_ended_total Jobs ended since the cluster began, "
                  "by final status",
                  "# TYPE proofq_cuzk_jobs_ended_total counter"]
        lines += [f'proofq_cuzk_jobs_ended_total{{status="{s}"}} {n}'
                  for s, n in self.store.totals().items()]
        lines += ["# HELP proofq_cuzk_queue Jobs waiting or proving, by cuzk proof kind",
                  "# TYPE proofq_cuzk_queue gauge"]
        for kind in kinds().values():
            pending, running = queues[kind.queue]
            lines += [f'proofq_cuzk_queue{{proof_kind="{kind.metric}",state="pending"}} '
                      f'{pending}',
                      f'proofq_cuzk_queue{{proof_kind="{kind.metric}",state="in_progress"}} '
                      f'{running}']
        lines += ["# HELP proofq_cuzk_worker_processes Worker processes with a live card",
                  "# TYPE proofq_cuzk_worker_processes gauge",
                  f"proofq_cuzk_worker_processes {len(cards)}",
                  "# HELP proofq_cuzk_gpus GPUs the workers serve",
                  "# TYPE proofq_cuzk_gpus gauge",
                  f"proofq_cuzk_gpus {len({(c.host, c.gpu) for c in cards})}",
                  "# HELP proofq_cuzk_uptime_seconds Since the gateway started",
                  "# TYPE proofq_cuzk_uptime_seconds gauge",
                  f"proofq_cuzk_uptime_seconds {int(time.time() - self.started)}"]
        return "\n".join(lines) + "\n"
