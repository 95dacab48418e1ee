"""One device copy of a proving key for all the worker processes of a GPU: the client side
of the key keeper (``gpu.key_keeper``, docs/ARCHITECTURE.md §8).

A 32 GiB sector's key is ~56 GB on the device with its R1CS; three workers of one H200
holding a copy each would not fit, and one copy each on the host's page cache is already
what the memory-mapped key files give. So the GPU's workers ask one process, the keeper,
to make a key resident and open its arrays through CUDA IPC handles (``gpu.ipc``). The
first worker that needs the keeper starts it (under a lock file, so only one starts); the
keeper counts each connection's holds, frees a key when its last holder lets go (or
dies: its connection closes) and exits once nobody has used it for a while.

Only keys loaded from a key directory (``ProvingKey.directory``) are shared: the keeper
loads the same files. A keeper that cannot be reached or started is
``KeeperUnavailable``, a ``BackendUnavailable``: the partition is retried, and an operator
who cannot run one turns sharing off (``PROOFQ_SHARED_KEYS=false``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from gpu import ipc
from gpu.resident import Resident, from_description
from snark.backend import BackendUnavailable, DeviceMemoryError
from snark.keys import ProvingKey

log = logging.getLogger(__name__)

#: How long a worker waits for a keeper to start (CUDA and the kernels' compilation).
START_TIMEOUT_S = 180.0
#: How long one request may take: making a 32 GiB key resident takes ~30 s on an H200.
REQUEST_TIMEOUT_S = 900.0


class KeeperUnavailable(BackendUnavailable):
    """The GPU's key keeper could not be reached, started, or did not answer."""


#: The longest path a Unix socket can be bound to (sun_path, less its terminating zero).
MAX_SOCKET_PATH = 107


def socket_path(gpu_uuid: str, directory: Path | None = None) -> Path:
    """Where the keeper of the GPU ``gpu_uuid`` listens (one per GPU and host)."""
    path = Path(directory or tempfile.gettempdir()) / f"proofq-keeper-{gpu_uuid}.sock"
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise ValueError(f"key keeper socket {path}: longer than the {MAX_SOCKET_PATH} "
                         f"bytes a Unix socket path may have (set TMPDIR to a shorter "
                         f"directory)")
    return path


def key_name(directory: Path) -> str:
    """The name of a key directory's contents: its manifest names every file's sha256."""
    digest = hashlib.sha256((Path(directory) / "manifest.json").read_bytes()).hexdigest()
    return f"key-{digest[:24]}"


class Connection:
    """One JSON request and its JSON reply at a time over the keeper's socket."""

    def __init__(self, path: Path) -> None:
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._socket.connect(str(path))
        except OSError:
            self._socket.close()
            raise
        self._socket.settimeout(REQUEST_TIMEOUT_S)
        self._file = self._socket.makefile("rwb")

    def ask(self, request: dict) -> dict:
        self._file.write(json.dumps(request).encode() + b"\n")
        self._file.flush()
        line = self._file.readline()
        if not line:
            raise ConnectionResetError("the keeper closed the connection")
        return json.loads(line)

    def closed_by_peer(self) -> bool:
        """Whether the keeper closed its end (it exited or died), seen without waiting: a
        keeper never speaks unasked, so anything readable between requests is its end."""
        readable, _, _ = select.select([self._socket], [], [], 0)
        if not readable:
            return False
        try:
            return self._socket.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True  # reset by the peer

    def close(self) -> None:
        self._file.close()
        self._socket.close()


class SharedKeys:
    """This process's holds on keys kept by its GPU's keeper."""

    def __init__(self, device_id: int, gpu_uuid: str, settings: dict,
                 directory: Path | None = None) -> None:
        self.device_id = device_id
        self.settings = settings  # the keeper's backend settings: a keeper refuses others
        self.path = socket_path(gpu_uuid, directory)
        self._connection: Connection | None = None
        self._imports: dict[int, ipc.Imports] = {}  # by id(key)
        self._lock = threading.Lock()

    def name(self, key: ProvingKey) -> str:
        if key.directory is None:
            raise ValueError(f"key {key.circuit_id}: held in memory, not in a directory the "
                             "keeper can share")
        return key_name(key.directory)

    def holds(self, key: ProvingKey) -> bool:
        return id(key) in self._imports

    def hold(self, key: ProvingKey) -> Resident:
        """The key's device state, made resident by the keeper if no process holds it, its
        arrays opened here (the streamed bases still to be added)."""
        with self._lock:
            reply = self._ask({"op": "hold", "directory": str(key.directory),
                               "name": self.name(key), "settings": self.settings})
            imports = ipc.Imports()
            try:
                resident = from_description(reply["resident"], imports.open, self.device_id)
            except BaseException:
                imports.close()
                self._ask({"op": "release", "name": self.name(key)})
                raise
            self._imports[id(key)] = imports
            return resident

    def release(self, key: ProvingKey) -> None:
        """Close this process's view of the key (nothing may use its arrays after) and let
        the keeper know; the last holder's release frees the device copy. A keeper that is
        gone took the copy with it: nothing is left to release."""
        with self._lock:
            self._imports.pop(id(key)).close()
            try:
                self._ask({"op": "release", "name": self.name(key)})
            except KeeperUnavailable as exc:
                log.warning("%s; the hold on %s went with it", exc, self.name(key))

    def keeper_gone(self) -> bool:
        """Whether the keeper this process holds keys of has gone (its connection closed
        from its side, or already dropped). Its copies went with it in name only: an IPC
        allocation lives on while any process has it open, so what this process opened
        still pins a whole copy beside the one a new keeper loads (``let_go_of_dead_keeper``)."""
        with self._lock:
            if not self._imports:
                return False
            return self._connection is None or self._connection.closed_by_peer()

    def let_go_of_dead_keeper(self) -> int:
        """Close every allocation opened from the keeper that is gone (the caller dropped
        every array viewing them first) and its connection: its copies' memory goes back
        to the device, and the next ``hold`` starts a new keeper. The number of keys let go."""
        with self._lock:
            for imports in self._imports.values():
                imports.close()
            count = len(self._imports)
            self._imports.clear()
            self._drop_connection()
            return count

    def status(self) -> dict:
        """The keeper's keys and their holders (for benches and tests)."""
        with self._lock:
            return self._ask({"op": "status"})

    def close(self) -> None:
        with self._lock:
            for imports in self._imports.values():
                imports.close()
            self._imports.clear()
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    # -- the keeper -----------------------------------------------------------------------
    def _ask(self, request: dict) -> dict:
        """The keeper's reply; a keeper that went away is started again once, but only
        for a request that holds nothing yet (a new process owns no earlier holds)."""
        for attempt in (0, 1):
            try:
                reply = self._connect(start=request["op"] == "hold").ask(request)
                break
            except OSError as exc:
                self._drop_connection()
                if attempt or request["op"] != "hold" or self._imports:
                    raise KeeperUnavailable(f"GPU key keeper at {self.path}: {exc}") from exc
        if reply.get("ok"):
            return reply
        error = f"GPU key keeper: {reply.get('error', 'no reason given')}"
        raise DeviceMemoryError(error) if reply.get("memory") else KeeperUnavailable(error)

    def _connect(self, start: bool) -> Connection:
        """The connection, made now if there is none: to the keeper listening, else (when
        ``start``) to one started here."""
        if self._connection is None:
            try:
                self._connection = Connection(self.path)
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                if not start:
                    raise KeeperUnavailable(f"no GPU key keeper at {self.path}") from exc
                self._connection = self._start_keeper()
        return self._connection

    def _drop_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _start_keeper(self) -> Connection:
        """Start the keeper unless another process just did (one at a time, under a lock
        file beside the socket), and connect once it listens."""
        with open(f"{self.path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return Connection(self.path)
            except (FileNotFoundError, ConnectionRefusedError):
                pass
            self.path.unlink(missing_ok=True)  # a dead keeper's socket
            log_path = Path(f"{self.path}.log")
            with open(log_path, "ab") as log:
                keeper = subprocess.Popen(
                    [sys.executable, "-m", "gpu.key_keeper", "--socket", str(self.path),
                     "--device", str(self.device_id), "--settings", json.dumps(self.settings)],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True, env=os.environ.copy())
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                try:
                    return Connection(self.path)
                except (FileNotFoundError, ConnectionRefusedError):
                    pass
                if keeper.poll() is not None or time.monotonic() > deadline:
                    raise KeeperUnavailable(f"GPU key keeper did not start "
                                            f"({_ending(keeper, log_path)}); see {log_path}")
                time.sleep(0.2)


def _ending(keeper: subprocess.Popen, log_path: Path) -> str:
    """How a keeper that never listened ended: its exit status and last log line."""
    status = "timed out" if keeper.returncode is None else f"exit {keeper.returncode}"
    lines = log_path.read_text(errors="replace").strip().splitlines()
    return f"{status}: {lines[-1]}" if lines else status
