"""One device copy of a key per GPU (``gpu.shared_keys``, ``gpu.key_keeper``) without a GPU:
the keeper's holds over its real socket (a key made once for several connections, freed
by the last release or when its last holder's connection closes, the keeper leaving once
idle), a keeper that cannot start, and the ledger's one reservation for a shared key.

The device half (the arrays opened through CUDA IPC, proofs under a shared key) is
``tests/test_gpu_shared_keys.py``."""

from __future__ import annotations

import json
import secrets
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis

from gpu.key_keeper import Holders, Keeper, serve
from gpu.shared_keys import Connection, KeeperUnavailable, SharedKeys, key_name, socket_path
from snark import groth16
from snark.keys import ProvingKey
from tests.circuits import random_circuit
from workers.heartbeat import Heartbeat
from workers.ledger import VramLedger
from workers.locks import GpuId

SETTINGS = {"table_budget_bytes": 0, "vram_budget_bytes": None}


def test_holders_count_each_connection_once_and_free_with_the_last():
    holders = Holders()
    holders.add("k", 1)
    holders.add("k", 1)
    holders.add("k", 2)
    holders.add("j", 2)
    assert not holders.remove("k", 1)        # 2 still holds it
    assert holders.drop(2) == ["k", "j"]     # its connection closed: both keys unheld
    assert holders.by_key == {}
    assert holders.remove("never", 3)         # nothing held: nobody holds it


def _key_dir(tmp_path: Path, rng, constraints: int = 12) -> Path:
    key = groth16.setup(random_circuit(num_inputs=2, num_constraints=constraints,
                                       rng=rng).compile())
    return key.save(tmp_path / "params")


@pytest.fixture()
def start_keeper(tmp_path):
    """Starts a keeper serving on a real Unix socket (leaving once idle for ``idle_s``),
    its device work a recording stand-in: what it made and freed, by directory."""
    def start(idle_s: float = 30.0):
        built: list[Path] = []

        class Recording:
            def make(self, directory: Path):
                built.append(directory)
                return directory, {"made": str(directory)}

            def free(self, handle):
                freed.append(handle)

        freed: list[Path] = []
        keeper = Keeper(Recording(), SETTINGS)
        path = tmp_path / f"k-{secrets.token_hex(2)}.sock"
        thread = threading.Thread(target=serve, args=(keeper, path, idle_s), daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not path.exists():
            assert time.monotonic() < deadline, "the keeper did not listen"
            time.sleep(0.01)
        return SimpleNamespace(path=path, built=built, freed=freed, thread=thread)

    return start


def _hold(connection: Connection, directory: Path) -> dict:
    return connection.ask({"op": "hold", "directory": str(directory),
                           "name": key_name(directory), "settings": SETTINGS})


def _holders(connection: Connection) -> dict:
    return {name: k["holders"] for name, k in connection.ask({"op": "status"})["keys"].items()}


def test_a_key_is_made_once_for_its_holders_and_freed_by_the_last(start_keeper, tmp_path, rng):
    directory = _key_dir(tmp_path, rng)
    keeper = start_keeper()
    name = key_name(directory)
    first, second = Connection(keeper.path), Connection(keeper.path)
    try:
        assert _hold(first, directory)["resident"] == {"made": str(directory)}
        assert _hold(second, directory)["ok"]
        assert keeper.built == [directory]               # made once for both
        assert _holders(first) == {name: 2}
        assert first.ask({"op": "release", "name": name})["ok"]
        assert _holders(first) == {name: 1} and keeper.freed == []
        second.close()                                   # its worker exited without a word
        deadline = time.monotonic() + 30
        while not keeper.freed:
            assert time.monotonic() < deadline, "a closed connection's hold was kept"
            time.sleep(0.01)
        assert keeper.freed == [directory] and _holders(first) == {}
        assert _hold(first, directory)["ok"] and keeper.built == [directory] * 2  # made again
    finally:
        first.close()
        second.close()


def test_the_keeper_refuses_what_it_cannot_serve_in_one_line(start_keeper, tmp_path, rng):
    directory = _key_dir(tmp_path, rng)
    keeper = start_keeper()
    connection = Connection(keeper.path)
    try:
        other = connection.ask({"op": "hold", "directory": str(directory), "name": "key-other",
                                "settings": SETTINGS})
        assert not other["ok"] and "holds another key than key-other" in other["error"]
        settings = connection.ask({"op": "hold", "directory": str(directory),
                                   "name": key_name(directory), "settings": {"x": 1}})
        assert not settings["ok"] and "differ from this keeper's" in settings["error"]
        missing = connection.ask({"op": "hold", "directory": str(tmp_path / "none"),
                                  "name": "key-x", "settings": SETTINGS})
        assert not missing["ok"] and "none" in missing["error"]
        unknown = connection.ask({"op": "evict"})
        assert not unknown["ok"] and "'evict'" in unknown["error"]
        assert keeper.built == []
    finally:
        connection.close()


def test_the_keeper_leaves_once_idle_and_removes_its_socket(start_keeper):
    """An open connection keeps the keeper past its idle time; once the last closes, it
    leaves. The idle time is long enough that a loaded machine still connects first (at 3 s
    a CI run with benchmarks beside it once did not: the keeper had left)."""
    idle_s = 8.0
    keeper = start_keeper(idle_s=idle_s)
    connection = Connection(keeper.path)
    try:
        time.sleep(idle_s + 1.5)
        assert keeper.thread.is_alive(), "the keeper left while a worker was connected"
    finally:
        connection.close()
    keeper.thread.join(timeout=60)
    assert not keeper.thread.is_alive() and not keeper.path.exists()


def test_a_keeper_that_cannot_start_is_one_line_naming_why(tmp_path, rng, monkeypatch):
    """Here no GPU backend can start, so the keeper the client starts exits at once: the
    partition gets a transient error saying so, with the keeper's log named."""
    key = ProvingKey.load(_key_dir(tmp_path, rng))
    assert key.directory is not None
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # no device, even on a GPU machine
    shared = SharedKeys(0, f"GPU-{secrets.token_hex(4)}", SETTINGS, tmp_path)
    try:
        with pytest.raises(KeeperUnavailable, match=r"did not start \(exit \d+: .*\); see "):
            shared.hold(key)
    finally:
        shared.close()
    assert not shared.path.exists()


def test_a_release_after_the_keeper_is_gone_is_not_an_error(tmp_path, rng, caplog):
    """Evicting a shared key whose keeper died (its copy went with it) frees this process's
    view and says so; nothing starts a keeper just to release."""
    from gpu import ipc

    key = ProvingKey.load(_key_dir(tmp_path, rng))
    shared = SharedKeys(0, f"GPU-{secrets.token_hex(4)}", SETTINGS, tmp_path)
    shared._imports[id(key)] = ipc.Imports()  # as if held from a keeper since gone
    started = time.monotonic()
    shared.release(key)
    assert not shared.holds(key) and time.monotonic() - started < 5
    assert "no GPU key keeper at" in caplog.text and not shared.path.exists()


def test_a_socket_path_too_long_for_unix_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="longer than the 107 bytes"):
        socket_path("GPU-x", tmp_path / ("d" * 100))


def test_a_loaded_key_knows_its_directory_and_its_name_its_contents(tmp_path, rng):
    directory = _key_dir(tmp_path, rng)
    assert ProvingKey.load(directory).directory == directory
    name = key_name(directory)
    assert name.startswith("key-") and key_name(directory) == name
    manifest = json.loads((directory / "manifest.json").read_text())
    (directory / "manifest.json").write_text(json.dumps(dict(manifest, h_form="odd")))
    assert key_name(directory) != name  # other contents, another name


@pytest.fixture()
def ledger(redis_url):
    beat = Heartbeat(0.1)
    yield VramLedger(redis.Redis.from_url(redis_url), GpuId("host", f"t-{secrets.token_hex(3)}"),
                     budget_bytes=1000, lease_s=30, heartbeat=beat)
    beat.close()


def test_a_shared_key_is_one_reservation_until_its_last_holder_leaves(ledger):
    first = ledger.reserve_shared("key-a", "w1", 600)
    second = ledger.reserve_shared("key-a", "w2", 600)  # joins: counted once
    assert first and second and ledger.reserved_bytes() == 600
    assert ledger.reserve("w3", 500) is None             # 600 + 500 > 1000
    first.release()
    assert ledger.reserved_bytes() == 600                # w2 still holds it
    second.release()
    assert ledger.reserved_bytes() == 0
    assert ledger.reserve_shared("key-b", "w1", 1200) is None  # over the budget
    forced = ledger.reserve_shared("key-b", "w1", 1200, force=True)
    assert forced and ledger.reserved_bytes() == 1200
    forced.release()
    assert ledger.reserved_bytes() == 0


def test_a_shared_reservation_lapses_with_its_holders_leases(redis_url):
    beat = Heartbeat(60)  # renews nothing within the test
    ledger = VramLedger(redis.Redis.from_url(redis_url), GpuId("host", secrets.token_hex(3)),
                        budget_bytes=1000, lease_s=0.2, heartbeat=beat)
    try:
        assert ledger.reserve_shared("key-a", "w1", 700)  # its holder dies: no release
        deadline = time.monotonic() + 30
        while ledger.reserved_bytes():
            assert time.monotonic() < deadline, "a dead holder's reservation never lapsed"
            time.sleep(0.05)
        again = ledger.reserve_shared("key-a", "w2", 700)  # a fresh one, its holders anew
        assert again and ledger.reserved_bytes() == 700
        again.release()
        assert ledger.reserved_bytes() == 0
    finally:
        beat.close()


def test_a_keeper_that_died_is_seen_between_requests_and_let_go_of(tmp_path, rng):
    """A keeper that dies closes its end of every worker's connection: the worker sees it
    at its next partition without asking (``keeper_gone``) and closes what it opened of the
    dead copies (``let_go_of_dead_keeper``), so that a new keeper's copy is the only one.
    The keeper here is a listening socket that accepts and, when told, dies: what the OS
    shows a worker of a keeper killed with -9."""
    import socket

    from gpu import ipc

    path = tmp_path / f"k-{secrets.token_hex(2)}.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    key = ProvingKey.load(_key_dir(tmp_path, rng))
    shared = SharedKeys(0, f"GPU-{secrets.token_hex(4)}", SETTINGS, tmp_path)
    shared.path = path
    try:
        assert not shared.keeper_gone()                   # holds nothing: nothing to lose
        shared._connection = Connection(path)
        keeper_end, _ = listener.accept()
        shared._imports[id(key)] = ipc.Imports()          # as if held from this keeper
        assert not shared.keeper_gone()                   # alive, silent between requests
        keeper_end.close()                                # the keeper dies
        assert shared.keeper_gone()
        assert shared.let_go_of_dead_keeper() == 1
        assert not shared.holds(key) and shared._connection is None
        assert not shared.keeper_gone()                   # nothing of the dead one is held
    finally:
        shared.close()
        listener.close()
