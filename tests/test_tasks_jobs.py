"""Job state transitions against a real redis-server: idempotent creation, atomic completion."""

from __future__ import annotations

import itertools
import threading

import pytest
import redis

from tasks.jobs import RESULTS_STREAM, JobIdError, JobStore, check_job_id, content_digest


@pytest.fixture()
def store(redis_url):
    return JobStore(redis.Redis.from_url(redis_url), ttl_s=600, results_maxlen=100)


def _create(store, job_id="job-1", partitions=3, content="c1"):
    return store.create(job_id, digest=content_digest("porep-demo", content),
                        proof_type="porep-demo",
                        partitions=partitions, priority="normal", input_json=content)


_COUNTER = itertools.count(1)


def _proof() -> bytes:
    """Distinct stand-ins for partition proofs: the store keeps bytes, never decodes them."""
    return next(_COUNTER).to_bytes(192, "big")


def test_create_is_idempotent_on_content(store):
    assert _create(store) == "created"
    assert _create(store) == "exists"
    assert _create(store, content="other c1") == "conflict"
    state = store.state("job-1")
    assert (state.status, state.partitions, state.parts_done) == ("queued", 3, 0)
    assert store.input_json("job-1") == b"c1"


def test_last_partition_completes_once_and_result_is_ordered(store):
    _create(store, partitions=3)
    proofs = [_proof() for _ in range(3)]
    assert store.begin_partition("job-1", 2, max_attempts=3) == ("run", 1)
    assert store.state("job-1").status == "proving"
    assert store.store_part("job-1", 2, proofs[2]) == "stored"
    assert store.store_part("job-1", 0, proofs[0]) == "stored"
    assert store.begin_partition("job-1", 0, max_attempts=3) == ("duplicate", 0)
    assert store.store_part("job-1", 0, _proof()) == "duplicate"  # never replaced
    assert store.store_part("job-1", 1, proofs[1]) == "complete"
    assert store.state("job-1").status == "assembling"
    assert store.store_part("job-1", 1, proofs[1]) == "assembling"
    assembled = b"".join(store.parts("job-1", 3))
    assert assembled == b"".join(proofs)
    assert store.finish("job-1", assembled) == "done"
    assert store.finish("job-1", assembled) == "done"  # the status found, no second publish
    assert store.result("job-1") == assembled
    entries = store.redis.xrange(RESULTS_STREAM)
    assert len(entries) == 1
    assert entries[0][1][b"proof"].decode() == assembled.hex()
    assert store.input_json("job-1") is None  # input dropped once the job ended
    assert store.redis.ttl(store.key("job-1")) > 0


def test_concurrent_deliveries_complete_exactly_once(store, redis_url):
    partitions = 8
    _create(store, partitions=partitions)
    outcomes: list[str] = []
    lock = threading.Lock()

    def deliver(partition: int) -> None:
        local = JobStore(redis.Redis.from_url(redis_url), ttl_s=600, results_maxlen=100)
        outcome = local.store_part("job-1", partition, _proof())
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=deliver, args=(p % partitions,))
               for p in range(3 * partitions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("complete") == 1
    assert outcomes.count("stored") == partitions - 1
    assert store.state("job-1").parts_done == partitions


def test_every_start_counts_and_a_partition_that_keeps_dying_is_exhausted(store):
    _create(store, partitions=2)
    assert [store.begin_partition("job-1", 1, max_attempts=3) for _ in range(4)] == [
        ("run", 1), ("run", 2), ("run", 3), ("exhausted", 3)]
    assert store.begin_partition("job-1", 0, max_attempts=3) == ("run", 1)


def test_cancel_stops_a_job_and_later_work_is_refused(store):
    _create(store, partitions=2)
    assert store.begin_partition("job-1", 0, max_attempts=3) == ("run", 1)
    assert store.cancel("job-1") == "cancelled"
    assert store.cancel("job-1") == "cancelled"
    assert not store.is_active("job-1")
    assert store.begin_partition("job-1", 1, max_attempts=3) == ("cancelled", 0)
    assert store.store_part("job-1", 0, _proof()) == "cancelled"
    state = store.state("job-1")
    assert state.status == "cancelled" and state.error == "cancelled by request"
    [(_, fields)] = store.redis.xrange(RESULTS_STREAM)
    assert fields[b"status"] == b"cancelled"


def test_failure_is_recorded_once_and_other_jobs_are_untouched(store):
    _create(store, "bad", partitions=2)
    _create(store, "good", partitions=1)
    assert store.fail("bad", "partition 1: compute: out of memory") == "failed"
    assert store.fail("bad", "partition 0: later error") == "failed"
    assert store.state("bad").error == "partition 1: compute: out of memory"
    assert store.begin_partition("good", 0, max_attempts=3) == ("run", 1)
    assert store.store_part("good", 0, _proof()) == "complete"


def test_cancel_after_done_keeps_the_result(store):
    _create(store, partitions=1)
    proof = _proof()
    store.store_part("job-1", 0, proof)
    store.finish("job-1", proof)
    assert store.cancel("job-1") == "done"
    assert store.result("job-1") == proof


def test_unknown_job(store):
    assert store.state("nope") is None
    assert store.begin_partition("nope", 0, max_attempts=3) == ("missing", 0)
    assert store.cancel("nope") == "missing"


@pytest.mark.parametrize("job_id", ["", "-x", "a b", "x" * 129, "a/b", "é"])
def test_job_ids_that_cannot_name_keys_are_refused(job_id):
    with pytest.raises(JobIdError, match="job_id"):
        check_job_id(job_id)


def test_a_task_of_a_job_that_ended_meanwhile_is_abandoned_not_failed(store):
    # Cancel between begin_partition ('run') and reading the input: the input is gone.
    from snark.porep.seal import seal
    from tasks import pipeline

    pipeline._parsed_input.cache_clear()
    _create(store, partitions=1, content=seal(2048, 1, 1).to_json())
    assert pipeline.job(store, "job-1")[1].partitions == 1
    pipeline._parsed_input.cache_clear()
    assert store.begin_partition("job-1", 0, max_attempts=3) == ("run", 1)
    store.cancel("job-1")
    with pytest.raises(pipeline.JobEnded, match="job-1: input is gone"):
        pipeline.job(store, "job-1")
    with pytest.raises(pipeline.JobEnded):
        pipeline.job(store, "never-submitted")
    assert pipeline.assemble(store, "job-1") == "cancelled"


def test_a_job_id_used_again_after_expiry_gets_its_new_input(store):
    from snark.porep.seal import seal
    from tasks import pipeline

    pipeline._parsed_input.cache_clear()
    _create(store, partitions=1, content=seal(2048, 1, 1).to_json())
    assert pipeline.job(store, "job-1")[1].partitions == 1
    store.redis.delete(*store.redis.keys("proofq:job:job-1*"))  # ended and expired
    _create(store, partitions=2, content=seal(2048, 2, 1).to_json())
    assert pipeline.job(store, "job-1")[1].partitions == 2


def test_one_submit_task_owns_the_fan_out_and_keeps_it_on_redelivery(store):
    _create(store)
    assert store.claim_fan_out("job-1", "task-a")
    assert not store.claim_fan_out("job-1", "task-b")  # a duplicate submit message
    assert store.claim_fan_out("job-1", "task-a")      # task-a's message, delivered again
    assert store.state("job-1").status == "queued"


def test_the_scripts_and_python_share_one_set_of_words():
    """Every word a script writes or returns is a member of ``JobStatus`` or ``Outcome``
    (substituted from them), and the words on the wire are the ones producers read."""
    import re

    from tasks import jobs

    assert [s.value for s in jobs.JobStatus] == [
        "queued", "proving", "assembling", "done", "failed", "cancelled"]
    words = set(jobs.JobStatus) | set(jobs.Outcome)
    for name in ("_CREATE", "_BEGIN", "_STORE_PART", "_FINISH", "_STOP"):
        script = jobs.lua(getattr(jobs, name))
        assert "$" not in script
        quoted = set(re.findall(r"return \{?'(\w+)'", script))
        quoted |= set(re.findall(r"'status', '(\w+)'", script))
        assert quoted and quoted <= words, (name, quoted - words)
    with pytest.raises(KeyError):
        jobs.lua("return '$QUEUD'")


def test_replies_are_members(store):
    from tasks.jobs import JobStatus, Outcome

    assert _create(store) is Outcome.CREATED
    assert store.begin_partition("job-1", 0, max_attempts=1) == (Outcome.RUN, 1)
    assert store.status("job-1") is JobStatus.PROVING
    assert store.cancel("job-1") is JobStatus.CANCELLED
    assert store.fail("job-1", "late") is JobStatus.CANCELLED  # how it had ended
    assert store.cancel("no-such-job") is Outcome.MISSING


def test_a_job_stored_by_0_1_is_read_and_retired_alike(store):
    """0.1 kept the input under ``:c1`` and named circom jobs ``groth16``: such a job's input
    is still found, dropped when it ends, and its resubmission is the same job."""
    text = '{"key": "k", "witnesses": []}'
    _create(store, content=text)
    key = store.key("job-1")
    store.redis.rename(key + ":input", key + ":c1")  # as 0.1 stored it
    store.redis.hset(key, mapping={"proof_type": "groth16",
                                   "digest": content_digest("groth16", text)})
    assert store.input_json("job-1") == text.encode()
    again = store.create("job-1", digest=content_digest("circom", text), proof_type="circom",
                         partitions=3, priority="normal", input_json=text,
                         former_digests=(content_digest("groth16", text),))
    assert again == "exists"
    assert store.create("job-1", digest=content_digest("circom", text + " "),
                        proof_type="circom", partitions=3, priority="normal",
                        input_json=text + " ",
                        former_digests=(content_digest("groth16", text + " "),)) == "conflict"
    assert store.cancel("job-1") == "cancelled"
    assert not store.redis.exists(key + ":c1") and store.input_json("job-1") is None


def test_recent_lists_the_newest_jobs_first_within_the_cap(redis_url, rng):
    cap = rng.randrange(3, 8)
    store = JobStore(redis.Redis.from_url(redis_url), ttl_s=600, results_maxlen=cap)
    made = [f"job-{i}" for i in range(cap + rng.randrange(1, 5))]
    for job_id in made:
        _create(store, job_id=job_id, content=job_id)
    _create(store, job_id=made[-1], content=made[-1])  # the same job again: not listed twice
    # By Redis's clock, in microseconds: one round trip apart each, never a tie.
    assert [s.job_id for s in store.recent(cap)] == made[::-1][:cap]
    assert store.redis.zcard("proofq:jobs") == cap
    assert [s.job_id for s in store.recent(1)] == [made[-1]]
    store.redis.delete(store.key(made[-1]))  # expired: left out, never a stale state
    assert made[-1] not in {s.job_id for s in store.recent(cap)}


def test_setup_marks_a_queued_job_as_stage_setup(store):
    _create(store)
    assert store.state("job-1").stage == "queued"
    store.mark_setup("job-1", True)
    state = store.state("job-1")
    assert state.stage == "setup" and state.setup >= state.created
    assert state.to_json()["stage"] == "setup"
    store.mark_setup("job-1", False)
    assert store.state("job-1").stage == "queued" and store.state("job-1").setup is None


def test_a_job_fails_once_every_live_worker_up_to_the_most_has_refused_it(store, rng):
    """A refusal gives the work back (its attempts start over) until as many distinct
    workers as are live on the queue (at most ``most``) have refused; then the job fails,
    once, with their reasons. A worker refusing again counts once."""
    from workers.quarantine import mark_alive

    live = rng.randrange(2, 5)
    for n in range(live):
        mark_alive(store.redis, f"w{n}", ["gpu"])
    _create(store, partitions=2)
    assert store.begin_partition("job-1", 1, max_attempts=3) == ("run", 1)
    refuse = dict(most=10, live_workers=store.keys.workers("gpu"), live_s=60, partition=1)
    for n in range(live - 1):
        assert store.refuse("job-1", f"w{n}", f"reason {n % 2}", **refuse) == "returned"
        assert store.refuse("job-1", f"w{n}", f"reason {n % 2}", **refuse) == "returned"
        assert store.begin_partition("job-1", 1, max_attempts=3) == ("run", 1)
    assert store.state("job-1").status == "proving"
    assert store.refuse("job-1", f"w{live - 1}", "reason 1", **refuse) == "failed"
    state = store.state("job-1")
    assert state.error == f"no worker can serve it ({live} refused): reason 0; reason 1"
    assert store.refuse("job-1", "w9", "late", **refuse) == "failed"  # ended: as found
    assert len(store.redis.xrange(RESULTS_STREAM)) == 1


def test_work_handed_back_is_no_refusal_and_its_attempts_start_over(store):
    """A process that lost its device hands its partition back: the job stays proving
    (even with no other worker), nothing is recorded against the worker, and the next run is
    the partition's first attempt again; an ended job answers with its status."""
    _create(store, partitions=2)
    assert store.begin_partition("job-1", 1, max_attempts=3) == ("run", 1)
    for _ in range(3):
        assert store.hand_back("job-1", 1) == "returned"
        assert store.begin_partition("job-1", 1, max_attempts=3) == ("run", 1)
    assert store.state("job-1").status == "proving" and store.refusals("job-1") == {}
    store.cancel("job-1")
    assert store.hand_back("job-1", 1) == "cancelled"
    assert store.hand_back("no-such-job") == "missing"


def test_a_lone_worker_refusing_fails_the_job_at_once(store):
    """Nobody else could serve it (no live worker recorded counts as one): a private
    cluster's one worker without the key fails the job instead of passing it to itself."""
    _create(store, partitions=1)
    assert store.refuse("job-1", "only", "setup: KeyFileError: gone", most=3,
                        live_workers=store.keys.workers("jobs"), live_s=60) == "failed"
    assert store.state("job-1").error == (
        "no worker can serve it (1 refused): setup: KeyFileError: gone")
