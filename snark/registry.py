"""The proof types the pipeline knows: the plug-ins (``snark.plugins``) that installed
distributions register under the ``proofq.proof_types`` entry point, one line per type::

    [project.entry-points."proofq.proof_types"]
    porep-demo = "snark.porep.plugin:PLUGIN"

The entry points are read once, on the first question about a type, and each record is
imported then (a producer's import: records import no prover); a type's worker half is
imported the first time a worker asks for it (``worker_half``). This module names no type:
proofq's own are registered by its pyproject.toml like any other distribution's, so proofq
run from a source tree that was never installed has none, and says so.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from importlib.metadata import EntryPoint, PackageNotFoundError, distribution, entry_points

from pydantic_settings import BaseSettings

from config.settings import load_model
from snark.errors import InvalidInput, WorkerFault
from snark.plugins import ENTRY_POINT_GROUP, ProofTypePlugin, load_attribute
from snark.proof_types import AnyWorker, ProofType, Storage

#: The type of a job that names none (proofq 0.1 had only this one).
DEFAULT_TYPE = "porep-demo"


class UnknownProofType(InvalidInput):
    """A proof type the pipeline has no implementation for."""


class NoProofTypes(WorkerFault, RuntimeError):
    """No distribution registers a proof type: proofq's own metadata is not installed (on a
    worker: this worker serves nothing; another may)."""


def table(points: Iterable[EntryPoint]) -> dict[str, ProofTypePlugin]:
    """Each name (own, alias, retired) → its plug-in, from ``points``; a ``ValueError``
    where an entry point is not a plug-in, is not under its type's name, or where two
    plug-ins claim one name."""
    by_name: dict[str, ProofTypePlugin] = {}
    for point in points:
        plugin = point.load()
        if not isinstance(plugin, ProofTypePlugin):
            raise ValueError(f"{ENTRY_POINT_GROUP} {point.name} = {point.value}: not a "
                             f"snark.plugins.ProofTypePlugin ({type(plugin).__name__})")
        if point.name != plugin.kind.name:
            raise ValueError(f"{ENTRY_POINT_GROUP} {point.name} = {point.value}: the type "
                             f"is named {plugin.kind.name!r}")
        for name in plugin.names:
            known = by_name.setdefault(name, plugin)
            if known is not plugin:
                raise ValueError(f"proof type {name!r} is registered already (by "
                                 f"{known.kind.name}, {known.worker})")
    return by_name


@functools.cache
def _installed() -> dict[str, ProofTypePlugin]:
    by_name = table(entry_points(group=ENTRY_POINT_GROUP))
    if not by_name:
        raise NoProofTypes(_why_none())
    return by_name


def _why_none() -> str:
    """Why no entry point was found: proofq not installed, or the first metadata of proofq
    on the path made before its types were entry points (a stale ``proofq.egg-info`` in a
    source tree hides an install's)."""
    try:
        found = distribution("proofq")
    except PackageNotFoundError:
        return (f"no proof types are installed (no '{ENTRY_POINT_GROUP}' entry points): "
                "install proofq (pip install -e . in its source tree)")
    return (f"no proof types are installed: proofq's metadata first on the path (in "
            f"{found.locate_file('')}) has no '{ENTRY_POINT_GROUP}' entry points, made by an "
            "older install: reinstall proofq (pip install -e .) or remove that metadata")


def plugin(name: str) -> ProofTypePlugin:
    """The plug-in registered under ``name`` (its name, an alias or a retired name)."""
    try:
        return _installed()[name]
    except KeyError:
        raise UnknownProofType(f"proof_type: unknown proof type {name!r} "
                               f"(known: {', '.join(names())})") from None


def plugins() -> list[ProofTypePlugin]:
    """Every installed plug-in once, in entry-point order."""
    return list({id(p): p for p in _installed().values()}.values())


def proof_type(name: str) -> ProofType:
    """The producer half registered under ``name`` (its name or an alias)."""
    return plugin(name).kind


def proof_type_for_new_job(name: str) -> ProofType:
    """Like ``proof_type``, but a retired name is refused with its reason: producers use
    this, so that no new job goes in under a name that now means something else."""
    found = plugin(name)
    reason = found.retired.get(name)
    if reason is not None:
        raise UnknownProofType(f"proof_type: {name!r} is retired: {reason}")
    return found.kind


def names() -> list[str]:
    """Every name a new job may use (aliases included, retired names not), sorted."""
    return sorted(name for name, entry in _installed().items() if name not in entry.retired)


def aliases(kind: ProofType) -> tuple[str, ...]:
    """The older names ``kind`` still answers to, retired ones included (stored jobs)."""
    return plugin(kind.name).names[1:]


def worker_half(kind: ProofType, storage: Storage) -> AnyWorker:
    """The worker half of ``kind`` for this host's ``storage`` (imported on first use)."""
    return _worker_half(kind.name, storage)


@functools.lru_cache(maxsize=32)
def _worker_half(name: str, storage: Storage) -> AnyWorker:
    found = plugin(name)
    worker = load_attribute(found.worker)
    settings = type_settings(found)
    return worker(storage) if settings is None else worker(storage, settings)


def type_settings(found: ProofTypePlugin) -> BaseSettings | None:
    """The type's settings (its model made from ``PROOFQ_<TYPE>_…`` once per process, a
    ``SettingsError`` naming a bad one), or None for a type that has none."""
    return None if found.settings is None else _settings(found.settings)


@functools.cache
def _settings(path: str) -> BaseSettings:
    return load_model(load_attribute(path))


def reread() -> None:
    """Forget the entry points read (and the worker halves made): the next question reads
    them again, for a process whose path gained or lost a distribution."""
    _installed.cache_clear()
    _worker_half.cache_clear()
    _settings.cache_clear()
