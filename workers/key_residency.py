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

A key the owner's ``transient`` names when it is first loaded (the runtime's: WindowPoSt's,
proved a few partitions a deadline beside PoRep's steady work) has a transient device part:
its bulk stays in host memory (``ProverBackend.mark_transient``: its bases stream), its
device part is made resident in a partition's memory phase like any key's and given back,
with its reservation, when its last user's compute phase ends (``done_with_device``; a
failed user's when its use ends). Its host part stays with the process until
``evict`` or ``close``, so the next partition never waits for it to be built again. It is
never pinned, never evicts another key for its room (it is reserved forced instead: the key
it would evict stays for the GPU's steady work), and is never a victim between partitions:
it holds nothing on the device then.

It works with any backend (``snark.backend.ProverBackend``: ``prepare``, ``evict``,
``shed``, ``mark_transient``, ``extra_resident_bytes``); the ledger comes in as ``reserve``
(``workers.ledger``), since a GPU backend knows nothing of Redis.
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
    transient: bool = False  # device part given back after each partition (decided at load)

    @property
    def held(self) -> bool:
        """Resident, or a transient key kept on the host between its partitions."""
        return self.hold is not None or self.transient


#: What a key is named by (the worker's: proof type and key stem).
Name = TypeVar("Name", bound=Hashable)


class Residency(Generic[Name]):
    """One process's loaded keys, by name, and the resident ones' reservations."""

    def __init__(self, backend: ProverBackend, reserve: Reserve, pin: Pin | None = None,
                 transient: Callable[[Name], bool] | None = None) -> None:
        self.backend = backend
        self._reserve = reserve
        self._pin = pin
        self._transient = transient
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
            entry = self._entries.get(name)
            if entry is None:
                transient = self._transient is not None and self._transient(name)
                entry = self._entries[name] = _Entry(loaded, transient=transient)
                if transient:
                    self.backend.mark_transient(loaded)
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
                entry.pinned = entry.pinned or (not entry.transient and self._pin is not None
                                                and self._pin(key))
                entry.hold = self._admit(name, entry)
            (backend or self.backend).prepare(key)

    def is_transient(self, key: ProvingKey) -> bool:
        """Whether ``key`` (from ``key``) has a transient device part."""
        with self._lock:
            return self._entry(key)[1].transient

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

    def held_by_name(self) -> dict[Name, ProvingKey]:
        """The keys this process holds ready, by name: the resident ones and the transient
        ones (between their partitions, their host part)."""
        with self._lock:
            return {n: e.key for n, e in self._entries.items() if e.held}

    def evict(self, name: Name) -> None:
        """Free the key's state on the device and on the host (a transient key's pinned
        rows too), hand its reservation back, drop it."""
        with self._lock:
            entry = self._entries.pop(name)
            self._let_go.discard(name)
            self.backend.evict(entry.key)
            if entry.hold is not None:
                entry.hold.release()

    def done_with_device(self, key: ProvingKey) -> None:
        """A user of ``key`` is done with its device part (a partition's compute phase
        ended, the compute lock still held; a preload made it resident, the memory lock
        held): a transient key's device part and reservation go back now, unless another
        user still needs them (then when the last one ends)."""
        with self._lock:
            name, entry = self._entry(key)
            if entry.transient and self._users[name] <= 1:
                self._shed(entry)

    def _shed(self, entry: _Entry) -> None:
        """The device memory back first, then the reservation: the room another process
        is then granted is free."""
        if entry.hold is None:
            return
        self.backend.shed(entry.key)
        entry.hold.release()
        entry.hold = None

    def close(self) -> None:
        """Evict every key (a process that stops gives everything back)."""
        with self._lock:
            while self._entries:
                self.evict(next(iter(self._entries)))

    @contextmanager
    def using(self, name: Name) -> Iterator[None]:
        """While the block runs the key named ``name`` is in use: no eviction takes it, and a
        ``let_go`` asked meanwhile is carried out when its last user ends; a transient key
        still resident then (its last user failed, or preloaded it) is shed."""
        with self._lock:
            self._users[name] += 1
        try:
            yield
        finally:
            with self._lock:
                self._users[name] -= 1
                if self._users[name] <= 0:
                    del self._users[name]
                    entry = self._entries.get(name)
                    if name in self._let_go and entry is not None:
                        self.evict(name)
                    elif entry is not None and entry.transient:
                        self._shed(entry)
                    self._let_go.discard(name)

    def let_go(self, name: Name) -> tuple[ProvingKey, bool] | None:
        """Evict the key named ``name`` now, or, while it is in use, when its last user ends:
        (the key, whether it waits for its users); None if it is not held (``held_by_name``)."""
        with self._lock:
            entry = self._entries.get(name)
            if entry is None or not entry.held:
                return None
            if self._users[name]:
                self._let_go.add(name)
                return entry.key, True
            self.evict(name)
            return entry.key, False

    def _admit(self, name: Name, entry: _Entry) -> Hold | None:
        """The key's reservation, evicting the least recently used other resident keys as
        the ledger needs; forced once none is left. A transient key evicts none: it holds
        its room for one partition, the key it would evict stays for the GPU's steady work."""
        key = entry.key
        while (hold := self._reserve(key, force=False)) is None:
            victim = None if entry.transient else next(
                (n for n, e in self._entries.items()
                 if n != name and e.hold is not None and not e.pinned and not self._users[n]),
                None)
            if victim is None:
                return self._reserve(key, force=True)
            self.evict(victim)
        return hold

    def _entry(self, key: ProvingKey) -> tuple[Name, _Entry]:
        for name, entry in self._entries.items():
            if entry.key is key:
                return name, entry
        raise KeyError(f"key {key.circuit_id}: not one of this process's keys (Residency.key)")
