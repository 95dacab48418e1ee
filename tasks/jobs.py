"""Job state in Redis (DESIGN.md §6); every transition is one Lua script, so it is atomic.

Keys of job ``<id>``:

- ``proofq:job:<id>``         hash: status, proof_type, partitions, priority, digest,
                              created / started / proved / finished (Redis server time,
                              seconds), error (``partition P: phase: reason``),
                              fan_out_task (the submit task that owns the fan-out),
                              fanned_out (set once the partition tasks are sent)
- ``proofq:job:<id>:parts``   hash: partition → its part, hex (``ProofType.part``: the
                              192-byte proof, for groth16 followed by its public signals)
- ``proofq:job:<id>:attempts`` hash: partition → times a worker started proving it
- ``proofq:job:<id>:c1``      the validated input JSON, dropped when the job ends
- ``proofq:job:<id>:result``  the assembled result (``ProofType.assemble``: porep's proofs
                              concatenated in order, groth16's snarkjs JSON)
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

import redis

PREFIX = "proofq:job:"
RESULTS_STREAM = "proofq:results"

ACTIVE = ("queued", "proving", "assembling")
TERMINAL = ("done", "failed", "cancelled")

_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

# Shared Lua prelude: server time and the end-of-life of a job's keys.
_LIB = """
local function now()
  local t = redis.call('TIME')
  return string.format('%d.%06d', t[1], t[2])
end
local function retire(job, ttl)
  for _, key in ipairs({job, job .. ':parts', job .. ':attempts', job .. ':result'}) do
    redis.call('EXPIRE', key, ttl)
  end
  redis.call('DEL', job .. ':c1')
end
"""

# KEYS: job.  ARGV: digest, proof_type, partitions, priority, c1 json.
_CREATE = """
local digest = redis.call('HGET', KEYS[1], 'digest')
if digest then
  if digest == ARGV[1] then return 'exists' end
  return 'conflict'
end
redis.call('HSET', KEYS[1], 'status', 'queued', 'digest', ARGV[1], 'proof_type', ARGV[2],
           'partitions', ARGV[3], 'priority', ARGV[4], 'created', now())
redis.call('SET', KEYS[1] .. ':c1', ARGV[5])
return 'created'
"""

# KEYS: job.  ARGV: partition, most attempts.  {'run', attempt} when the partition should
# be proved now; every start counts, so a partition that keeps killing its worker (and is
# re-delivered each time) ends as 'exhausted' instead of looping.
_BEGIN = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'missing', 0} end
if status ~= 'queued' and status ~= 'proving' then return {status, 0} end
if redis.call('HEXISTS', KEYS[1] .. ':parts', ARGV[1]) == 1 then return {'duplicate', 0} end
local attempt = redis.call('HINCRBY', KEYS[1] .. ':attempts', ARGV[1], 1)
if attempt > tonumber(ARGV[2]) then return {'exhausted', attempt - 1} end
if status == 'queued' then
  redis.call('HSET', KEYS[1], 'status', 'proving', 'started', now())
end
return {'run', attempt}
"""

# KEYS: job.  ARGV: partition, proof hex.  Only the call that completes the set gets
# 'complete' (and flips the job to assembling); a part already stored is never replaced.
_STORE_PART = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'queued' and status ~= 'proving' then return status or 'missing' end
local parts = KEYS[1] .. ':parts'
if redis.call('HSETNX', parts, ARGV[1], ARGV[2]) == 0 then return 'duplicate' end
if redis.call('HLEN', parts) < tonumber(redis.call('HGET', KEYS[1], 'partitions')) then
  return 'stored'
end
redis.call('HSET', KEYS[1], 'status', 'assembling', 'proved', now())
return 'complete'
"""

# KEYS: job, results stream.  ARGV: proof bytes, proof hex, ttl, stream cap.
_FINISH = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'assembling' then return status or 'missing' end
redis.call('SET', KEYS[1] .. ':result', ARGV[1])
redis.call('HSET', KEYS[1], 'status', 'done', 'finished', now())
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*',
           'job', string.sub(KEYS[1], string.len('""" + PREFIX + """') + 1),
           'status', 'done', 'proof', ARGV[2])
retire(KEYS[1], ARGV[3])
return 'done'
"""

# KEYS: job, results stream.  ARGV: new status (failed|cancelled), error, ttl, stream cap.
_STOP = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 'missing' end
if status == 'done' or status == 'failed' or status == 'cancelled' then return status end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'error', ARGV[2], 'finished', now())
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*',
           'job', string.sub(KEYS[1], string.len('""" + PREFIX + """') + 1),
           'status', ARGV[1], 'error', ARGV[2])
retire(KEYS[1], ARGV[3])
return ARGV[1]
"""


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
    status: str
    proof_type: str
    partitions: int
    priority: str
    parts_done: int
    created: float
    started: float | None
    proved: float | None
    finished: float | None
    error: str | None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

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
                "queue_s": self.queue_s, "prove_s": self.prove_s}


def _time(value: bytes | None) -> float | None:
    return None if value is None else float(value)


class JobStore:
    """The scripted transitions of job state on one Redis connection."""

    def __init__(self, client: redis.Redis, *, ttl_s: int, results_maxlen: int) -> None:
        self.redis = client
        self.ttl_s = ttl_s
        self.results_maxlen = results_maxlen
        def register(body: str):
            return client.register_script(_LIB + body)
        self._create = register(_CREATE)
        self._begin = register(_BEGIN)
        self._store_part = register(_STORE_PART)
        self._finish = register(_FINISH)
        self._stop = register(_STOP)


    @staticmethod
    def key(job_id: str) -> str:
        return PREFIX + job_id

    def create(self, job_id: str, *, digest: str, proof_type: str, partitions: int,
               priority: str, input_json: str) -> str:
        """'created', 'exists' (same content: same job) or 'conflict' (different content)."""
        return self._text(self._create(keys=[self.key(job_id)],
                                       args=[digest, proof_type, partitions, priority,
                                             input_json]))

    def begin_partition(self, job_id: str, partition: int, *, max_attempts: int
                        ) -> tuple[str, int]:
        """('run', attempt), ('duplicate', 0) if already proved, ('exhausted', attempts)
        after ``max_attempts`` starts, or (status, 0) if the job is not proving."""
        outcome, attempt = self._begin(keys=[self.key(job_id)], args=[partition, max_attempts])
        return self._text(outcome), int(attempt)

    def store_part(self, job_id: str, partition: int, proof: bytes) -> str:
        """'stored', 'complete' (this call completed the set), 'duplicate', or the status."""
        return self._text(self._store_part(keys=[self.key(job_id)],
                                           args=[partition, proof.hex()]))

    def finish(self, job_id: str, proof: bytes) -> str:
        """Store the assembled proof and publish it, once: 'done', or the status found."""
        return self._text(self._finish(keys=[self.key(job_id), RESULTS_STREAM],
                                       args=[proof, proof.hex(), self.ttl_s,
                                             self.results_maxlen]))

    def fail(self, job_id: str, error: str) -> str:
        return self._stop_job(job_id, "failed", error)

    def cancel(self, job_id: str) -> str:
        return self._stop_job(job_id, "cancelled", "cancelled by request")

    def _stop_job(self, job_id: str, status: str, error: str) -> str:
        return self._text(self._stop(keys=[self.key(job_id), RESULTS_STREAM],
                                     args=[status, error, self.ttl_s, self.results_maxlen]))

    def status(self, job_id: str) -> str | None:
        value = self.redis.hget(self.key(job_id), "status")
        return None if value is None else value.decode()

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
        return JobState(job_id=job_id, status=get["status"].decode(),
                        proof_type=get["proof_type"].decode(),
                        partitions=int(get["partitions"]), priority=get["priority"].decode(),
                        parts_done=parts_done, created=float(get["created"]),
                        started=_time(get.get("started")), proved=_time(get.get("proved")),
                        finished=_time(get.get("finished")),
                        error=get["error"].decode() if "error" in get else None)

    def fanned_out(self, job_id: str) -> bool:
        return bool(self.redis.hexists(self.key(job_id), "fanned_out"))

    def claim_fan_out(self, job_id: str, task_id: str) -> bool:
        """Whether ``task_id`` owns the job's fan-out: the first submit task to ask does,
        and keeps it when its message is delivered again after a crash; a duplicate submit
        message (a resubmission, a reclaimed intake request) does not."""
        key = self.key(job_id)
        self.redis.hsetnx(key, "fan_out_task", task_id)
        return self.redis.hget(key, "fan_out_task") == task_id.encode()

    def mark_fanned_out(self, job_id: str) -> None:
        self.redis.hset(self.key(job_id), "fanned_out", 1)

    def input_json(self, job_id: str) -> bytes | None:
        return self.redis.get(self.key(job_id) + ":c1")

    def parts(self, job_id: str, partitions: int) -> list[bytes]:
        stored = self.redis.hgetall(self.key(job_id) + ":parts")
        return [bytes.fromhex(stored[str(p).encode()].decode()) for p in range(partitions)]

    def result(self, job_id: str) -> bytes | None:
        return self.redis.get(self.key(job_id) + ":result")

    @staticmethod
    def _text(reply: bytes | str) -> str:
        return reply.decode() if isinstance(reply, bytes) else reply
