"""``proofq grpc``: Curio's front door (cuzk's protocol, ``client.cuzk``)."""

from __future__ import annotations

import logging
import signal
import threading

import click

from client.api import Client
from client.commands.common import BadInput
from client.cuzk.server import DEFAULT_LISTEN, ListenError, Tls, make_server
from client.cuzk.service import ProvingEngine
from config.settings import get_settings


@click.command("grpc")
@click.option("--listen", "listen", multiple=True, metavar="ADDR",
              help=f"host:port or unix:///path; repeatable (default {DEFAULT_LISTEN})")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False),
              help="PEM certificate: serve TLS (with --tls-key)")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False),
              help="PEM private key of --tls-cert")
@click.option("--token-file", type=click.Path(exists=True, dir_okay=False),
              help="a shared bearer token every call must carry (or PROOFQ_GRPC_TOKEN)")
@click.option("--threads", type=click.IntRange(min=4), default=64, show_default=True,
              help="calls served at once (each waiting Prove holds one)")
def grpc_command(listen: tuple[str, ...], tls_cert: str | None, tls_key: str | None,
                 token_file: str | None, threads: int) -> None:
    """Serve cuzk's ProvingEngine for Curio: [Cuzk] Address = "<this host>:9820".

    Each request becomes a proofq job on the cluster of PROOFQ_REDIS_URL; one log line per
    request (rpc, job, kind, miner/sector, outcome, seconds)."""
    if (tls_cert is None) != (tls_key is None):
        raise BadInput("--tls-cert and --tls-key go together")
    settings = get_settings()
    if settings.redis_url is None:
        raise BadInput("PROOFQ_REDIS_URL is not set: point it at the proofq cluster")
    token = settings.grpc_token or None
    if token_file is not None:
        with open(token_file, encoding="utf-8") as handle:
            token = handle.read().strip() or None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    client = Client(settings.redis_url, settings)
    try:
        server = make_server(ProvingEngine(client), list(listen),
                             tls=(Tls.read(tls_cert, tls_key)
                                  if tls_cert is not None and tls_key is not None else None),
                             token=token, threads=threads)
    except ListenError as exc:
        raise BadInput(str(exc)) from None
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    logging.getLogger("proofq.grpc").info(
        "serving cuzk.v1.ProvingEngine on %s (%s%s), cluster %s",
        ", ".join(listen or [DEFAULT_LISTEN]), "TLS" if tls_cert else "plaintext",
        ", bearer token" if token else "", settings.redis_url)
    stop.wait()
    server.stop(grace=5).wait()
    client.close()


COMMANDS: list[click.Command] = [grpc_command]
