"""The job view refuses a ``Host`` other than the address it was bound to (DNS rebinding:
another site's name re-pointed at 127.0.0.1 would read every job from a browser here)."""

from __future__ import annotations

import http.client
import threading

import pytest
import redis

from client.view.server import allowed_host, serve
from tasks.jobs import JobStore


@pytest.fixture()
def view(redis_url):
    store = JobStore(redis.Redis.from_url(redis_url), ttl_s=60, results_maxlen=10)
    server = serve(store, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _get(port: int, path: str, host: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.putrequest("GET", path, skip_host=True)
    connection.putheader("Host", host)
    connection.endheaders()
    response = connection.getresponse()
    status, body = response.status, response.read()
    connection.close()
    return status, body


def test_the_view_answers_its_own_address_and_refuses_a_rebound_name(view):
    """Before: any Host was answered, the jobs' data included."""
    for host in (f"127.0.0.1:{view}", f"localhost:{view}"):
        for path in ("/", "/api/view"):
            assert _get(view, path, host)[0] == 200, (host, path)
    for host in (f"rebound.example:{view}", "127.0.0.1", f"127.0.0.1:{view + 1}", ""):
        status, body = _get(view, "/api/view", host)
        assert status == 421 and b"jobs" not in body, host
        assert body.decode() == f"Host: expected 127.0.0.1:{view} (this view's address)"


def test_which_hosts_each_binding_accepts():
    assert allowed_host("[::1]:80", "::1", 80) and allowed_host("localhost:80", "::1", 80)
    assert not allowed_host("localhost:80", "192.0.2.7", 80)
    assert allowed_host("192.0.2.7:80", "192.0.2.7", 80)
    assert allowed_host("192.0.2.9:80", "0.0.0.0", 80)  # any interface: any IP literal
    assert not allowed_host("rebound.example:80", "0.0.0.0", 80)
