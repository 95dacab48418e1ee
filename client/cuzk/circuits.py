"""cuzk's circuit ids (``porep-32g``, ``wpost-32g``, ``winning-32g``, ``snap-64g`` …) and
the proofq keys they name.

cuzk spells a circuit ``<kind>-<size>`` (``curio:extern/cuzk/cuzk-core/src/srs_manager.rs``
``CircuitId``: porep, wpost, winning and snap at 32g, porep and snap at 64g); proofq takes
the same spelling at every sector size it proves, the development sizes included (``2k``,
``8m``, ``512m``), for every kind an installed type serves (``client.cuzk.kinds``). A
circuit's key is the one a Curio request of that kind and size is proved with (the kind's
``key_stem``).

A worker keeps a key under ``<proof type>/<key stem>`` (its card, ``workers.card``): the
stem a job names (``official`` when the job names none, as Curio's do), whichever key the
worker loads for it; the key's directory, under the workers' ``PROOFQ_PARAMS_DIR``, is the
stem of the cluster's key kind (the type's settings' ``key``, e.g. ``PROOFQ_FILECOIN_KEY``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from client.cuzk.kinds import Kind, kinds
from snark.registry import plugin, type_settings

#: cuzk's size tags.
SIZE_TAGS = {1 << 11: "2k", 1 << 23: "8m", 1 << 29: "512m", 1 << 35: "32g", 1 << 36: "64g"}
#: The key kinds a card may name a key by.
KEY_KINDS = ("official", "development")


@dataclass(frozen=True)
class Circuit:
    circuit_id: str
    kind: Kind
    sector_size: int

    @property
    def proof_type(self) -> str:
        """The proofq type whose worker keeps the key."""
        return self.kind.proof_type

    def key_name(self, key_kind: str = "official") -> str:
        """The key's stem: the name a Curio job keeps it under (``official``), or the
        directory of a key kind."""
        return self.kind.key_stem(self.sector_size, key_kind)

    def cluster_key_name(self) -> str:
        """The key's directory stem under the workers' params dir: the cluster's key kind
        (the type's settings as its workers read them; ``official`` for a type without)."""
        settings = type_settings(plugin(self.proof_type))
        return self.key_name(getattr(settings, "key", "official"))

    def card_names(self) -> tuple[str, ...]:
        """The names a worker's card may give the key (official and development)."""
        return tuple(f"{self.proof_type}/{self.key_name(kind)}" for kind in KEY_KINDS)


@functools.cache
def circuits() -> dict[str, Circuit]:
    """Every circuit id proofq knows, by id."""
    return {f"{kind.circuit}-{tag}": Circuit(f"{kind.circuit}-{tag}", kind, size)
            for kind in kinds().values() for size, tag in SIZE_TAGS.items()}


def circuit(circuit_id: str) -> Circuit:
    """The circuit ``circuit_id`` names; ``ValueError`` naming the known ids."""
    found = circuits().get(circuit_id)
    if found is None:
        raise ValueError(f"circuit_id: {circuit_id!r} is not a circuit id (known: "
                         f"{', '.join(circuits())})")
    return found


@functools.cache
def circuit_of_card_name() -> dict[str, str]:
    """cuzk's circuit id of each name a worker's card gives a key."""
    return {name: c.circuit_id for c in circuits().values() for name in c.card_names()}
