"""The worker side of the app: ``--gpu N`` and one proving runtime per pool process.

``celery -A tasks worker --gpu N`` pins the whole worker to GPU N.  The pinning runs in a
bootstep's constructor, in the parent process before the pool forks, so every pool process
inherits ``CUDA_VISIBLE_DEVICES`` and nothing can have touched CUDA yet.  The same bootstep
decides the backend once for the worker (``workers.backend_choice``, the GPU probed in a
child) and the pool processes prove on what it decided.  The worker is named ``gpuN@host``
unless ``-n`` names it otherwise.  Without ``--gpu`` the worker proves on the CPU backend.

``--critical-slots N`` (or ``PROOFQ_CRITICAL_SLOTS``) keeps N of the ``-c`` processes for
the critical band: the worker's transport takes no more than ``-c`` − N messages of other
bands at a time (``tasks.transport``).

The ``--gpu`` and ``--critical-slots`` options are registered by ``tasks`` itself (Celery
reads them before it imports the app's ``include``); this module is imported by workers
only.

Each pool process starts its own ``WorkerRuntime`` once (``worker_process_init``): the
runtime holds the device context and the GPU locks' heartbeat, which cannot cross a fork.
"""

from __future__ import annotations

import logging
import os

from celery import bootsteps, signals
from celery.utils.nodenames import default_nodename, host_format

from config.settings import get_settings
from snark.backend import BackendUnavailable
from tasks.application import app, redis_url
from tasks.transport import Channel
from workers.backend_choice import choose_backend
from workers.gpu_binding import pin_process, probe_gpu

log = logging.getLogger(__name__)


class _StartDecision:
    """What the parent learned at start; pool processes inherit it through fork."""

    gpu: int | None = None
    node_name: str | None = None
    backend: str | None = None  # "gpu" or "cpu", as the bootstep decided


class GpuBinding(bootsteps.Step):
    """Pin the worker to ``--gpu N``, decide its backend and name it after the host and GPU.

    With ``backend=gpu`` a GPU that cannot run the backend stops the worker here, before
    it takes a single task (it would only fail them); with ``auto`` the worker warns and
    proves on the CPU."""

    def __init__(self, worker, gpu: int | None = None, critical_slots: int | None = None,
                 **options) -> None:
        super().__init__(worker, **options)
        Channel.critical_slots = _critical_slots(critical_slots, worker.concurrency)
        if gpu is not None:
            pin_process(gpu)
            if worker.hostname == default_nodename(None):
                worker.hostname = host_format(f"gpu{gpu}@%h")
        settings = get_settings()
        if settings.redis_url is None:
            log.warning("PROOFQ_REDIS_URL is not set: this worker uses %s",
                        redis_url(settings))
        _StartDecision.backend = _decide_backend(gpu)
        _StartDecision.gpu = gpu
        _StartDecision.node_name = worker.hostname


def _critical_slots(option: int | None, concurrency: int) -> int:
    """The option's, else the setting's; refused unless a process is left for the rest."""
    slots = get_settings().critical_slots if option is None else option
    if slots and slots >= concurrency:
        raise SystemExit(f"proofq worker: --critical-slots {slots} (PROOFQ_CRITICAL_SLOTS) "
                         f"leaves none of the {concurrency} processes (-c) for other work; "
                         "not starting")
    if slots:
        log.info("%d of %d processes kept for critical work", slots, concurrency)
    return slots


def _decide_backend(gpu: int | None) -> str:
    try:
        choice = choose_backend(get_settings().backend,
                                None if gpu is None else lambda: probe_gpu(gpu))
    except BackendUnavailable as exc:
        raise SystemExit(f"proofq worker: {exc}; not starting (PROOFQ_BACKEND=gpu)") from None
    if choice.fell_back:
        log.warning("%s; this worker proves on the CPU (PROOFQ_BACKEND=auto)", choice.reason)
    return choice.name


app.steps["worker"].add(GpuBinding)


@signals.worker_init.connect
def _wait_to_declare(**_) -> None:
    """A worker started while Redis refuses writes waits to declare its queues. Set when a
    worker starts, not when this module is imported: a producer in a process that imported
    it (a test, a tool) is still refused at once."""
    Channel.wait_to_declare = True


class _Runtime:
    current = None


def runtime():
    """This process's proving runtime, started on first use."""
    if _Runtime.current is None:
        from workers.runtime import WorkerRuntime

        settings = get_settings()
        # The pool process inherited the parent's pin; the runtime's own pin_process(N)
        # recognises it and leaves CUDA_VISIBLE_DEVICES as it is.
        name = f"{_StartDecision.node_name or default_nodename(None)}/{os.getpid()}"
        _Runtime.current = WorkerRuntime.start(
            redis_url=redis_url(settings), gpu=_StartDecision.gpu, settings=settings,
            worker_name=name, backend=_StartDecision.backend)
    return _Runtime.current


@signals.worker_process_init.connect
def _start_runtime(**_) -> None:
    # Start eagerly so the first partition does not pay for device start-up; a failure is
    # logged and retried by the first task, which then records it on the job.
    try:
        runtime()
    except Exception:
        log.exception("proving runtime did not start")


@signals.worker_process_shutdown.connect
def _close_runtime(**_) -> None:
    if _Runtime.current is not None:
        _Runtime.current.close()
        _Runtime.current = None
