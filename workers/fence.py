"""The backend as a worker uses it under a lock (docs/ARCHITECTURE.md §4): the lock's lease
checked before every call that touches the device, so a worker whose lease expired stops
before touching the GPU again (the next holder may be using it). The same place may stop a
cancelled partition (``stop``): between device calls, never inside one.

``FencedBackend`` implements ``snark.backend.ProverBackend`` method by method, with the
same signatures (keyword arguments pass through like any others); a proof type's device
steps come back fenced the same way, by their capability's own fenced form
(``Capability.fenced``). Freeing memory the worker holds is always allowed, lease or not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np

from snark.backend import Capability, E, G1Basis, G2Basis, ProofMsmBackend, ProverBackend
from snark.curve import G1Point, G2Point
from snark.keys import ProvingKey
from workers.locks import HeldLock


class FencedBackend:
    """``backend`` with ``held``'s lease checked before each device call."""

    def __init__(self, backend: ProverBackend, held: HeldLock,
                 stop: Callable[[], None] | None = None) -> None:
        self._backend = backend
        self._check = held.check if stop is None else _both(held.check, stop)
        self.name = backend.name

    def prepare(self, key: ProvingKey) -> None:
        self._check()
        self._backend.prepare(key)

    def load_witness(self, key: ProvingKey, witness: np.ndarray) -> Any:
        self._check()
        return self._backend.load_witness(key, witness)

    def evaluate_abc(self, key: ProvingKey, witness: Any) -> Any:
        self._check()
        return self._backend.evaluate_abc(key, witness)

    def quotient(self, key: ProvingKey, abc: Any) -> Any:
        self._check()
        return self._backend.quotient(key, abc)

    def msm_g1(self, key: ProvingKey, basis: G1Basis, scalars: Any) -> G1Point:
        self._check()
        return self._backend.msm_g1(key, basis, scalars)

    def msm_g2(self, key: ProvingKey, basis: G2Basis, scalars: Any) -> G2Point:
        self._check()
        return self._backend.msm_g2(key, basis, scalars)

    def extension(self, capability: Capability[E]) -> E | None:
        steps = self._backend.extension(capability)
        return None if steps is None else capability.fenced(steps, self._check)

    # -- no device work of the lock's: never refused --------------------------------------
    def release(self, *handles: Any) -> None:
        self._backend.release(*handles)

    def evict(self, key: ProvingKey) -> None:
        self._backend.evict(key)

    def mark_transient(self, key: ProvingKey) -> None:
        self._backend.mark_transient(key)

    def shed(self, key: ProvingKey) -> None:
        self._backend.shed(key)

    def extra_resident_bytes(self, key: ProvingKey) -> int:
        return self._backend.extra_resident_bytes(key)

    def shared_name(self, key: ProvingKey) -> str | None:
        return self._backend.shared_name(key)

    def cached_bytes(self) -> int:
        return self._backend.cached_bytes()

    def return_cached(self) -> None:
        self._backend.return_cached()


class FencedProofMsmBackend(FencedBackend):
    """A fenced backend that runs a proof's MSMs as one batch (``ProofMsmBackend``)."""

    def proof_msms(self, key: ProvingKey, witness: Any, h: Any) -> dict:
        self._check()
        return cast(ProofMsmBackend, self._backend).proof_msms(key, witness, h)


def _both(check: Callable[[], None], stop: Callable[[], None]) -> Callable[[], None]:
    def checks() -> None:
        check()
        stop()
    return checks


def fence(backend: ProverBackend, held: HeldLock,
          stop: Callable[[], None] | None = None) -> FencedBackend:
    """``backend`` fenced by ``held``, offering what it offers (``proof_msms`` or not);
    ``stop``, when given, runs after each lease check and may raise to end the work."""
    if isinstance(backend, ProofMsmBackend):
        return FencedProofMsmBackend(backend, held, stop)
    return FencedBackend(backend, held, stop)
