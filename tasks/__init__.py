"""proofq's Celery app (``celery -A tasks worker --gpu N``, ``celery -A tasks flower``).

``tasks.application`` holds the app and its configuration, ``tasks.jobs`` the job state in
Redis, ``tasks.submission`` the checks that accept or refuse a job, ``tasks.pipeline`` the
task graph and ``tasks.worker`` the ``--gpu`` option and the per-process proving runtime.
"""

from tasks.application import app
from tasks import pipeline, worker  # importing registers the tasks and the worker option

__all__ = ["app", "pipeline", "worker"]
