"""The Celery app: JSON only, late acks, one task in hand per process, four priorities.

Everything a worker, Flower or a client needs to agree on lives here: the broker URL, the
queues and how priorities map onto the Redis transport. Priorities follow the transport's
emulation (one list per priority step, a *lower* number is served first), so the names map
to steps and every message carries one; a message without a priority would otherwise land
in step 0 and overtake everything.
"""

from __future__ import annotations

import os
import sys

import click
from celery import Celery
from kombu import Queue

from config.redis_keys import RedisKeys
from config.settings import Settings, get_settings

#: Priority name → Redis transport priority step (lower is served first).  ``critical`` is
#: ahead of all (cuzk's CRITICAL: a WinningPoSt must be proved within its epoch).
PRIORITIES: dict[str, int] = {"critical": 0, "high": 3, "normal": 6, "low": 9}
DEFAULT_PRIORITY = "normal"

#: Job-level work (key setup, fan-out) and per-partition proving.  Listed jobs-first so a
#: new job's fan-out is not stuck behind the partitions of older jobs of the same priority.
JOBS_QUEUE = "jobs"
GPU_QUEUE = "gpu"


class PriorityError(ValueError):
    """An unknown priority name."""


#: Transport priority steps: each priority's own and the two behind it, which hold the units
#: of a large job past its fair share (``unit_priority``).
PRIORITY_STEPS = sorted({level + behind for level in PRIORITIES.values() for behind in range(3)})


def unit_priority(priority: str, unit: int, fair_share: int) -> int:
    """The step unit ``unit`` of a job is sent at: the priority's own for the first
    ``fair_share`` units, one behind it up to ``fair_share``², two behind after that.

    A job's messages are served in order within a step, so without this a 20,000-unit job
    would hold everything behind it at its priority until its last unit; with it, a job
    behind waits for at most ``fair_share`` units of each job ahead before its own first
    ones (and the large job still runs whenever nothing else is waiting). Steps never
    cross into the next priority: a high job's last unit still goes before a normal one.
    """
    level = PRIORITIES[priority]
    if unit < fair_share:
        return level
    return level + (1 if unit < fair_share * fair_share else 2)


def band(step: int | None) -> int:
    """The priority level a transport step belongs to (a priority's own step and the two
    behind it share it): where a partition waits in its GPU's lock queues
    (``workers.locks``); a message without a priority is in the default one's."""
    if step is None:
        return PRIORITIES[DEFAULT_PRIORITY]
    return max(level for level in PRIORITIES.values() if level <= max(step, 0))


def priority_level(name: str) -> int:
    try:
        return PRIORITIES[name]
    except KeyError:
        raise PriorityError(f"priority: unknown priority {name!r} "
                            f"(choose from {', '.join(PRIORITIES)})") from None


#: Where a worker started by hand looks when no ``PROOFQ_REDIS_URL`` is set (the CLI's
#: private cluster always sets it).
LOCAL_REDIS_URL = "redis://127.0.0.1:6379/0"


def redis_url(settings: Settings) -> str:
    """The one Redis of a cluster: broker, result backend, job state, locks and events."""
    return settings.redis_url or LOCAL_REDIS_URL


def celery_config(settings: Settings) -> dict:
    """Celery settings derived from proofq's."""
    url = redis_url(settings)
    # Celery's keys in this cluster's namespace ('' in the default one: config.redis_keys)
    prefix = {"global_keyprefix": RedisKeys.of(settings).broker_prefix}
    # The Redis transport re-delivers an unacked message after the visibility timeout, and
    # Celery reads it from three places (celery/celery#7651): set it in all of them.
    visibility = {"visibility_timeout": settings.visibility_timeout_s}
    return dict(
        broker_url=url,
        # kombu's Redis transport, waiting out a Redis that refuses writes (tasks.transport)
        broker_transport="tasks.transport:Transport",
        result_backend=url,
        broker_connection_retry_on_startup=True,
        # A worker whose Redis is down waits for it, however long (Celery's default gives up
        # after 100 tries, ~50 min); one log line a try, at most every 30 s after the first.
        broker_connection_max_retries=None,
        task_serializer="json",
        result_serializer="json",
        event_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        visibility_timeout=settings.visibility_timeout_s,
        broker_transport_options={
            **visibility, **prefix,
            "priority_steps": PRIORITY_STEPS,
            "queue_order_strategy": "priority",
            "sep": ":",
        },
        result_backend_transport_options={**visibility, **prefix},
        result_expires=settings.job_ttl_s,
        task_queues=[Queue(JOBS_QUEUE), Queue(GPU_QUEUE)],
        task_default_queue=GPU_QUEUE,
        task_default_priority=PRIORITIES[DEFAULT_PRIORITY],
        task_routes={"proofq.submit": {"queue": JOBS_QUEUE}},
        # Outcomes live in the job state (tasks.jobs), never in Celery's result backend: no
        # task writes a result there (one write fewer per task, and none to fail when Redis
        # is full).
        task_ignore_result=True,
        worker_send_task_events=True,
        task_send_sent_event=True,
    )


def create_app(settings: Settings | None = None) -> Celery:
    """An app for these settings; the tasks are registered on the module's ``app`` (the one
    workers run), other instances only send tasks by name."""
    app = Celery("proofq")
    app.conf.update(celery_config(settings or get_settings()))
    return app


def task_label(job_id: str, partition: int | None = None) -> str:
    """How a task's arguments read in Flower and the logs (the message's ``argsrepr``)."""
    return f"job={job_id}" + ("" if partition is None else f" partition={partition}")


#: Flower's tasks page shows the arguments column (``task_label``) unless told otherwise:
#: ``celery -A tasks flower`` reads FLOWER_* variables after it has imported this app.
FLOWER_TASKS_COLUMNS = "name,uuid,state,args,received,started,runtime,worker"
os.environ.setdefault("FLOWER_TASKS_COLUMNS", FLOWER_TASKS_COLUMNS)

#: What a worker imports when it starts (Celery's ``include``): the task graph, the worker
#: bootstep and the proving runtime.  Producers send tasks by name and never import them.
WORKER_MODULES = ("tasks.pipeline", "tasks.worker")

app = create_app()
app.conf.include = list(WORKER_MODULES)
# Celery reads user options before it imports ``include``: the option lives with the app.
app.user_options["worker"].add(click.Option(
    ["--gpu"], type=click.IntRange(min=0), default=None,
    help="prove on GPU N only (pins CUDA_VISIBLE_DEVICES); without it, prove on the CPU"))
app.user_options["worker"].add(click.Option(
    ["--critical-slots"], type=click.IntRange(min=0), default=None,
    help="how many of the worker's -c processes only critical work (WinningPoSt) may take "
         "(default: PROOFQ_CRITICAL_SLOTS)"))


def _worker_logs_at_info() -> None:
    """``celery -A tasks worker`` logs at INFO unless ``-l`` says otherwise: Celery's own
    default, WARNING, shows nothing of the work but tracebacks.  Celery's command line has
    imported its worker command before it imports this app, and parses the worker's options
    after; a producer (no such module loaded) is left alone."""
    command = sys.modules.get("celery.bin.worker")
    if command is not None:
        for param in command.worker.params:
            if param.name == "loglevel":
                param.default = "INFO"


_worker_logs_at_info()
