"""A proof type as one plug-in (docs/ARCHITECTURE.md §5): the record its package exports and
the ``proofq.proof_types`` entry point of its distribution names.

    [project.entry-points."proofq.proof_types"]
    porep-demo = "snark.porep.plugin:PLUGIN"

``snark.registry`` reads the entry points once, on the first question about a type, and
imports no type itself. The record holds the type's producer half and the small functions
of its input forms (which import what they need when called), and everything else of it by
``"module:attribute"`` text, imported only where it is needed: its worker half (on a
worker), its settings model (there too), its device steps (``gpu.extensions``, on a GPU
worker) and its ``proofq`` commands (``client.cli``). The modules those name may live in the
room whose libraries they need (CuPy, click): only the record names them, so each is clearly
the type's, and the generic modules of those rooms name no type.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from snark.job_input import InputLimits
from snark.proof_types import ProofType, Storage

#: The entry-point group a distribution registers its proof types in.
ENTRY_POINT_GROUP = "proofq.proof_types"


def load_attribute(path: str) -> Any:
    """What ``"module:attribute"`` names (its module imported on first use)."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def check_path(field_name: str, path: str | None) -> None:
    if path is None:
        return
    module, _, attribute = path.partition(":")
    if not module or not attribute:
        raise ValueError(f"{field_name}: {path!r} is not 'module:attribute'")


@dataclass(frozen=True)
class Delivered:
    """A result as delivered: ``fields`` added to ``--json``'s object, ``text`` printed
    without ``-o``, ``written`` what ``-o`` wrote (after the arrow of the state line)."""

    fields: dict[str, Any]
    text: str
    written: str


#: Reads a job file by its path (``-``: stdin), bounded by the producer's limit.
ReadFile = Callable[[str], bytes]


def _no_claim(head: bytes) -> int:
    return 0


def _no_refusal(head: bytes) -> str | None:
    return None


@dataclass(frozen=True)
class InputForms:
    """How ``proofq submit`` and ``bench batch`` make a job of this type from files, beside
    the default form (one file, its bytes the raw input). Each function imports what it
    needs when called: producers import the record.

    ``claim(head)``: how surely a lone file starting with ``head`` (200 bytes) is this
    type's job, for a submit without ``--type`` (0: not; the highest claim wins, the
    default type where none claims). ``needs_key(head)``: why a file starting so is proved
    only under ``--key`` (None: it is not). ``with_key(key_id, files, read, limits,
    storage)``: the raw input of files proved under ``--key KEY_ID``, each a path (read
    with ``read``) or, from the Python API, the file's bytes (None: the type takes no
    ``--key``); ``several_files``: whether it takes more than one. ``sample(key_id,
    sector_size, partitions, challenges)``: a fresh job for ``bench batch`` without input
    files, and a line saying what it is (None: the type needs files). ``deliver(result,
    output)``: the result delivered (None: one file, or hex)."""

    claim: Callable[[bytes], int] = _no_claim
    needs_key: Callable[[bytes], str | None] = _no_refusal
    with_key: Callable[[str, tuple[str | bytes, ...], ReadFile, InputLimits, Storage],
                       Any] | None = None
    several_files: bool = False
    sample: Callable[[str | None, str, int, int], tuple[Any, str]] | None = None
    deliver: Callable[[bytes, str | None], Delivered] | None = None


@dataclass(frozen=True)
class ProofTypePlugin:
    """One proof type, everything of it.

    ``kind``: the producer half. ``worker``: its worker half's class, made as
    ``Worker(storage, settings)`` where ``settings`` is set (an instance of that
    pydantic-settings model, its variables ``PROOFQ_<TYPE>_…``, made by the worker runtime
    and passed in), else ``Worker(storage)``. ``aliases``: names it had before; ``retired``:
    names only stored jobs may carry, with why new jobs may not. ``unit``: what one unit of
    work proves, for summaries ("partition proof"). ``device_steps``: the GPU class of its
    ``snark.backend.Capability`` whose name is ``capability``, made with the backend.
    ``commands``: its ``proofq`` commands (a list of click commands). ``curio_kinds``: the
    proof kinds of Curio's gRPC protocol it serves (a list of ``client.cuzk.kinds.Kind``:
    how a request becomes its job, the keys its circuit ids name). ``sector_of(head,
    tail)``: for a type whose input names one sector, ``{"sector", "miner"}`` as far as the
    first and last bytes of a stored input name them (the job view's columns).
    ``transient_key``: its key's device part is made resident for each unit and given back
    after it, its bulk kept in host memory (``workers.key_residency``): for a type proved
    seldom beside a larger key that stays (WindowPoSt beside PoRep); the type knows how
    often its work comes, the operator may choose otherwise (``PROOFQ_TRANSIENT_KEY_TYPES``).
    """

    kind: ProofType
    worker: str
    aliases: tuple[str, ...] = ()
    retired: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    settings: str | None = None
    unit: str = "proof"
    inputs: InputForms = field(default_factory=InputForms)
    capability: str | None = None
    device_steps: str | None = None
    commands: str | None = None
    curio_kinds: str | None = None
    sector_of: Callable[[bytes, bytes], dict[str, int]] | None = None
    transient_key: bool = False

    def __post_init__(self) -> None:
        for name in ("worker", "settings", "device_steps", "commands", "curio_kinds"):
            check_path(name, getattr(self, name))
        if (self.capability is None) != (self.device_steps is None):
            raise ValueError(f"{self.kind.name}: capability and device_steps come together")

    @property
    def names(self) -> tuple[str, ...]:
        """Every name it answers to: its own, its aliases, its retired names."""
        return (self.kind.name, *self.aliases, *self.retired)
