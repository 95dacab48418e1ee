"""Keys made resident or let go on request (``workers.key_requests``), carried out by a real
worker runtime on the CPU backend through its requests' thread, on a real Redis: what a
worker answers, its card after each, an eviction asked while a partition uses the key (let
go when the partition ends, the proof still right), and requests it cannot take.
The gateway's side, through a Celery worker, is ``tests/test_cuzk_gateway.py``'s."""

from __future__ import annotations

import time

import pytest
import redis

from config.redis_keys import DEFAULT_KEYS
from config.settings import load_settings
from snark.fields import FR_MODULUS
from snark.job_input import InputLimits
from snark.params import recorded_circuit_id
from snark.registry import proof_type, worker_half
from tests import product_type
from tests.product_worker import SHAPE
from tests.toy_distribution import toy_distribution
from workers.card import read_cards
from workers.key_requests import KeyReply, KeyRequest, ask, wait_for
from workers.runtime import WorkerRuntime

TYPE = product_type.PLUGIN.kind
NAME = (TYPE.name, "toy-product")
WORKER = "keys@host/1"


@pytest.fixture(scope="module", autouse=True)
def toy_installed(tmp_path_factory):
    """toy-product installed in this process, as its own distribution."""
    with toy_distribution(tmp_path_factory.mktemp("site")) as _:
        assert proof_type(TYPE.name) is TYPE
        yield


@pytest.fixture()
def runtime(redis_url, tmp_path):
    worker = WorkerRuntime.start(redis_url=redis_url, gpu=None, worker_name=WORKER,
                                 settings=load_settings(backend="cpu", params_dir=tmp_path))
    yield worker
    worker.close()


def _through_the_stream(redis_url: str, op: str, directory: str = "") -> KeyReply:
    client = redis.Redis.from_url(redis_url)
    sent = ask(client, DEFAULT_KEYS, KeyRequest(op, *NAME, directory, wait_s=30))
    return wait_for(client, DEFAULT_KEYS, sent.request_id, {WORKER},
                    time.monotonic() + 60)[WORKER]


def _card_keys(redis_url: str) -> dict[str, int]:
    [card] = read_cards(redis.Redis.from_url(redis_url), DEFAULT_KEYS.card_prefix)
    return card.keys


def _prove(runtime: WorkerRuntime, job: str, rng, progress=None) -> None:
    """One partition of a fresh toy-product job, checked by the type's own verify."""
    raw = {"pairs": [[rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS)]]}
    job_input = TYPE.parse(raw, InputLimits.of(runtime.settings))
    part = runtime.prove_partition(job_id=job, partition=0, proof_type=TYPE,
                                   job_input=job_input, progress=progress)
    worker = worker_half(TYPE, runtime.storage)
    assert worker.verify(job_input, worker.assemble(job_input, [part]))


def test_a_worker_lets_go_and_preloads_a_key_on_request(runtime, redis_url, tmp_path, rng):
    _prove(runtime, "first", rng)  # makes the key, resident after
    [nbytes] = _card_keys(redis_url).values()
    directory = recorded_circuit_id(tmp_path, SHAPE)
    evicted = _through_the_stream(redis_url, "evict")
    assert (evicted.ok, evicted.was_resident, evicted.deferred, evicted.nbytes) == (
        True, True, False, nbytes), evicted
    assert not evicted.shared and evicted.device.endswith(runtime.binding.gpu.uuid)
    assert _card_keys(redis_url) == {} and runtime.residency.resident() == []
    assert _through_the_stream(redis_url, "evict") == KeyReply(WORKER, True,
                                                               device=evicted.device)
    loaded = _through_the_stream(redis_url, "preload", directory)
    assert loaded.ok and not loaded.was_resident and loaded.milliseconds > 0, loaded
    assert _card_keys(redis_url) == {"/".join(NAME): nbytes}
    again = _through_the_stream(redis_url, "preload", directory)
    assert again.ok and again.was_resident and again.milliseconds == 0, again
    _prove(runtime, "second", rng)  # proved under the preloaded key
    assert len(runtime.residency.resident()) == 1


def test_an_eviction_asked_during_a_partition_waits_for_its_end(runtime, redis_url, rng):
    _prove(runtime, "first", rng)
    answers: list[KeyReply] = []

    def evict_while_computing(phase: str, _info: dict) -> None:
        if phase == "compute":  # the requests' thread answers while this partition runs
            answers.append(_through_the_stream(redis_url, "evict"))
            assert runtime.residency.resident() != []  # still in use: still resident
            assert _card_keys(redis_url) != {}

    _prove(runtime, "second", rng, progress=evict_while_computing)
    [answer] = answers
    assert answer.ok and answer.was_resident and answer.deferred, answer
    assert runtime.residency.resident() == [] and _card_keys(redis_url) == {}


def test_requests_a_worker_cannot_take_are_answered_with_why(runtime, redis_url):
    missing = _through_the_stream(redis_url, "preload", "no-such-key")
    assert not missing.ok and missing.error.startswith(
        "$PROOFQ_PARAMS_DIR/no-such-key/manifest.json: missing"), missing
    client = redis.Redis.from_url(redis_url)
    for fields, error in (({"directory": "../etc"}, "request: directory: '../etc'"),
                          ({"op": "drop"}, "request: op: 'drop' is not one of"),
                          ({"wait_s": "soon"}, "request: wait_s: 'soon'")):
        request_id = f"bad-{len(error)}"
        client.xadd(DEFAULT_KEYS.key_requests, {
            **{"id": request_id, "op": "preload", "type": NAME[0], "name": NAME[1],
               "directory": "k", "wait_s": "5"}, **fields})
        [reply] = wait_for(client, DEFAULT_KEYS, request_id, {WORKER},
                           time.monotonic() + 30).values()
        assert not reply.ok and reply.error.startswith(error), reply
    assert runtime.key_requests._thread.is_alive()  # no request ended the thread
