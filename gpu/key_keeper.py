"""The key keeper: the one process of a GPU that holds its workers' proving keys on the
device (``python -m gpu.key_keeper``, started by ``gpu.shared_keys``; docs/ARCHITECTURE.md
§8).

It listens on a Unix socket for JSON lines, one request and one reply at a time per
connection:

    {"op": "hold", "directory": d, "name": n, "settings": s}
        → {"ok": true, "resident": <gpu.resident description>}, the key made resident
          if no connection held it; {"ok": false, "error": e, "memory": true|false}
    {"op": "release", "name": n}  → {"ok": true}; the last holder's release frees the copy
    {"op": "status"}              → {"ok": true, "pid": p, "keys": {n: {"holders": h}}}

A connection that closes (its worker exited or died) releases what it held, so a crashed
worker never pins a key. Keys are made resident one at a time (the worker asking holds
the GPU's memory lock meanwhile). The keeper exits once it has held no key and had no
connection for ``--idle-s`` seconds. Every array it exports is an allocation of its own
(``gpu.ipc.own_allocations``), freed when the key's last holder goes.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socketserver
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from snark.backend import DeviceMemoryError

log = logging.getLogger("proofq.key_keeper")


class Store(Protocol):
    """Where the keeper's keys live (a GPU backend: ``DeviceStore``)."""

    def make(self, directory: Path) -> tuple[object, dict]:
        """The key in ``directory`` made resident: (its handle, its JSON description)."""

    def free(self, handle: object) -> None:
        """Let the key's device state go."""


@dataclass
class Holders:
    """Which connections hold which keys (a connection holds a key once)."""

    by_key: dict[str, set[int]] = field(default_factory=dict)

    def add(self, name: str, connection: int) -> None:
        self.by_key.setdefault(name, set()).add(connection)

    def remove(self, name: str, connection: int) -> bool:
        """Drop the hold; True if nobody holds the key any more."""
        holders = self.by_key.get(name, set())
        holders.discard(connection)
        if holders:
            return False
        self.by_key.pop(name, None)
        return True

    def drop(self, connection: int) -> list[str]:
        """Drop every hold of a closed connection; the keys nobody holds any more."""
        return [name for name in list(self.by_key) if connection in self.by_key[name]
                and self.remove(name, connection)]


class Keeper:
    """The keys resident in ``store``, by name, and who holds them."""

    def __init__(self, store: Store, settings: dict) -> None:
        self.store = store
        self.settings = settings
        self.holders = Holders()
        self._kept: dict[str, tuple[object, dict]] = {}  # name → (handle, description)
        self._lock = threading.Lock()
        self.connections = 0
        self.last_active = time.monotonic()

    def handle(self, request: dict, connection: int) -> dict:
        op = request.get("op")
        with self._lock:
            self.last_active = time.monotonic()
            if op == "hold":
                return self._hold(request, connection)
            if op == "release":
                if self.holders.remove(str(request.get("name")), connection):
                    self._free(str(request.get("name")))
                return {"ok": True}
            if op == "status":
                return {"ok": True, "pid": os.getpid(),
                        "keys": {name: {"holders": len(h)}
                                 for name, h in self.holders.by_key.items()}}
            return {"ok": False, "error": f"op: {op!r} is not hold, release or status"}

    def opened(self) -> None:
        with self._lock:
            self.connections += 1

    def closed(self, connection: int) -> None:
        """A connection ended: what it held is released."""
        with self._lock:
            self.connections -= 1
            self.last_active = time.monotonic()
            for name in self.holders.drop(connection):
                self._free(name)

    def idle(self) -> bool:
        with self._lock:
            return not self._kept and not self.connections

    def _hold(self, request: dict, connection: int) -> dict:
        from gpu.shared_keys import key_name

        if request.get("settings") != self.settings:
            return {"ok": False, "error": f"settings {request.get('settings')} differ from "
                                          f"this keeper's {self.settings}"}
        name, directory = str(request.get("name")), Path(str(request.get("directory")))
        kept = self._kept.get(name)
        if kept is None:
            try:
                if key_name(directory) != name:
                    return {"ok": False, "error": f"{directory}: holds another key than {name}"}
                started = time.monotonic()
                kept = self._kept[name] = self.store.make(directory)
                log.info("key %s resident in %.1f s (%s)", name, time.monotonic() - started,
                         directory)
            except DeviceMemoryError as exc:
                return {"ok": False, "error": str(exc), "memory": True}
            except (OSError, ValueError) as exc:
                return {"ok": False, "error": f"{directory}: {exc}"}
        self.holders.add(name, connection)
        return {"ok": True, "resident": kept[1]}

    def _free(self, name: str) -> None:
        kept = self._kept.pop(name, None)
        if kept is not None:
            self.store.free(kept[0])
            log.info("key %s freed: no holder left", name)


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        keeper: Keeper = self.server.keeper
        connection = id(self)
        keeper.opened()
        try:
            for line in self.rfile:
                try:
                    request = json.loads(line)
                    reply = keeper.handle(request if isinstance(request, dict) else {},
                                          connection)
                except ValueError as exc:
                    reply = {"ok": False, "error": f"request: {exc}"}
                self.wfile.write(json.dumps(reply).encode() + b"\n")
                self.wfile.flush()
        except OSError:
            pass  # the worker went away mid-reply: its holds go below
        finally:
            keeper.closed(connection)


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: str, keeper: Keeper) -> None:
        self.keeper = keeper
        super().__init__(path, _Handler)


class DeviceStore:
    """Keys resident on a GPU backend: loaded from their directory (memory-mapped: the
    host's page cache holds the one copy), each array an allocation of its own so that its
    IPC handle covers it alone; the backend's table allowance shared by all of them."""

    def __init__(self, backend) -> None:
        self.backend = backend

    def make(self, directory: Path) -> tuple[object, dict]:
        from gpu import ipc
        from gpu.resident import describe
        from snark.keys import ProvingKey

        # the worker that asked checked the files' hashes when it loaded the key
        key = ProvingKey.load(directory, verify_hashes=False)
        with ipc.own_allocations():
            resident = self.backend.build_resident(key)
        self.backend.keep(key, resident)
        return key, describe(resident, ipc.export)

    def free(self, handle: object) -> None:
        self.backend.forget(handle)


def serve(keeper: Keeper, path: Path, idle_s: float) -> None:
    """Answer on ``path`` until idle for ``idle_s``; the socket is removed on the way out."""
    server = _Server(str(path), keeper)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    log.info("keeper %d listening on %s", os.getpid(), path)
    try:
        while not (keeper.idle() and time.monotonic() - keeper.last_active > idle_s):
            time.sleep(0.5)
    finally:
        server.shutdown()
        server.server_close()
        path.unlink(missing_ok=True)
        log.info("keeper %d idle for %.0f s: exiting", os.getpid(), idle_s)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="the GPU's key keeper (gpu.shared_keys)")
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--settings", type=json.loads, required=True,
                        help="the backend's settings as JSON (gpu.backend.shared_settings)")
    parser.add_argument("--idle-s", type=float, default=60.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")

    from gpu.backend import backend_from_settings

    backend = backend_from_settings(args.device, args.settings)
    serve(Keeper(DeviceStore(backend), args.settings), args.socket, args.idle_s)


if __name__ == "__main__":
    main()
