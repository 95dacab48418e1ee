"""Job state in Redis (docs/ARCHITECTURE.md §6); every transition is one Lua script, so it is
atomic.

Keys of job ``<id>`` (in the default namespace: ``proofq:`` is the cluster's
``PROOFQ_NAMESPACE``, ``config.redis_keys``):

- ``proofq:job:<id>``         hash: status, proof_type, partitions, priority, digest,
                              created / started / proved / finished (Redis server time,
                              seconds), error (``partition P: phase: reason``),
                              fan_out_task (the submit task that owns the fan-out),
                              fanned_out (set once the partition tasks are sent),
                              setup (while the job waits for its key to be made: since),
                              request_id (a job from ``proofq grpc``: Curio's request id)
                              key (the first proving worker's key: "<vk digest> <worker>")
- ``proofq:job:<id>:parts``   hash: partition → its part, hex (``ProofWorker.part``: the
                              192-byte proof, for circom followed by its public signals)
- ``proofq:job:<id>:attempts`` hash: partition → times a worker started proving it
- ``proofq:job:<id>:refusals`` hash: worker node → why it could not serve the job (its
                              work went back to the queue; ``refuse``)
- ``proofq:job:<id>:input``   the validated input JSON, dropped when the job ends (``:c1``
                              in 0.1: still read, and dropped, for one more release)
- ``proofq:job:<id>:result``  the assembled result (``ProofWorker.assemble``: porep's proofs
                              concatenated in order, circom's snarkjs JSON)
- ``proofq:jobs``             sorted set: job id by creation time, the newest
                              ``results_maxlen`` (``proofq jobs``, ``proofq view``)
- ``proofq:unsent``           sorted set: job → when it was stored, until its submit message
                              is sent (the reaper sends the ones left there: a producer that
                              died or lost Redis between storing and sending)
- ``proofq:totals``           hash: jobs ended, by final status, each counted once by the
                              script that ends it (kept when the jobs expire: GetStatus)
- ``proofq:results``          stream: one entry per ended job {job, status, proof|error}
                              (proof: the result, hex)
                              (and the intake's refusals, status ``rejected``)

Status runs ``queued → proving → assembling → done``; ``failed`` and ``cancelled`` end a
job early.  The scripts decide from the stored status, never from what a caller believes,
so a partition delivered twice, a late worker or a cancel racing the last partition each
get one well-defined answer.  Timestamps come from Redis's clock, one clock for all hosts.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import StrEnum
from string import Template

import redis

from config.redis_keys import DEFAULT_KEYS, RedisKeys

#: The default namespace's names (a store's own are ``JobStore.keys``).
PREFIX = DEFAULT_KEYS.job_prefix
RESULTS_STREAM = DEFAULT_KEYS.results
JOBS_INDEX = DEFAULT_KEYS.jobs_index
UNSENT = DEFAULT_KEYS.unsent


class JobStatus(StrEnum):
    """A job's ``status`` field."""

    QUEUED = "queued"
    PROVING = "proving"
    ASSEMBLING = "assembling"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Outcome(StrEnum):
    """What a transition or a task did, besides a status it found or set."""

    CREATED = "created"        # create: a new job
    EXISTS = "exists"          # create: the same content under this id before
    CONFLICT = "conflict"      # create: other content under this id
    MISSING = "missing"        # no such job (never was, or expired)
    RUN = "run"                # begin_partition: prove it now
    DUPLICATE = "duplicate"    # the partition is already stored
    EXHAUSTED = "exhausted"    # begin_partition: out of attempts
    STORED = "stored"          # store_part: kept, more to come
    COMPLETE = "complete"      # store_part: this call completed the set
    SKIPPED = "skipped"        # a submit task that does not own the job's fan-out
    ABANDONED = "abandoned"    # the job ended before or while this task ran
    FANNED_OUT = "fanned_out"  # submit: the partition tasks are sent
    RETURNED = "returned"      # refuse: this worker cannot serve it, back to the queue


#: A script's reply or a task's outcome: a status where it found or set one.
Reply = JobStatus | Outcome

ACTIVE = (JobStatus.QUEUED, JobStatus.PROVING, JobStatus.ASSEMBLING)
TERMINAL = (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)

_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

# The scripts name statuses and outcomes by their members ($QUEUED, $RUN, …), substituted
# from the enums above, so the Lua and the Python can never disagree on a word.
_LIB = """
local function now()
  local t = redis.call('TIME')
  return string.format('%d.%06d', t[1], t[2])
end
local function retire(job, ttl)
  for _, key in ipairs({job, job .. ':parts', job .. ':attempts', job .. ':result',
                        job .. ':refusals'}) do
    redis.call('EXPIRE', key, ttl)
  end
  redis.call('DEL', job .. ':input', job .. ':c1')
end
local function job_id(key)
  return string.sub(key, string.len('$PREFIX') + 1)
end
local function ended(status)
  redis.call('HINCRBY', '$TOTALS', status, 1)
end
local function over(job)
  -- MISSING, or the status of a job that has ended; nil while it is active
  local status = redis.call('HGET', job, 'status')
  if not status then return '$MISSING' end
  if status ~= '$QUEUED' and status ~= '$PROVING' and status ~= '$ASSEMBLING' then
    return status
  end
end
local function attempts_anew(job, partition)
  if partition ~= '' then redis.call('HDEL', job .. ':attempts', partition) end
end
local function stop(job, stream, status, error, ttl, cap)
  redis.call('HSET', job, 'status', status, 'error', error, 'finished', now())
  ended(status)
  redis.call('XADD', stream, 'MAXLEN', '~', cap, '*',
             'job', job_id(job), 'status', status, 'error', error)
  retire(job, ttl)
  return status
end
"""

# KEYS: job, jobs index, unsent.  ARGV: digest, proof_type, partitions, priority, input
# json, index cap, then the digests the same content had under the type's older names (a job
# stored before a rename).
_CREATE = """
local digest = redis.call('HGET', KEYS[1], 'digest')
if digest then
  if digest == ARGV[1] then return '$EXISTS' end
  for i = 7, #ARGV do
    if digest == ARGV[i] then return '$EXISTS' end
  end
  return '$CONFLICT'
end
local created = now()
redis.call('HSET', KEYS[1], 'status', '$QUEUED', 'digest', ARGV[1], 'proof_type', ARGV[2],
           'partitions', ARGV[3], 'priority', ARGV[4], 'created', created)
redis.call('SET', KEYS[1] .. ':input', ARGV[5])
redis.call('ZADD', KEYS[2], created, job_id(KEYS[1]))
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[6]) - 1)
redis.call('ZADD', KEYS[3], redis.call('TIME')[1], job_id(KEYS[1]))
return '$CREATED'
"""

# KEYS: job, jobs index, unsent.  A job whose message was never sent, taken back: only
# while it is queued and no submit task has claimed it.  1 if it was removed.
_WITHDRAW = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= '$QUEUED' or redis.call('HEXISTS', KEYS[1], 'fan_out_task') == 1 then return 0 end
redis.call('DEL', KEYS[1], KEYS[1] .. ':input')
redis.call('ZREM', KEYS[2], job_id(KEYS[1]))
redis.call('ZREM', KEYS[3], job_id(KEYS[1]))
return 1
"""

# KEYS: job.  ARGV: partition, most attempts.  {RUN, attempt} when the partition should be
# proved now; every start counts, so a partition that keeps killing its worker (and is
# re-delivered each time) ends EXHAUSTED instead of looping.
_BEGIN = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'$MISSING', 0} end
if status ~= '$QUEUED' and status ~= '$PROVING' then return {status, 0} end
if redis.call('HEXISTS', KEYS[1] .. ':parts', ARGV[1]) == 1 then return {'$DUPLICATE', 0} end
local attempt = redis.call('HINCRBY', KEYS[1] .. ':attempts', ARGV[1], 1)
if attempt > tonumber(ARGV[2]) then return {'$EXHAUSTED', attempt - 1} end
if status == '$QUEUED' then
  redis.call('HSET', KEYS[1], 'status', '$PROVING', 'started', now())
end
return {'$RUN', attempt}
"""

# KEYS: job.  ARGV: partition, proof hex.  Only the call that completes the set gets
# COMPLETE (and flips the job to ASSEMBLING); a part already stored is never replaced.
_STORE_PART = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= '$QUEUED' and status ~= '$PROVING' then return status or '$MISSING' end
local parts = KEYS[1] .. ':parts'
if redis.call('HSETNX', parts, ARGV[1], ARGV[2]) == 0 then return '$DUPLICATE' end
if redis.call('HLEN', parts) < tonumber(redis.call('HGET', KEYS[1], 'partitions')) then
  return '$STORED'
end
redis.call('HSET', KEYS[1], 'status', '$ASSEMBLING', 'proved', now())
return '$COMPLETE'
"""

# KEYS: job, results stream.  ARGV: proof bytes, proof hex, ttl, stream cap.
_FINISH = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= '$ASSEMBLING' then return status or '$MISSING' end
redis.call('SET', KEYS[1] .. ':result', ARGV[1])
redis.call('HSET', KEYS[1], 'status', '$DONE', 'finished', now())
ended('$DONE')
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*',
           'job', job_id(KEYS[1]), 'status', '$DONE', 'proof', ARGV[2])
retire(KEYS[1], ARGV[3])
return '$DONE'
"""

# KEYS: job, results stream.  ARGV: new status (FAILED|CANCELLED), error, ttl, stream cap.
_STOP = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return '$MISSING' end
if status == '$DONE' or status == '$FAILED' or status == '$CANCELLED' then return status end
return stop(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
"""

# KEYS: job, results stream, live workers (node -> last seen, Redis time).  ARGV: node,
# reason, most refusals, seconds a worker counts as live, partition ('' for none), ttl,
# stream cap.  A worker that cannot serve the job gives its work back: RETURNED, or FAILED
# once as many distinct workers have refused it as there are live ones, up to the most (the
# error: their distinct reasons).
# The partition's attempts start over for the next worker.
_REFUSE = """
local finished = over(KEYS[1])
if finished then return finished end
attempts_anew(KEYS[1], ARGV[5])
redis.call('HSET', KEYS[1] .. ':refusals', ARGV[1], ARGV[2])
local seen = tonumber(redis.call('TIME')[1]) - tonumber(ARGV[4])
local live = redis.call('ZCOUNT', KEYS[3], seen, '+inf')
local needed = math.min(tonumber(ARGV[3]), math.max(live, 1))
local refusals = redis.call('HGETALL', KEYS[1] .. ':refusals')
if #refusals / 2 < needed then return '$RETURNED' end
local reasons, seen_reason = {}, {}
for i = 2, #refusals, 2 do
  if not seen_reason[refusals[i]] then
    seen_reason[refusals[i]] = true
    table.insert(reasons, refusals[i])
  end
end
table.sort(reasons)
return stop(KEYS[1], KEYS[2], '$FAILED', 'no worker can serve it (' .. (#refusals / 2) ..
            ' refused): ' .. table.concat(reasons, '; '), ARGV[6], ARGV[7])
"""

# KEYS: job.  ARGV: partition ('' for none).  Work handed back by a process that cannot go
# on (its device context lost) for a fresh one of the same worker: RETURNED, or the status
# of a job that has ended; no refusal recorded, and the partition's attempts start over.
_HAND_BACK = """
local finished = over(KEYS[1])
if finished then return finished end
attempts_anew(KEYS[1], ARGV[1])
return '$RETURNED'
"""

_WORDS = {m.name: m.value for m in (*JobStatus, *Outcome)}

# KEYS: job.  ARGV: this worker's key ("<vk digest> <worker>").  The job's first recorded
# key (this one if none was), or nil if the job is gone.
_FIRST_KEY = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSETNX', KEYS[1], 'key', ARGV[1])
return redis.call('HGET', KEYS[1], 'key')
"""


def lua(body: str, keys: RedisKeys = DEFAULT_KEYS) -> str:
    """A script of this module with its words substituted (a word that is not a member
    fails here, not in Redis), for the namespace of ``keys``."""
    return Template(_LIB + body).substitute(_WORDS, PREFIX=keys.job_prefix,
                                             TOTALS=keys.totals)


class JobIdError(ValueError):
    """A job id that cannot name Redis keys safely."""


def check_job_id(job_id: str) -> str:
    if not isinstance(job_id, str) or not _JOB_ID.fullmatch(job_id):
        raise JobIdError(f"job_id: {job_id!r} must be 1-128 characters of letters, digits, "
                         "'.', '_' or '-', starting with a letter or digit")
    return job_id


def content_digest(proof_type: str, canonical_input: str) -> str:
    """What makes two submissions "the same job" for idempotency."""
    return hashlib.sha256(f"{proof_type}\0{canonical_input}".encode()).hexdigest()


@dataclass(frozen=True)
class JobState:
    job_id: str
    status: JobStatus
    proof_type: str
    partitions: int
    priority: str
    parts_done: int
    created: float
    started: float | None
    proved: float | None
    finished: float | None
    error: str | None
    setup: float | None = None  # since when the job waits for its key to be made
    request_id: str | None = None  # the request it answers (jobs from ``proofq grpc``)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def stage(self) -> str:
        """The status, or ``setup`` while a queued job's key is being made."""
        return "setup" if self.status == JobStatus.QUEUED and self.setup else self.status

    @property
    def queue_s(self) -> float | None:
        """Waiting before the first partition started."""
        return None if self.started is None else self.started - self.created

    @property
    def prove_s(self) -> float | None:
        """First partition started → last partition stored."""
        return None if self.proved is None or self.started is None else self.proved - self.started

    def to_json(self) -> dict:
        return {"job": self.job_id, "status": self.status, "proof_type": self.proof_type,
                "partitions": self.partitions, "parts_done": self.parts_done,
                "priority": self.priority, "created": self.created, "started": self.started,
                "proved": self.proved, "finished": self.finished, "error": self.error,
                "stage": self.stage, "setup": self.setup,
                "queue_s": self.queue_s, "prove_s": self.prove_s,
                **({"request_id": self.request_id} if self.request_id else {})}


def _time(value: bytes | None) -> float | None:
    return None if value is None else float(value)


class JobStore:
    """The scripted transitions of job state on one Redis connection."""

    def __init__(self, client: redis.Redis, *, ttl_s: int, results_maxlen: int,
                 keys: RedisKeys = DEFAULT_KEYS) -> None:
        self.redis = client
        self.ttl_s = ttl_s
        self.results_maxlen = results_maxlen
        self.keys = keys

        def register(body: str):
            return client.register_script(lua(body, keys))
        self._create = register(_CREATE)
        self._begin = register(_BEGIN)
        self._store_part = register(_STORE_PART)
        self._finish = register(_FINISH)
        self._stop = register(_STOP)
        self._withdraw = register(_WITHDRAW)
        self._refuse = register(_REFUSE)
        self._hand_back = register(_HAND_BACK)
        self._first_key = register(_FIRST_KEY)

    def key(self, job_id: str) -> str:
        return self.keys.job(job_id)

    def create(self, job_id: str, *, digest: str, proof_type: str, partitions: int,
               priority: str, input_json: str, former_digests: tuple[str, ...] = ()) -> Reply:
        """CREATED, EXISTS (same content: same job; ``former_digests``, the content's
        digests under the type's older names, count as the same) or CONFLICT."""
        return _reply(self._create(keys=[self.key(job_id), self.keys.jobs_index, self.keys.unsent],
                                   args=[digest, proof_type, partitions, priority, input_json,
                                         self.results_maxlen, *former_digests]))

    def withdraw(self, job_id: str) -> bool:
        """Take back a job whose message was never sent (queued, unclaimed): whether it was."""
        return bool(self._withdraw(keys=[self.key(job_id), self.keys.jobs_index, self.keys.unsent]))

    def first_key(self, job_id: str, mine: str) -> str | None:
        """The key the job's partitions are proved with: the first recorded (``mine`` if
        none was); None if the job is gone."""
        first = self._first_key(keys=[self.key(job_id)], args=[mine])
        return None if first is None else first.decode()

    def mark_sent(self, job_id: str) -> None:
        """The job's submit message is in the queue: the reaper need not send it."""
        self.redis.zrem(self.keys.unsent, job_id)

    def unsent(self, stored_before: float) -> list[str]:
        """Jobs stored before ``stored_before`` (Redis time) whose message was never sent."""
        return [j.decode() for j in self.redis.zrangebyscore(self.keys.unsent, "-inf",
                                                                 stored_before)]

    def begin_partition(self, job_id: str, partition: int, *, max_attempts: int
                        ) -> tuple[Reply, int]:
        """(RUN, attempt), (DUPLICATE, 0) if already proved, (EXHAUSTED, attempts) after
        ``max_attempts`` starts, or (status, 0) if the job is not proving."""
        outcome, attempt = self._begin(keys=[self.key(job_id)], args=[partition, max_attempts])
        return _reply(outcome), int(attempt)

    def store_part(self, job_id: str, partition: int, proof: bytes) -> Reply:
        """STORED, COMPLETE (this call completed the set), DUPLICATE, or the status."""
        return _reply(self._store_part(keys=[self.key(job_id)],
                                       args=[partition, proof.hex()]))

    def finish(self, job_id: str, proof: bytes) -> Reply:
        """Store the assembled proof and publish it, once: DONE, or the status found."""
        return _reply(self._finish(keys=[self.key(job_id), self.keys.results],
                                       args=[proof, proof.hex(), self.ttl_s,
                                             self.results_maxlen]))

    def fail(self, job_id: str, error: str) -> Reply:
        """FAILED, or how the job had ended already (MISSING if it never was)."""
        return self._stop_job(job_id, JobStatus.FAILED, error)

    def refuse(self, job_id: str, worker: str, reason: str, *, most: int, live_workers: str,
               live_s: float, partition: int | None = None) -> Reply:
        """Worker node ``worker`` cannot serve the job for ``reason``: RETURNED (its work goes
        back to the queue), FAILED ("no worker can serve it (N refused): reasons") once
        ``most`` distinct workers, or every worker seen in the last ``live_s`` (the sorted
        set ``live_workers``: node → last seen), have refused it, or the status of a job
        that has ended."""
        return _reply(self._refuse(
            keys=[self.key(job_id), self.keys.results, live_workers],
            args=[worker, reason, most, live_s, "" if partition is None else partition,
                  self.ttl_s, self.results_maxlen]))

    def hand_back(self, job_id: str, partition: int | None = None) -> Reply:
        """This process cannot go on, but its worker can (a fresh process): RETURNED, with
        no refusal recorded, or the status of a job that has ended."""
        return _reply(self._hand_back(keys=[self.key(job_id)],
                                      args=["" if partition is None else partition]))

    def refusals(self, job_id: str) -> dict[str, str]:
        """Worker node → why it gave the job's work back."""
        stored = self.redis.hgetall(self.key(job_id) + ":refusals")
        return {k.decode(): v.decode() for k, v in stored.items()}

    def cancel(self, job_id: str) -> Reply:
        """CANCELLED, or how the job had ended already (MISSING if it never was)."""
        return self._stop_job(job_id, JobStatus.CANCELLED, "cancelled by request")

    def _stop_job(self, job_id: str, status: JobStatus, error: str) -> Reply:
        return _reply(self._stop(keys=[self.key(job_id), self.keys.results],
                                     args=[status, error, self.ttl_s, self.results_maxlen]))

    def status(self, job_id: str) -> JobStatus | None:
        value = self.redis.hget(self.key(job_id), "status")
        return None if value is None else JobStatus(value.decode())

    def is_active(self, job_id: str) -> bool:
        return self.status(job_id) in ACTIVE

    def state(self, job_id: str) -> JobState | None:
        key = self.key(job_id)
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(key)
            pipe.hlen(key + ":parts")
            fields, parts_done = pipe.execute()
        if not fields:
            return None
        get = {k.decode(): v for k, v in fields.items()}
        return JobState(job_id=job_id, status=JobStatus(get["status"].decode()),
                        proof_type=get["proof_type"].decode(),
                        partitions=int(get["partitions"]), priority=get["priority"].decode(),
                        parts_done=parts_done, created=float(get["created"]),
                        started=_time(get.get("started")), proved=_time(get.get("proved")),
                        finished=_time(get.get("finished")),
                        error=get["error"].decode() if "error" in get else None,
                        setup=_time(get.get("setup")),
                        request_id=get["request_id"].decode() if "request_id" in get else None)

    def fanned_out(self, job_id: str) -> bool:
        return bool(self.redis.hexists(self.key(job_id), "fanned_out"))

    def fan_out_claimed(self, job_id: str) -> bool:
        """Whether a submit task has taken the job (its message was sent, then)."""
        return bool(self.redis.hexists(self.key(job_id), "fan_out_task"))

    def claim_fan_out(self, job_id: str, task_id: str) -> bool:
        """Whether ``task_id`` owns the job's fan-out: the first submit task to ask does,
        and keeps it when its message is delivered again after a crash; a duplicate submit
        message (a resubmission, a reclaimed intake request) does not."""
        key = self.key(job_id)
        self.redis.hsetnx(key, "fan_out_task", task_id)
        return self.redis.hget(key, "fan_out_task") == task_id.encode()

    def mark_fanned_out(self, job_id: str) -> None:
        self.redis.hset(self.key(job_id), "fanned_out", 1)

    def mark_setup(self, job_id: str, waiting: bool) -> None:
        """Whether the job waits for its key to be made (shown as stage ``setup``)."""
        if waiting:
            seconds, micros = self.redis.time()
            self.redis.hset(self.key(job_id), "setup", f"{seconds}.{micros:06d}")
        else:
            self.redis.hdel(self.key(job_id), "setup")

    def recent(self, count: int) -> list[JobState]:
        """The newest ``count`` jobs still stored, newest first."""
        ids = [raw.decode() for raw in self.redis.zrevrange(self.keys.jobs_index, 0, count - 1)]
        return [state for state in map(self.state, ids) if state is not None]

    def input_json(self, job_id: str) -> bytes | None:
        """The stored input (under ``:c1`` for a job stored by 0.1)."""
        current, former = self.redis.mget(self.key(job_id) + ":input", self.key(job_id) + ":c1")
        return current if current is not None else former

    def parts(self, job_id: str, partitions: int) -> list[bytes]:
        stored = self.redis.hgetall(self.key(job_id) + ":parts")
        return [bytes.fromhex(stored[str(p).encode()].decode()) for p in range(partitions)]

    def result(self, job_id: str) -> bytes | None:
        return self.redis.get(self.key(job_id) + ":result")

    def totals(self) -> dict[str, int]:
        """Jobs ended since the cluster began, by final status (every terminal status
        listed, 0 where none ended so)."""
        counted = self.redis.hgetall(self.keys.totals)
        return {status.value: int(counted.get(status.value.encode(), 0)) for status in TERMINAL}


def _reply(raw: bytes | str) -> Reply:
    """A script's reply as the member it names."""
    text = raw.decode() if isinstance(raw, bytes) else raw
    return JobStatus(text) if text in JobStatus.__members__.values() else Outcome(text)
