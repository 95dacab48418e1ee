"""Flower's safe defaults: this host only unless told otherwise, and a login when not.

Flower listens on every interface with no login by default, and its pages show task
arguments and the workers (and let a visitor revoke tasks and shut workers down). So when
Flower runs on this app (``celery -A tasks flower``), an address left unset means
127.0.0.1, and any other address than loopback needs ``--basic-auth`` (or Flower's
``--auth``): Flower refuses to start without one, in one line. Options are Flower's own
(command line, ``FLOWER_ADDRESS``, ``FLOWER_BASIC_AUTH``, ``flowerconfig.py``).
"""

from __future__ import annotations

import sys

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def check_flower_options(options) -> None:
    """Apply the defaults to Flower's parsed ``options``; ``SystemExit`` if exposed."""
    if not options.address:
        options.address = "127.0.0.1"
    logins = [entry for entry in options.basic_auth or () if entry]  # FLOWER_BASIC_AUTH="": none
    if options.address not in LOOPBACK and not logins and not options.auth:
        raise SystemExit(f"flower: --address={options.address} serves Flower beyond this "
                         "host without a login: set --basic-auth=user:password "
                         "(FLOWER_BASIC_AUTH) or --auth, or bind 127.0.0.1")


def install() -> None:
    """Check Flower's options once it has parsed them, when Flower is what runs."""
    flower_options = sys.modules.get("flower.options")
    if flower_options is not None:
        options = flower_options.options
        options.add_parse_callback(lambda: check_flower_options(options))
