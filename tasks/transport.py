"""kombu's Redis transport, made to wait out a Redis that refuses writes.

kombu takes a message with BRPOP (allowed when Redis is out of memory: it frees memory) and
then records it in its ``unacked`` hash (refused then). The error is not a connection error,
so Celery's consumer treats it as fatal: the worker's main process exits and the popped
message is in no queue and not in ``unacked`` — nothing ever brings it back. Here:

- ``append`` (the record) keeps the message in hand and tries again, with a doubling pause
  and a rate-limited log line, until Redis takes it: a message is never dropped between
  the pop and its record (it is lost only if this process dies during the wait);
- a BRPOP refused (a read-only replica, an ACL refusal: nothing was popped) waits the same
  way and then reads as "no message", so the consumer stays up and polls again;
- kombu's periodic chores that write (the restore of messages past the visibility timeout,
  the refresh of expiring queues' bindings) skip a round that Redis refuses, with a log
  line at most every 30 s instead of a traceback every second;
- in a worker, the declaration of the queues and their bindings, when its consumer starts
  or restarts, waits the same way (a producer's is refused at once); before, ``Unrecoverable
  error: OutOfMemoryError`` from the ``LLEN`` in kombu's queue declaration, and the worker
  exited.

The worker's main loop blocks while it waits: nothing it could do would be recorded.
``celery_config`` names this transport for the app (``broker_transport``).

It also keeps a worker's critical slots (``--critical-slots N``, ``PROOFQ_CRITICAL_SLOTS``):
a worker holds at most its prefetch count of messages (its processes, acks late), and
while it holds prefetch − N messages of other bands its BRPOP names only the critical
band's lists, so N of its processes are always free for a WinningPoSt (which would
otherwise wait for a PoRep partition to end) and a busy process never holds a critical
message reserved.
"""

from __future__ import annotations

import logging

import redis
from kombu.transport import redis as kombu_redis
from kombu.transport.virtual import Empty

from tasks.application import PRIORITIES, PRIORITY_STEPS
from workers.redis_faults import Backoff, refuses_writes

log = logging.getLogger(__name__)

#: The critical band's transport steps: its own and the two behind it.
CRITICAL_STEPS = [step for step in PRIORITY_STEPS if step < PRIORITIES["high"]]


def _until_taken(backoff: Backoff, call, *args, **kwargs):
    """``call(*args, **kwargs)``, again after ``backoff``'s pause each time Redis refuses
    it."""
    while True:
        try:
            done = call(*args, **kwargs)
            backoff.reset()
            return done
        except redis.ResponseError as exc:
            if not refuses_writes(exc):
                raise
            backoff.wait(exc)


class QoS(kombu_redis.QoS):
    def append(self, message, delivery_tag) -> None:
        _until_taken(Backoff(log, f"message {delivery_tag} popped, waiting to record it"),
                     super().append, message, delivery_tag)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._refused = Backoff(log, "restore of timed-out messages skipped")

    def restore_visible(self, *args, **kwargs) -> None:
        try:
            super().restore_visible(*args, **kwargs)
        except redis.ResponseError as exc:
            if not refuses_writes(exc):
                raise
            self._refused.note(exc)


class Channel(kombu_redis.Channel):
    QoS = QoS
    #: kombu clamps a message's priority to 0-9; proofq's steps go further (four priorities
    #: of three steps each, ``tasks.application``).
    max_priority = max(PRIORITY_STEPS)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._refused = Backoff(log, "consumer: BRPOP refused")
        self._bindings_refused = Backoff(log, "refresh of queue bindings skipped")
        self._declaring = Backoff(log, "declaring the queues waits for Redis to take writes")

    #: Set in worker processes (``tasks.worker``): a worker waits until Redis takes the
    #: declaration of its queues; a producer is told at once (its submit is refused and
    #: taken back, nothing stored).
    wait_to_declare = False

    def queue_declare(self, *args, **kwargs):
        if not self.wait_to_declare:
            return super().queue_declare(*args, **kwargs)
        return _until_taken(self._declaring, super().queue_declare, *args, **kwargs)

    def _queue_bind(self, *args, **kwargs):
        # The write of a binding (kombu records it in its own state first, so a second
        # ``queue_bind`` would not write it again: the wait is here, below that).
        if not self.wait_to_declare:
            return super()._queue_bind(*args, **kwargs)
        return _until_taken(self._declaring, super()._queue_bind, *args, **kwargs)

    def maybe_refresh_binding_expiry(self) -> None:
        try:
            super().maybe_refresh_binding_expiry()
        except redis.ResponseError as exc:
            if not refuses_writes(exc):
                raise
            self._bindings_refused.note(exc)

    #: Set in worker processes (``tasks.worker``): how many of the worker's processes only
    #: critical messages may take.
    critical_slots = 0

    def _brpop_start(self, timeout=None):
        if not self._only_critical():
            return super()._brpop_start(timeout)
        steps, self.priority_steps = self.priority_steps, CRITICAL_STEPS
        try:
            return super()._brpop_start(timeout)
        finally:
            self.priority_steps = steps

    def _only_critical(self) -> bool:
        """True while the messages of other bands in hand fill every slot but the critical
        ones."""
        prefetch = self.qos.prefetch_count
        if not self.critical_slots or not prefetch:
            return False
        dirty = self.qos._dirty  # acknowledged, not yet flushed from the delivered ones
        others = sum(1 for tag, message in self.qos._delivered.items()
                     if tag not in dirty and _step(message) not in CRITICAL_STEPS)
        return others >= prefetch - self.critical_slots

    def _brpop_read(self, **options):
        try:
            delivered = super()._brpop_read(**options)
        except redis.ResponseError as exc:
            if not refuses_writes(exc):
                raise
            self._refused.wait(exc)  # nothing was popped: poll again after the pause
            raise Empty() from None
        self._refused.reset()
        return delivered


def _step(message) -> int | None:
    try:
        return int(message.properties["priority"])
    except (KeyError, TypeError, ValueError):
        return None  # no priority: the transport puts it in step 0's list, but it was not
                     # sent as critical (proofq sends every message with one)


class Transport(kombu_redis.Transport):
    Channel = Channel
