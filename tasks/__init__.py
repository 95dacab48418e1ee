"""proofq's Celery app (``celery -A tasks worker --gpu N``, ``celery -A tasks flower``).

``tasks.application`` holds the app and its configuration, ``tasks.jobs`` the job state in
Redis, ``tasks.submission`` what a producer does to accept a job, ``tasks.pipeline`` the
task graph and ``tasks.worker`` the ``--gpu`` bootstep and the per-process proving runtime.

Importing ``tasks`` is what a producer does: it gets the app to send by name, not the
worker machinery.  A worker imports ``tasks.pipeline`` and ``tasks.worker`` when it starts,
through the app's ``include`` (``tasks.application.WORKER_MODULES``).
"""

from tasks import flower_guard
from tasks.application import app

flower_guard.install()  # a no-op unless this process is ``celery -A tasks flower``

__all__ = ["app"]
