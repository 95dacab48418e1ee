"""``proofq grpc``'s server: the listeners, TLS, the bearer token and message sizes.

Plaintext on loopback or a unix socket by default, as cuzk; a listener for other machines
may take TLS (a certificate and its key, PEM) and every listener a shared bearer token
(``authorization: Bearer <token>``; a call without it is ``UNAUTHENTICATED``). Curio dials
without TLS and sends no token: those are for a TLS-terminating proxy beside Curio, which
adds them (docs/curio.md). Messages up to 256 MiB both ways, as Curio's client allows.
"""

from __future__ import annotations

import hmac
import stat
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path

import grpc

from client.cuzk import proving_pb2_grpc as pb_grpc
from client.cuzk.service import ProvingEngine

MAX_MESSAGE_BYTES = 256 << 20
DEFAULT_LISTEN = "127.0.0.1:9820"


class ListenError(ValueError):
    """A listen address that cannot be served; the message names it."""


@dataclass(frozen=True)
class Tls:
    cert: bytes
    key: bytes

    @classmethod
    def read(cls, cert: str, key: str) -> "Tls":
        return cls(Path(cert).read_bytes(), Path(key).read_bytes())


class _Token(grpc.ServerInterceptor):
    """Refuses a call whose ``authorization`` is not ``Bearer <token>``."""

    def __init__(self, token: str) -> None:
        self.expected = f"Bearer {token}".encode()

        def refuse(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED,
                          "authorization: missing or wrong bearer token")

        self._refusal = grpc.unary_unary_rpc_method_handler(refuse)

    def intercept_service(self, continuation, details):
        given = dict(details.invocation_metadata or ()).get("authorization", "")
        if hmac.compare_digest(given.encode() if isinstance(given, str) else given,
                               self.expected):
            return continuation(details)
        return self._refusal


def _unix_path(address: str) -> Path | None:
    for prefix in ("unix:///", "unix:/"):
        if address.startswith(prefix):
            return Path("/" + address.removeprefix(prefix).lstrip("/"))
    return None


def _bind(server: grpc.Server, address: str, tls: Tls | None) -> None:
    path = _unix_path(address)
    if path is not None:
        if path.exists() and stat.S_ISSOCK(path.stat().st_mode):
            path.unlink()  # a socket left by a gateway that died
        target = f"unix://{path}"
    elif address.startswith("unix:") or ":" not in address:
        raise ListenError(f"--listen: {address!r} is neither host:port nor unix:///path")
    else:
        target = address
    credentials = (grpc.ssl_server_credentials([(tls.key, tls.cert)]) if tls is not None
                   else None)
    try:
        port = (server.add_secure_port(target, credentials) if credentials is not None
                else server.add_insecure_port(target))
    except RuntimeError as exc:
        raise ListenError(f"--listen: cannot listen on {address!r} ({exc})") from None
    if port == 0 and path is None:
        raise ListenError(f"--listen: cannot listen on {address!r}")


def make_server(engine: ProvingEngine, listen: list[str], *, tls: Tls | None = None,
                token: str | None = None, threads: int = 64) -> grpc.Server:
    """A started server for ``engine`` on every address of ``listen``. ``threads`` bounds
    the calls served at once (each ``Prove`` holds one while it waits)."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="proofq-grpc"),
        interceptors=[_Token(token)] if token else [],
        options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                 ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                 ("grpc.so_reuseport", 0)])
    pb_grpc.add_ProvingEngineServicer_to_server(engine, server)
    for address in listen or [DEFAULT_LISTEN]:
        _bind(server, address, tls)
    server.start()
    return server
