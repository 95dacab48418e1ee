"""The one owner of a worker process's resident proving keys (docs/ARCHITECTURE.md §8).

A process that serves several keys (two circuits, two snarkjs keys) keeps each loaded once
and resident on its backend only while the device has room for it. This owner holds every
key the process has loaded, in least-recently-used order, and for each resident one the
VRAM ledger's reservation of its bytes (bases, matrices and the backend's MSM window
tables; the tables of all resident keys share the backend's one allowance per process,
``PROOFQ_MSM_TABLE_BYTES``, ``gpu.backend``).

Making a key resident (in the memory phase, under the GPU's memory lock) reserves its
bytes within the ledger's budget. When the ledger refuses, the least recently used other
resident key is evicted — its device buffers freed, its reservation handed back, its host
copy dropped (loaded again from disk if a job needs it later) — and the reservation tried
again; a key alone is reserved anyway (forced), since a partition cannot be proved without
its key, and its bytes still count against everyone's pre-staging. A reservation that
lapsed while the process stalled is made again.

A key in use by a partition (``using``) is never an eviction's victim, and a request to let
it go (``let_go``: the gRPC door's EvictSRS, through the worker) is carried out when its
last user ends. The owner is shared by the process's proving thread and the thread that
carries out such requests (``workers.key_requests``): every change is made under its lock,
and a key is loaded from disk outside it.

A key the owner's ``pin`` accepts when it first becomes resident (the runtime's: small
keys, up to ``PROOFQ_PINNED_KEY_BYTES`` in all: a WinningPoSt key, 0.23 GB at 32 GiB) is
pinned: never chosen to make room for another key (a PoRep key that does not fit beside it
is reserved forced instead), so the critical band never waits for its key to load from
disk again; only ``evict`` by name (EvictSRS included) or ``close`` lets it go.

It works with any backend (``snark.backend.ProverBackend``: ``prepare``, ``evict``,
``extra_resident_bytes``); the ledger comes in as ``reserve`` (``workers.ledger``), since a
GPU backend knows nothing of Redis.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from snark.backend import ProverBackend
from snark.keys import ProvingKey


class Hold(Protocol):
    """A ledger reservation (``workers.ledger.Reservation``)."""

    @property
    def lost_reason(self) -> str | None: ...

    def release(self) -> None: ...


class Pin(Protocol):
    def __call__(self, key: ProvingKey) -> bool:
        """Whether ``key``, about to become resident, stays so for good."""


class Reserve(Protocol):
    def __call__(self, key: ProvingKey, *, force: bool) -> Hold | None:
        """The ledger's reservation for ``key`` resident, or None if it does not fit."""


@dataclass(eq=False)
class _Entry:
    key: ProvingKey
    hold: Hold | None = None  # set while the key is resident
    pinned: bool = False  # never evicted to make room (decided when first resident)


#: What a key is named by (the worker's: proof type and key stem).
Name = TypeVar("Name", bound=Hashable)


class Residency(Generic[Name]):
    """One process's loaded keys, by name, and the resident ones' reservations."""

    def __init__(self, backend: ProverBackend, reserve: Reserve, pin: Pin | None = None) -> None:
        self.backend = backend
        self._reserve = reserve
        self._pin = pin
        self._entries: OrderedDict[Name, _Entry] = OrderedDict()  # least recent first
        self._users: Counter[Name] = Counter()  # partitions (and preloads) using a key now
        self._let_go: set[Name] = set()  # to evict when their last user ends
        self._lock = threading.RLock()

    def key(self, name: Name, load: Callable[[], ProvingKey]) -> ProvingKey:
        """The key named ``name``, loaded by ``load()`` unless this process holds it (loaded
        outside the lock; a key another thread loaded meanwhile wins)."""
        with self._lock:
            entry = self._entries.get(name)
            if entry is not None:
                self._entries.move_to_end(name)
                return entry.key
        loaded = load()
        with self._lock:
            entry = self._entries.setdefault(name, _Entry(loaded))
            self._entries.move_to_end(name)
            return entry.key

    def make_resident(self, key: ProvingKey, backend: ProverBackend | None = None) -> None:
        """``key`` (from ``key``) resident on ``backend`` (this owner's backend, or a view of
        it such as the fenced one) with its bytes reserved, evicting as the ledger needs."""
        with self._lock:
            name, entry = self._entry(key)
            self._entries.move_to_end(name)
            if entry.hold is not None and entry.hold.lost_reason is not None:
                entry.hold.release()  # lapsed while this process stalled: reserve again
                entry.hold = None
            if entry.hold is None:
                entry.pinned = entry.pinned or (self._pin is not None and self._pin(key))
                entry.hold = self._admit(name, key)
            (backend or self.backend).prepare(key)

    def resident(self) -> list[ProvingKey]:
        """The resident keys, least recently used first."""
        with self._lock:
            return [e.key for e in self._entries.values() if e.hold is not None]

    def pinned(self) -> list[ProvingKey]:
        """The pinned keys."""
        with self._lock:
            return [e.key for e in self._entries.values() if e.pinned]

    def resident_by_name(self) -> dict[Name, ProvingKey]:
        """The resident keys by the names ``key`` was given."""
        with self._lock:
            return {n: e.key for n, e in self._entries.items() if e.hold is not None}

    def evict(self, name: Name) -> None:
        """Free the key's device state, hand its reservation back, drop it."""
        with self._lock:
            entry = self._entries.pop(name)
            self._let_go.discard(name)
            self.backend.evict(entry.key)
            if entry.hold is not None:
                entry.hold.release()

    def close(self) -> None:
        """Evict every key (a process that stops gives everything back)."""
        with self._lock:
            while self._entries:
                self.evict(next(iter(self._entries)))

    @contextmanager
    def using(self, name: Name) -> Iterator[None]:
        """While the block runs the key named ``name`` is in use: no eviction takes it, and a
        ``let_go`` asked meanwhile is carried out when its last user ends."""
        with self._lock:
            self._users[name] += 1
        try:
            yield
        finally:
            with self._lock:
                self._users[name] -= 1
                if self._users[name] <= 0:
                    del self._users[name]
                    if name in self._let_go and name in self._entries:
                        self.evict(name)
                    self._let_go.discard(name)

    def let_go(self, name: Name) -> tuple[ProvingKey, bool] | None:
        """Evict the key named ``name`` now, or, while it is in use, when its last user ends:
        (the key, whether it waits for its users); None if it is not resident."""
        with self._lock:
            entry = self._entries.get(name)
            if entry is None or entry.hold is None:
                return None
            if self._users[name]:
                self._let_go.add(name)
                return entry.key, True
            self.evict(name)
            return entry.key, False

    def _admit(self, name: Name, key: ProvingKey) -> Hold | None:
        while (hold := self._reserve(key, force=False)) is None:
            victim = next((n for n, e in self._entries.items()
                           if n != name and e.hold is not None and not e.pinned
                           and not self._users[n]), None)
            if victim is None:
                return self._reserve(key, force=True)
            self.evict(victim)
        return hold

    def _entry(self, key: ProvingKey) -> tuple[Name, _Entry]:
        for name, entry in self._entries.items():
            if entry.key is key:
                return name, entry
        raise KeyError(f"key {key.circuit_id}: not one of this process's keys (Residency.key)")
