"""A private cluster for one command: an embedded redis-server and one worker subprocess.

This is what runs when no ``PROOFQ_REDIS_URL`` is configured.  The worker is started exactly
as a user would start one (``celery -A tasks worker [--gpu 0]``) with the private Redis in
its environment: ``--gpu 0`` when CUDA has a device (and the backend setting allows it), the
CPU backend otherwise.  It runs in its own session, so a Ctrl-C in the terminal reaches only
this process, which then stops the worker and Redis itself; leaving the ``with`` block by an
exception stops the worker at once instead of letting it finish its tasks.  SIGTERM (what
``timeout`` and service managers send) and SIGHUP (a closed terminal) unwind the same way
as Ctrl-C while the cluster runs, so nothing is orphaned: no process, no ``/tmp`` folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import redis
from celery import Celery
from celery.utils.nodenames import host_format
from kombu.exceptions import OperationalError

from client.embedded import EmbeddedRedis
from config.settings import Settings, get_settings
from snark.backend import BackendUnavailable
from tasks.application import create_app

_STOP_GRACE_S = 10.0


class ClusterError(RuntimeError):
    """The private cluster did not come up; the message carries the worker's last output."""


def choose_gpu(settings: Settings) -> int | None:
    """GPU 0 when the backend setting and GPU 0 allow it (``workers.backend_choice``, the
    GPU probed in a child: CUDA stays out of this process); None for the CPU. Imported
    here: a producer that names a cluster never needs the worker's machinery."""
    from workers.backend_choice import choose_backend
    from workers.gpu_binding import probe_gpu

    try:
        choice = choose_backend(settings.backend, lambda: probe_gpu(0))
    except BackendUnavailable as exc:
        raise ClusterError(f"backend is 'gpu' but {exc}") from None
    return 0 if choice.name == "gpu" else None


def settings_env(settings: Settings) -> dict[str, str]:
    """The settings as ``PROOFQ_*`` variables, so a worker runs with exactly these values
    (paths made absolute: the worker runs in another directory)."""
    return {f"PROOFQ_{name.upper()}": str(value.resolve() if isinstance(value, Path) else value)
            for name, value in settings.model_dump().items() if value is not None}


def worker_command(*, gpu: int | None, concurrency: int, node: str | None = None) -> list[str]:
    """The command line a user would type to start a worker (through this interpreter)."""
    command = [sys.executable, "-m", "celery", "-A", "tasks", "worker", "-c", str(concurrency),
               "-l", "INFO", "--without-mingle", "--without-gossip"]
    if gpu is not None:
        command += ["--gpu", str(gpu)]
    if node is not None:
        command += ["-n", node]
    return command


class WorkerProcess:
    """One ``celery worker`` subprocess (its pool included), with its output in a log file."""

    def __init__(self, redis_url: str, command: list[str], *, log_dir: Path,
                 env: dict[str, str] | None = None) -> None:
        self.redis_url = redis_url
        self.command = command
        self.log_path = Path(log_dir) / f"worker-{os.getpid()}-{id(self):x}.log"
        self._env = {**os.environ, **(env or {}), "PROOFQ_REDIS_URL": redis_url}
        self._proc: subprocess.Popen | None = None

    def start(self) -> "WorkerProcess":
        # Started in the log directory: celery puts its working directory first on sys.path,
        # and a user's own tasks.py there must not shadow the installed app.
        with open(self.log_path, "wb") as log:
            self._proc = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, env=self._env,
                                          cwd=self.log_path.parent, start_new_session=True)
        return self

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def wait_ready(self, app: Celery, timeout_s: float, *, node: str | None = None) -> str:
        """Block until the worker answers a ping (as ``node``, if given); return its name."""
        destination = None if node is None else [host_format(node)]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.alive():
                raise ClusterError(f"worker exited at start:\n{self.log_tail()}")
            try:
                replies = app.control.ping(timeout=0.5, destination=destination) or []
            except (redis.RedisError, OperationalError):  # a stale connection after a
                continue                                  # Redis restart: the next ping
            for reply in replies:
                return next(iter(reply))
        raise ClusterError(f"worker did not answer within {timeout_s}s:\n{self.log_tail()}")

    def stop(self, *, graceful: bool = True) -> None:
        """Warm shutdown (running tasks finish) when graceful, else at once; the whole group."""
        if self._proc is None:
            return
        if self.alive():
            self._signal(signal.SIGTERM if graceful else signal.SIGQUIT)
            try:
                self._proc.wait(timeout=_STOP_GRACE_S if graceful else 2.0)
            except subprocess.TimeoutExpired:
                pass
        self._signal(signal.SIGKILL)  # whatever is left, e.g. pool processes of a dead parent
        self._proc.wait()
        self._proc = None

    def kill(self) -> None:
        """``kill -9`` of the whole group at once (a crash: nothing runs its shutdown)."""
        if self._proc is not None:
            self._signal(signal.SIGKILL)
            self._proc.wait()
            self._proc = None

    def _signal(self, signum: int) -> None:
        if self._proc is None:
            return
        try:
            os.killpg(self._proc.pid, signum)  # the worker's own session: its pool included
        except ProcessLookupError:
            pass

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@dataclass(frozen=True)
class Cluster:
    """Where jobs go, and (for a private cluster) the worker whose death ends the wait."""

    url: str
    worker: WorkerProcess | None = None

    def check(self) -> None:
        """Raise ``ClusterError`` if the private worker has died (its jobs would never end)."""
        if self.worker is not None and not self.worker.alive():
            raise ClusterError(f"the private worker exited:\n{self.worker.log_tail()}")


_UNWINDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _exit_on_signal(signum: int, frame: object) -> None:
    """Raise ``SystemExit`` (128 + signal, the shell's convention) so ``finally`` blocks run;
    a repeated signal is ignored rather than interrupting the clean-up."""
    for ignored in _UNWINDING_SIGNALS:
        signal.signal(ignored, signal.SIG_IGN)
    raise SystemExit(128 + signum)


@contextmanager
def signals_unwind() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP unwind the stack as Ctrl-C does (main thread
    only: Python runs signal handlers there; elsewhere the block changes nothing)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _exit_on_signal) for signum in _UNWINDING_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def local_cluster(settings: Settings | None = None, *, start_timeout_s: float = 600.0
                  ) -> Iterator[Cluster]:
    """Start Redis and a worker, yield them, stop both (also on Ctrl-C, SIGTERM, SIGHUP).

    The start timeout covers a GPU worker's first start, whose probe compiles every
    kernel (NVRTC, cached afterwards); a worker that exits fails the wait at once."""
    settings = settings or get_settings()
    gpu = choose_gpu(settings)
    with signals_unwind(), tempfile.TemporaryDirectory(prefix="proofq-local-",
                                     ignore_cleanup_errors=True) as log_dir, \
            EmbeddedRedis() as server:
        settings = settings.model_copy(update={"redis_url": server.url})
        worker = WorkerProcess(server.url, worker_command(
            gpu=gpu, concurrency=settings.workers_per_gpu), log_dir=Path(log_dir),
            env=settings_env(settings))
        app = create_app(settings)
        graceful = False
        try:
            worker.start().wait_ready(app, start_timeout_s)
            yield Cluster(server.url, worker)
            graceful = True
        finally:
            worker.stop(graceful=graceful)
            app.close()


@contextmanager
def open_cluster(settings: Settings | None = None) -> Iterator[Cluster]:
    """The configured cluster, or a private one for the duration of the block."""
    settings = settings or get_settings()
    if settings.redis_url is not None:
        yield Cluster(settings.redis_url)
    else:
        with local_cluster(settings) as cluster:
            yield cluster
