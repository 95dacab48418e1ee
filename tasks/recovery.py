"""A dead worker's messages back in the queue within ``reap_after_s``, retried ones in front.

Celery's Redis transport keeps every delivered message that is not acknowledged yet (late
acks: until its task has ended) in the ``unacked`` hash, and gives it back to the queue only
after the visibility timeout. That timeout must exceed the longest task, so a worker host
that dies would strand its partitions for hours. Two things here shorten that to about a
minute without ever taking work away from a live worker:

- **Claims.** Every worker's main process renews, each ``heartbeat_s``, a claim
  ``proofq:claim:<delivery tag>`` (lease ``reap_after_s``) on each message it holds:
  running, reserved or scheduled. A worker that dies stops renewing; its claims lapse.
- **Reaper.** The same timer then looks at the messages delivered more than ``reap_after_s``
  ago and puts each one that nobody claims back at the *front* of its priority (kombu's own
  transactional restore), marked redelivered. Every worker runs it; a restore is atomic, so
  two reapers restore a message once. A reaper starts reaping two heartbeats after it
  starts, but after an outage it has seen only once its connection has worked for a whole
  ``reap_after_s``, so that every live worker has renewed its claims before anyone reaps.

- **Unsent jobs.** A job stored whose submit message was never sent (its producer died or
  lost Redis in between; ``tasks.submission``) is listed in ``proofq:unsent``; the same
  round sends the message of each one listed longer than ``reap_after_s``.

A message restored while its first delivery still runs somewhere (a worker stalled longer
than the lease) is proved twice at worst; the job's Redis scripts keep the result single.

Celery also requeues a task whose pool process died (``task_reject_on_worker_lost``), but
kombu pushes a rejected message to the back of its queue, behind everything queued since.
``FrontRequeueRequest`` restores it to the front instead, where it was.
"""

from __future__ import annotations

import logging
import time

import redis
from celery import bootsteps
from celery.worker import state
from celery.worker.request import Request
from kombu.transport.redis import Channel as RedisChannel

from config.redis_keys import DEFAULT_KEYS, RedisKeys
from config.settings import get_settings
from tasks.application import app
from tasks.jobs import JobStatus, JobStore
from workers.redis_faults import refuses_writes
from tasks.submission import send_submit
from workers.quarantine import Quarantine, mark_alive

log = logging.getLogger(__name__)

def held_delivery_tags() -> set[str]:
    """Delivery tags of the messages this worker holds: running, reserved or scheduled."""
    held = set()
    for group in (state.active_requests, state.reserved_requests, state.scheduled_requests):
        for request in tuple(group):
            tag = getattr(request.message, "delivery_tag", None)
            if tag:
                held.add(tag)
    return held


class Reaper:
    """Renew this worker's claims, then restore the messages nobody claims (one round)."""

    def __init__(self, app, node: str, client: redis.Redis, *, reap_after_s: float,
                 settle_s: float, queues: list[str] | None = None,
                 keys: RedisKeys = DEFAULT_KEYS) -> None:
        self.app = app
        self.node = node
        self.keys = keys
        self.queues = queues or []  # the queues this worker consumes (``mark_alive``)
        self.client = client
        self.store = JobStore(client, ttl_s=1, results_maxlen=1, keys=keys)  # reads, marks sent
        self.reap_after_s = reap_after_s
        options = app.conf.broker_transport_options or {}
        # read here without kombu, so with kombu's prefix (config.redis_keys)
        self.unacked_index_key = keys.broker_prefix + options.get(
            "unacked_index_key", RedisChannel.unacked_index_key)
        self._patience = settle_s  # after a start: live workers' claims are being renewed
        self._connected_since: float | None = None

    def round(self, held: set[str]) -> int:
        """Claim ``held``, reap what is unclaimed; return how many messages were restored."""
        try:
            self._claim(held)
        except redis.RedisError as exc:
            if self._connected_since is not None:
                log.warning("reaper: Redis unreachable, claims not renewed: %s", exc)
            self._connected_since = None
            self._patience = self.reap_after_s  # after an outage: everyone's may have lapsed
            return 0
        now = time.monotonic()
        if self._connected_since is None:
            self._connected_since = now
        if now - self._connected_since < self._patience:
            return 0
        try:
            return self._reap() + self._send_unsent()
        except (redis.RedisError, OSError) as exc:
            log.warning("reaper: round failed: %s", exc)
            return 0

    def _claim(self, held: set[str]) -> None:
        lease_ms = int(self.reap_after_s * 1000)
        with self.client.pipeline(transaction=False) as pipe:
            for tag in held:
                pipe.set(self.keys.claim(tag), self.node, px=lease_ms)
            mark_alive(pipe, self.node, self.queues, self.keys)  # who could serve work given back
            pipe.ping()
            pipe.execute()

    def _reap(self) -> int:
        before = time.time() - self.reap_after_s
        tags = [t.decode() for t in self.client.zrangebyscore(self.unacked_index_key,
                                                              "-inf", before)]
        if not tags:
            return 0
        with self.client.pipeline(transaction=False) as pipe:
            for tag in tags:
                pipe.exists(self.keys.claim(tag))
            orphans = [tag for tag, claimed in zip(tags, pipe.execute()) if not claimed]
        if not orphans:
            return 0
        with self.app.connection_for_write() as connection:
            qos = connection.default_channel.qos
            for tag in orphans:
                qos.restore_by_tag(tag)  # the pop end of its priority list: next out
                log.warning("reaper: message %s had no live worker: back in its queue", tag)
        return len(orphans)

    def _send_unsent(self) -> int:
        """Send the submit message of each job stored ``reap_after_s`` ago and never sent."""
        stored_before = self.client.time()[0] - self.reap_after_s
        sent = 0
        for job_id in self.store.unsent(stored_before):
            state = self.store.state(job_id)
            if (state is not None and state.status == JobStatus.QUEUED
                    and not self.store.fan_out_claimed(job_id)):
                send_submit(self.app, job_id, state.priority)
                log.warning("reaper: job %s was stored but never sent: sent now", job_id)
                sent += 1
            self.store.mark_sent(job_id)
        return sent

    def close(self) -> None:
        self.client.close()


class Reaping(bootsteps.StartStopStep):
    """Runs the ``Reaper`` every ``heartbeat_s`` on the worker's timer (main process)."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **options) -> None:
        super().__init__(worker, **options)
        self.reaper: Reaper | None = None
        self.entry = None

    def start(self, worker) -> None:
        settings = get_settings()
        client = redis.Redis.from_url(worker.app.conf.broker_url, socket_timeout=10,
                                      socket_connect_timeout=5)
        queues = worker.app.amqp.queues
        consumed = sorted((queues.consume_from or queues).keys())
        self.reaper = Reaper(worker.app, worker.hostname, client,
                             reap_after_s=settings.reap_after_s,
                             settle_s=2 * settings.heartbeat_s, queues=consumed,
                             keys=RedisKeys.of(settings))
        try:  # a worker (re)started: alive now, its quarantines lifted (perhaps it is fixed)
            mark_alive(client, worker.hostname, consumed, self.reaper.keys)
            Quarantine(client, worker.hostname, self.reaper.keys,
                       after=settings.quarantine_after,
                       retry_s=settings.quarantine_retry_s).clear()
        except redis.RedisError as exc:
            log.warning("could not mark this worker alive: %s", exc)
        self.entry = worker.timer.call_repeatedly(
            settings.heartbeat_s, lambda: self.reaper.round(held_delivery_tags()))

    def stop(self, worker) -> None:
        if self.entry is not None:
            self.entry.cancel()
        if self.reaper is not None:
            self.reaper.close()


class FrontRequeueRequest(Request):
    """A request whose requeue (its pool process died) puts the message back in front."""

    def reject(self, requeue: bool = False) -> None:
        # Celery sets ``acknowledged`` in a method mypy cannot follow
        if requeue and not self.acknowledged:  # type: ignore[has-type]
            try:
                self.message.channel.qos.restore_by_tag(self.message.delivery_tag)
            except (*self.connection_errors, redis.ResponseError) as exc:
                if isinstance(exc, redis.ResponseError) and not refuses_writes(exc):
                    raise
                # Redis is gone or refuses writes: leave the message unacknowledged, the
                # reaper restores it.
                log.warning("requeue of %s failed (%s): left to the reaper", self.id, exc)
                self.acknowledged = True
                return
            requeue = False  # restored already: only forget the delivery
        super().reject(requeue=requeue)


app.steps["worker"].add(Reaping)
