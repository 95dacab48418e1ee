"""cuzk's circuit ids (``porep-32g``, ``wpost-32g``, ``winning-32g``, ``snap-64g`` …) and
the proofq keys they name.

cuzk spells a circuit ``<kind>-<size>`` (``curio:extern/cuzk/cuzk-core/src/srs_manager.rs``
``CircuitId``: porep, wpost, winning and snap at 32g, porep and snap at 64g); proofq takes
the same spelling at every sector size it proves, the development sizes included (``2k``,
``8m``, ``512m``). A circuit's key is the one a Curio request of that kind and size is
proved with: for PoRep the registered proofs of one size (V1, V1_1, synthetic) share it,
for WindowPoSt it is the current version's (V1_1, proved as the api's V1_2).

A worker keeps a key under ``<proof type>/<key stem>`` (its card, ``workers.card``): the
stem a job names (``official`` when the job names none, as Curio's do), whichever key the
worker loads for it; the key's directory, under the workers' ``PROOFQ_PARAMS_DIR``, is the
stem of the cluster's key kind (``PROOFQ_FILECOIN_KEY``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from client.cuzk.kinds import KINDS
from snark.filecoin.post.registered_proofs import WINDOW, WINNING, for_size
from snark.filecoin.registered_proofs import REGISTERED_PROOFS, KeyFiles, key_stem
from snark.filecoin.settings import FilecoinSettings
from snark.filecoin.snap.shape import SnapShape
from snark.registry import plugin, type_settings

#: cuzk's size tags.
SIZE_TAGS = {1 << 11: "2k", 1 << 23: "8m", 1 << 29: "512m", 1 << 35: "32g", 1 << 36: "64g"}
_NODE_BYTES = 32


@dataclass(frozen=True)
class Circuit:
    circuit_id: str
    proof_type: str  # the proofq type whose worker keeps the key
    target: KeyFiles  # what names the key's files (a registered proof, a shape)

    def key_name(self, kind: str = "official") -> str:
        """The key's stem: the name a Curio job keeps it under (``official``), or the
        directory of the cluster's key kind."""
        return key_stem(self.target, kind)

    def cluster_key_name(self) -> str:
        """The key's directory stem under the workers' params dir: the cluster's key kind
        (``PROOFQ_FILECOIN_KEY``, the type's settings as its workers read them)."""
        settings = type_settings(plugin(self.proof_type))
        assert isinstance(settings, FilecoinSettings)  # every circuit is a Filecoin type's
        return self.key_name(settings.key)

    def card_names(self) -> tuple[str, ...]:
        """The names a worker's card may give the key (official and development)."""
        return tuple(f"{self.proof_type}/{self.key_name(kind)}"
                     for kind in ("official", "development"))


def _target(prefix: str, size: int) -> KeyFiles:
    if prefix == "porep":  # every version of one size: one key
        return next(p for p in REGISTERED_PROOFS.values() if p.sector_size == size)
    if prefix == "snap":
        return SnapShape(size // _NODE_BYTES)
    return for_size(WINDOW if prefix == "wpost" else WINNING, size)


@functools.cache
def circuits() -> dict[str, Circuit]:
    """Every circuit id proofq knows, by id."""
    known = {}
    for kind in KINDS.values():
        for size, tag in SIZE_TAGS.items():
            circuit_id = f"{kind.circuit}-{tag}"
            known[circuit_id] = Circuit(circuit_id, kind.proof_type, _target(kind.circuit, size))
    return known


def circuit(circuit_id: str) -> Circuit:
    """The circuit ``circuit_id`` names; ``ValueError`` naming the known ids."""
    found = circuits().get(circuit_id)
    if found is None:
        raise ValueError(f"circuit_id: {circuit_id!r} is not a circuit id (known: "
                         f"{', '.join(circuits())})")
    return found


@functools.cache
def circuit_of_card_name() -> dict[str, str]:
    """cuzk's circuit id of each name a worker's card gives a Filecoin key."""
    return {name: c.circuit_id for c in circuits().values() for name in c.card_names()}
