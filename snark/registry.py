"""The proof types the pipeline knows: each one's producer half, and where its worker half is.

A type registers its producer half (``snark.proof_types.ProofType``) with the
``"module:attribute"`` of its worker half, any older names it still answers to, and any
retired names that only jobs stored before a rename still carry::

    register(PorepType(), worker="snark.porep.worker:PorepWorker",
             retired={"porep": "the demo circuit is now 'porep-demo'"})

The worker half is imported the first time a worker asks for it (``worker_half``): that one
import per type is what keeps producers light. Every process that reads a type's name must
have it registered: the built-in types are registered below; another module registers its
own types when it is imported (a Celery worker imports it with ``-I module``).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass

from snark.errors import InvalidInput
from snark.filecoin.post.proof_type import PostType
from snark.filecoin.proof_type import FilecoinType
from snark.filecoin.snap.proof_type import SnapType
from snark.porep.proof_type import PorepType
from snark.proof_types import AnyWorker, ProofType, Storage
from snark.snarkjs.proof_type import CircomType


class UnknownProofType(InvalidInput):
    """A proof type the pipeline has no implementation for."""


@dataclass(frozen=True)
class _Registered:
    kind: ProofType
    worker: str  # "module:attribute" of the worker half's class
    aliases: tuple[str, ...]
    retired: dict[str, str]  # name -> why new jobs may not use it (stored jobs still run)


_BY_NAME: dict[str, _Registered] = {}


def register(kind: ProofType, *, worker: str, aliases: tuple[str, ...] = (),
             retired: dict[str, str] | None = None) -> None:
    """Make ``kind`` known under its name and ``aliases`` (names it had before), and under
    ``retired`` names for jobs already stored with them (new jobs are refused with the
    reason given)."""
    module, _, attribute = worker.partition(":")
    if not module or not attribute:
        raise ValueError(f"worker: {worker!r} is not 'module:attribute'")
    entry = _Registered(kind, worker, tuple(aliases), dict(retired or {}))
    for name in (kind.name, *entry.aliases, *entry.retired):
        known = _BY_NAME.get(name)
        if known is not None and (known.kind.name, known.worker) != (kind.name, worker):
            raise ValueError(f"proof type {name!r} is registered already "
                             f"(by {known.kind.name}, {known.worker})")
        _BY_NAME.setdefault(name, entry)  # the same type again (module imported twice): kept


def proof_type(name: str) -> ProofType:
    """The producer half registered under ``name`` (its name or an alias)."""
    try:
        return _BY_NAME[name].kind
    except KeyError:
        raise UnknownProofType(f"proof_type: unknown proof type {name!r} "
                               f"(known: {', '.join(names())})") from None


def proof_type_for_new_job(name: str) -> ProofType:
    """Like ``proof_type``, but a retired name is refused with its reason: producers use
    this, so that no new job goes in under a name that now means something else."""
    kind = proof_type(name)
    reason = _BY_NAME[name].retired.get(name)
    if reason is not None:
        raise UnknownProofType(f"proof_type: {name!r} is retired: {reason}")
    return kind


def names() -> list[str]:
    """Every name a new job may use (aliases included, retired names not), sorted."""
    return sorted(name for name, entry in _BY_NAME.items() if name not in entry.retired)


def aliases(kind: ProofType) -> tuple[str, ...]:
    """The older names ``kind`` still answers to, retired ones included (stored jobs)."""
    entry = _BY_NAME[kind.name]
    return entry.aliases + tuple(entry.retired)


def worker_half(kind: ProofType, storage: Storage) -> AnyWorker:
    """The worker half of ``kind`` for this host's ``storage`` (imported on first use)."""
    return _worker_half(kind.name, storage)


@functools.lru_cache(maxsize=32)
def _worker_half(name: str, storage: Storage) -> AnyWorker:
    module, _, attribute = _BY_NAME[name].worker.partition(":")
    return getattr(importlib.import_module(module), attribute)(storage)


register(PorepType(), worker="snark.porep.worker:PorepWorker",
         retired={"porep": "the project's demo circuit is now 'porep-demo' (it is not "
                           "Filecoin's); Filecoin sectors are 'filecoin'"})
register(CircomType(), worker="snark.snarkjs.worker:CircomWorker", aliases=("groth16",))
register(FilecoinType(), worker="snark.filecoin.worker:FilecoinWorker")
register(SnapType(), worker="snark.filecoin.snap.worker:SnapWorker")
register(PostType("window"), worker="snark.filecoin.post.worker:PostWorker")
register(PostType("winning"), worker="snark.filecoin.post.worker:PostWorker")
