"""The job view's HTTP server: the page at ``/``, its data at ``/api/view``; nothing else,
and nothing that writes.

A request whose ``Host`` is not the address the view was bound to (with its port; for a
loopback address ``localhost`` too, for a wildcard one any IP literal or this host's name)
is refused: a page of another site whose name was re-pointed at this host (DNS
rebinding) would otherwise read every job from a browser on the same machine."""

from __future__ import annotations

import ipaddress
import json
import socket
from typing import Any
from functools import partial
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from urllib.parse import parse_qs, urlsplit

import redis

from client.view.snapshot import snapshot
from tasks.jobs import JobStore
from workers.phase_events import PHASES, WAITS

def _page() -> bytes:
    """The page, with the phases' words and order from ``Phase`` (one list for the events,
    the metrics and the page)."""
    text = files("client.view").joinpath("page.html").read_text()
    text = text.replace("__PHASES__", json.dumps([p.value for p in PHASES]))
    return text.replace("__WAITS__", json.dumps([p.value for p in WAITS])).encode()


PAGE = _page()


def allowed_host(host: str, address: str, port: int) -> bool:
    """Whether a request's ``Host`` header names the view bound to ``address``:``port``."""
    name, _, given_port = host.strip().lower().rpartition(":")
    if not name or given_port != str(port):
        return False
    name = name.removeprefix("[").removesuffix("]")
    bound = ipaddress.ip_address(address)
    if bound.is_unspecified:
        hostnames = {socket.gethostname().lower(), socket.getfqdn().lower(), "localhost"}
        return name in hostnames or _is_ip(name)
    if name == "localhost":
        return bound.is_loopback
    return _is_ip(name) and ipaddress.ip_address(name) == bound


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _bound(server_address: Any) -> tuple[str, int]:
    """The address and port a TCP server was bound to (its address is a tuple there)."""
    address, port = server_address[:2]
    return str(address), int(port)


class _Handler(BaseHTTPRequestHandler):
    def __init__(self, *args, store: JobStore, **kwargs) -> None:
        self.store = store
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        url = urlsplit(self.path)
        address, port = _bound(self.server.server_address)
        if not allowed_host(self.headers.get("Host", ""), address, port):
            self._send(HTTPStatus.MISDIRECTED_REQUEST, "text/plain",
                       f"Host: expected {address}:{port} (this view's address)".encode())
        elif url.path == "/":
            self._send(HTTPStatus.OK, "text/html; charset=utf-8", PAGE)
        elif url.path == "/api/view":
            count = parse_qs(url.query).get("jobs", ["30"])[0]
            try:
                body = snapshot(self.store, jobs=max(1, min(int(count), 500)))
            except ValueError:
                self._send(HTTPStatus.BAD_REQUEST, "text/plain", b"jobs: expected a number")
                return
            except redis.RedisError as exc:
                self._send(HTTPStatus.SERVICE_UNAVAILABLE, "text/plain",
                           f"Redis: {exc}".encode())
                return
            self._send(HTTPStatus.OK, "application/json", json.dumps(body).encode())
        else:
            self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found")

    def _send(self, status: HTTPStatus, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # quiet: the page polls
        pass


def serve(store: JobStore, address: str, port: int) -> ThreadingHTTPServer:
    """A server for the view (not yet serving: call ``serve_forever``)."""
    return ThreadingHTTPServer((address, port), partial(_Handler, store=store))
