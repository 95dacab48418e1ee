"""What is reachable by default: Flower and the metrics endpoint on loopback unless
configured, Flower only with a login when bound elsewhere."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from types import SimpleNamespace
from urllib.request import urlopen

import pytest

from tasks.flower_guard import check_flower_options
from workers.telemetry import serve_metrics


def _options(address: str = "", basic_auth=(), auth: str = "") -> SimpleNamespace:
    return SimpleNamespace(address=address, basic_auth=list(basic_auth), auth=auth)


def test_flower_left_unset_binds_loopback():
    options = _options()
    check_flower_options(options)
    assert options.address == "127.0.0.1"


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "10.1.2.3"])
def test_flower_beyond_loopback_needs_a_login(address):
    with pytest.raises(SystemExit, match="--basic-auth"):
        check_flower_options(_options(address))
    with pytest.raises(SystemExit):  # FLOWER_BASIC_AUTH="" is no login
        check_flower_options(_options(address, basic_auth=[""]))
    check_flower_options(_options(address, basic_auth=["ops:secret"]))
    check_flower_options(_options(address, auth=".*@example.com"))


def test_the_real_flower_command_refuses_to_serve_everyone_without_a_login():
    """Before: ``celery -A tasks flower`` listened on 0.0.0.0 and [::], no login."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROOFQ_", "FLOWER_"))}
    run = subprocess.run([sys.executable, "-m", "celery", "-A", "tasks", "flower",
                          "--address=0.0.0.0", "--port=0"], capture_output=True, text=True,
                         env=env, timeout=120)
    assert run.returncode != 0
    assert run.stderr.strip().splitlines()[-1].startswith("flower: --address=0.0.0.0 serves")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_metrics_bind_loopback_by_default():
    server = serve_metrics(_free_port())
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        assert b"proofq" in urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read()
    finally:
        server.shutdown()
        server.server_close()


def test_metrics_address_is_a_setting():
    from config.settings import load_settings
    assert load_settings().metrics_address == "127.0.0.1"
    assert load_settings(metrics_address="0.0.0.0").metrics_address == "0.0.0.0"
