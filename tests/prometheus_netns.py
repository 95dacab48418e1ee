"""Docker's network of the cpu profile, as Prometheus sees it, for the real Prometheus.

Run by ``tests/test_prometheus_scrape.py`` inside ``unshare -mn`` (a private loopback and
mounts): a DNS server that knows only ``worker-cpu`` (what Docker's embedded DNS answers
when the cpu profile runs: NXDOMAIN for the GPU workers), worker-cpu's two ``/metrics``
ports, and Flower's ``/metrics`` behind the login of ``FLOWER_BASIC_AUTH``.  Prometheus is
started through ``docker/prometheus-entrypoint.sh``; the active targets, once all scraped,
are printed as JSON on stdout.
"""

from __future__ import annotations

import base64
import http.server
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

RUNNING = {"worker-cpu": "127.0.0.1"}
PROMETHEUS = "127.0.0.1:9090"


def answer_dns(sock: socket.socket) -> None:
    """Answer A queries for RUNNING's names; NXDOMAIN for every other name."""
    while True:
        query, peer = sock.recvfrom(2048)
        end, labels = 12, []
        while query[end]:
            labels.append(query[end + 1:end + 1 + query[end]].decode())
            end += 1 + query[end]
        question = query[12:end + 5]
        qtype = struct.unpack(">H", query[end + 1:end + 3])[0]
        address = RUNNING.get(".".join(labels)) if qtype == 1 else None
        if address is None:
            header = struct.pack(">HHHHH", 0x8183, 1, 0, 0, 0)  # NXDOMAIN
            sock.sendto(query[:2] + header + question, peer)
        else:
            record = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 5, 4) + socket.inet_aton(address)
            header = struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0)
            sock.sendto(query[:2] + header + question + record, peer)


def metrics_server(port: int, login: str | None) -> http.server.ThreadingHTTPServer:
    """``/metrics`` on ``port``; with a login, 401 unless the request carries it."""
    expected = "Basic " + base64.b64encode(login.encode()).decode() if login else None

    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            allowed = expected is None or self.headers.get("Authorization") == expected
            self.send_response(200 if allowed else 401)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            if allowed:
                self.wfile.write(f"fake_metric{{port=\"{port}\"}} 1\n".encode())

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Metrics)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def active_targets() -> list[dict]:
    with urllib.request.urlopen(f"http://{PROMETHEUS}/api/v1/targets?state=active",
                                timeout=5) as response:
        return json.load(response)["data"]["activeTargets"]


def main(work: Path, entrypoint: str, template: str, timeout_s: float) -> int:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for name, text in (("resolv.conf", "nameserver 127.0.0.1\n"),
                       ("hosts", "127.0.0.1 localhost flower\n")):  # compose's flower service
        (work / name).write_text(text)
        subprocess.run(["mount", "--bind", str(work / name), f"/etc/{name}"], check=True)
    dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dns.bind(("127.0.0.1", 53))
    threading.Thread(target=answer_dns, args=(dns,), daemon=True).start()
    for port in (9100, 9101):
        metrics_server(port, None)
    metrics_server(5555, os.environ["FLOWER_BASIC_AUTH"].split(",")[0])
    env = {**os.environ, "PROMETHEUS_CONFIG_TEMPLATE": template,
           "PROMETHEUS_RUN_DIR": str(work / "run")}
    with open(work / "prometheus.log", "wb") as log:
        prometheus = subprocess.Popen(
            [entrypoint, f"--storage.tsdb.path={work / 'data'}",
             f"--web.listen-address={PROMETHEUS}"], env=env, stdout=log, stderr=log)
    try:
        # done when every target was scraped and the list has not changed for 6 s (one
        # round of discovery updates, which Prometheus sends every 5 s)
        deadline = time.monotonic() + timeout_s
        targets: list[dict] = []
        listed, since = None, time.monotonic()
        while time.monotonic() < deadline and prometheus.poll() is None:
            time.sleep(1.0)
            try:
                targets = active_targets()
            except OSError:
                continue
            urls = sorted(t["scrapeUrl"] for t in targets)
            if urls != listed:
                listed, since = urls, time.monotonic()
            elif (targets and time.monotonic() - since >= 6
                  and all(t["health"] != "unknown" for t in targets)):
                break
        json.dump(targets, sys.stdout)
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])))
