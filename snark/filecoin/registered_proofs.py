"""Filecoin's registered seal proofs: the parameters of each StackedDrg PoRep.

Facts, from the sources (cited ``repo:path``):

* names and registered ids: V1 are 0–4, V1_1 are 5–9 and V1_1_Feat_SyntheticPoRep 10–14,
  2 KiB … 64 GiB in size order; V1 is API 1.0.0, V1_1 is API 1.1.0, the synthetic ones API
  1.2.0 despite their name (``rust-filecoin-proofs-api:src/registry.rs``). These ids are Go's
  ``abi.RegisteredSealProof`` numbers too (Curio and lotus send them: ``by_number``);
  15–19 are V1_2_Feat_NonInteractivePoRep;
* ``porep_id`` = registered id (u64 LE) ‖ nonce 0 (u64 LE) ‖ 16 zero bytes (same file);
* layers, partitions and the minimum challenge count per size; challenges per partition =
  ceil(minimum / partitions), so 32 GiB and 64 GiB prove 18 × 10 = 180
  (``rust-fil-proofs:filecoin-proofs/src/{constants.rs,parameters.rs}``);
* tree shapes 8-0-0 (2 KiB, 8 MiB, 512 MiB), 8-8-0 (32 GiB), 8-8-2 (64 GiB) (constants.rs);
* the official Groth16 parameter files are named ``v28-<cache prefix>-<sha256 hex of the public
  parameters' identifier>``; the identifier names the graph, layers, challenges per partition
  and tree, not the porep_id, so V1 and V1_1 of a size share their files
  (``storage-proofs-core/src/parameter_cache.rs``, ``storage-proofs-porep/src/stacked/
  {vanilla/params.rs,circuit/proof.rs}``).

Synthetic PoRep is the same circuit and the same parameter files as V1_1 (the identifier
above does not name the challenge kind); only its challenges are drawn otherwise
(``challenges.synthetic_challenges``). ``Feat_NonInteractivePoRep`` proofs (an aggregate of
many partitions' proofs) are recognised and refused.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from snark.filecoin.errors import FilecoinError

NODE_BYTES = 32
#: DRG parents (BucketGraph) and expander parents (Feistel) of every SDR node.
DRG_PARENTS = 6
EXP_PARENTS = 8
#: Parent labels hashed into each label: the parents cycled to this many.
LABEL_PARENTS = 37
#: ``v28-…`` in parameter and parent cache file names (parameter_cache.rs VERSION).
CACHE_VERSION = 28
TREE_HASHER = "poseidon_hasher"
DATA_HASHER = "sha256_hasher"

_SIZES = ("2KiB", "8MiB", "512MiB", "32GiB", "64GiB")
_SIZE_BYTES = {"2KiB": 1 << 11, "8MiB": 1 << 23, "512MiB": 1 << 29, "32GiB": 1 << 35,
               "64GiB": 1 << 36}
_SYNTHETIC = "V1_1_Feat_SyntheticPoRep"
_NON_INTERACTIVE = "V1_2_Feat_NonInteractivePoRep"
#: Go's and rust-fil-proofs' first NI-PoRep number (15–19).
_FIRST_NON_INTERACTIVE = 15


class ApiVersion(str, Enum):
    """The SDR graph's version: 1.1 moved the DRG predecessor first and fixed a u32 cast in
    the expander parents (``storage-proofs-core/src/api_version.rs``, ``drgraph.rs``)."""

    V1_0 = "1.0.0"
    V1_1 = "1.1.0"
    V1_2 = "1.2.0"  # synthetic PoRep: the graph of 1.1

    @classmethod
    def parse(cls, text: str) -> "ApiVersion":
        """``"1.1"`` or ``"1.1.0"`` (the graphs' versions: 1.0 and 1.1)."""
        for version in (cls.V1_0, cls.V1_1):
            if text in (version.value, version.value[:-2]):
                return version
        raise FilecoinError(f"api_version: expected 1.0 or 1.1, got {text!r}")


@dataclass(frozen=True)
class TreeShape:
    """Arities of a Poseidon tree (trees C and R_last): base, sub-tree and top-tree levels.

    The sector's nodes are split into ``sub_arity × top_arity`` base trees of consecutive
    nodes (a 0 arity counts as 1); a node's index is its base-tree digits (arity 8, least
    significant first), then its sub-tree digit, then its top-tree digit
    (``storage-proofs-core/src/merkle/proof.rs``)."""

    base_arity: int
    sub_arity: int
    top_arity: int

    @property
    def name(self) -> str:
        """The serde tag of its Merkle proofs: ``Single``, ``Sub`` or ``Top``."""
        return "Top" if self.top_arity else "Sub" if self.sub_arity else "Single"

    @property
    def display(self) -> str:
        return f"{self.base_arity}-{self.sub_arity}-{self.top_arity}"

    @property
    def base_trees(self) -> int:
        return max(self.sub_arity, 1) * max(self.top_arity, 1)

    def base_levels(self, nodes: int) -> int:
        """Levels (path elements) of one base tree."""
        leaves = nodes // self.base_trees
        levels = round(math.log(leaves, self.base_arity))
        if self.base_arity ** levels != leaves:
            raise FilecoinError(f"tree: {nodes} nodes do not fill a {self.display} tree")
        return levels

    def level_arities(self, nodes: int) -> tuple[int, ...]:
        """The arity of every path element, leaf level first."""
        return ((self.base_arity,) * self.base_levels(nodes)
                + tuple(a for a in (self.sub_arity, self.top_arity) if a))


@dataclass(frozen=True)
class RegisteredProof:
    """One registered seal proof, e.g. ``StackedDrg32GiBV1_1``."""

    name: str
    registered_id: int
    sector_size: int
    layers: int
    partitions: int
    minimum_challenges: int
    shape: TreeShape
    api_version: ApiVersion
    synthetic: bool = False  # challenges drawn as synthetic PoRep draws them

    @property
    def nodes(self) -> int:
        return self.sector_size // NODE_BYTES

    @property
    def challenges_per_partition(self) -> int:
        return -(-self.minimum_challenges // self.partitions)

    @property
    def challenges(self) -> int:
        """All challenges of a C1: partitions × challenges per partition."""
        return self.partitions * self.challenges_per_partition

    @property
    def size_name(self) -> str:
        return self.name.removeprefix("StackedDrg").split("V1")[0]

    @property
    def vanilla_tag(self) -> str:
        """The tag of ``vanilla_proofs`` in a C1: the V1 name for V1 and V1_1 alike
        (``rust-filecoin-proofs-api:src/seal.rs`` ``VanillaSealProof``)."""
        return f"StackedDrg{self.size_name}V1"

    @property
    def porep_id(self) -> bytes:
        return self.registered_id.to_bytes(8, "little") + bytes(8) + bytes(16)

    @property
    def graph_identifier(self) -> str:
        """``StackedGraph``'s identifier (hashed into parameter and parent cache names)."""
        return (f"stacked_graph::StackedGraph{{expansion_degree: {EXP_PARENTS} base_graph: "
                f"drgraph::BucketGraph{{size: {self.nodes}; degree: {DRG_PARENTS}; "
                f"hasher: {TREE_HASHER}}} }}")

    @property
    def parameter_identifier(self) -> str:
        """The public parameters' identifier whose SHA-256 names the official files."""
        return (f"layered_drgporep::PublicParams{{ graph: {self.graph_identifier}, "
                f"challenges: LayerChallenges {{ layers: {self.layers}, "
                f"max_count: {self.challenges_per_partition} }}, "
                f"tree: merkletree-{TREE_HASHER}-{self.shape.display} }}")

    @property
    def params_file_stem(self) -> str:
        """The official ``.params`` / ``.vk`` / ``.meta`` file name without its extension."""
        digest = hashlib.sha256(self.parameter_identifier.encode()).hexdigest()
        return (f"v{CACHE_VERSION}-stacked-proof-of-replication-merkletree-{TREE_HASHER}-"
                f"{self.shape.display}-{DATA_HASHER}-{digest}")


#: Development keys' file stems (proofq's own setups, ``snark.filecoin.params``) start so;
#: no official file's does.
DEV_PREFIX = "proofq-dev-"


class KeyFiles(Protocol):
    """What names a key's files: a registered seal proof, a SnapDeals shape or a PoSt proof."""

    @property
    def params_file_stem(self) -> str: ...


def dev_stem(proof: KeyFiles) -> str:
    return f"{DEV_PREFIX}{proof.params_file_stem.removeprefix(f'v{CACHE_VERSION}-')}"


def key_stem(proof: KeyFiles, kind: str) -> str:
    """The file stem of ``proof``'s key of ``kind`` (``official`` or ``development``)."""
    return proof.params_file_stem if kind == "official" else dev_stem(proof)


def _build() -> dict[str, RegisteredProof]:
    proofs = {}
    for version, suffix, first_id in ((ApiVersion.V1_0, "V1", 0), (ApiVersion.V1_1, "V1_1", 5),
                                      (ApiVersion.V1_2, _SYNTHETIC, 10)):
        for i, size in enumerate(_SIZES):
            big = size in ("32GiB", "64GiB")
            shape = TreeShape(8, 8 if big else 0, 2 if size == "64GiB" else 0)
            name = f"StackedDrg{size}{suffix}"
            proofs[name] = RegisteredProof(
                name=name, registered_id=first_id + i, sector_size=_SIZE_BYTES[size],
                layers=11 if big else 2, partitions=10 if big else 1,
                minimum_challenges=176 if big else 2, shape=shape, api_version=version,
                synthetic=suffix == _SYNTHETIC)
    return proofs


REGISTERED_PROOFS: dict[str, RegisteredProof] = _build()


def _not_proved(name: str) -> FilecoinError:
    return FilecoinError(f"registered_proof: {name} is non-interactive PoRep (an aggregate of "
                         f"many partitions' proofs), which proofq does not prove")


def registered_proof(name: str) -> RegisteredProof:
    """The registered proof called ``name``; ``FilecoinError`` for NI-PoRep (not proved
    here) and unknown names."""
    proof = REGISTERED_PROOFS.get(name)
    if proof is not None:
        return proof
    if isinstance(name, str) and name.startswith("StackedDrg") and \
            name.removeprefix("StackedDrg").removesuffix(_NON_INTERACTIVE) in _SIZES:
        raise _not_proved(name)
    raise FilecoinError(f"registered_proof: unknown registered proof {name!r} (expected one "
                        f"of {', '.join(REGISTERED_PROOFS)})")


def by_number(number: int) -> RegisteredProof:
    """The registered proof of Go's ``abi.RegisteredSealProof`` number (rust-fil-proofs'
    registered id): 0–4 V1, 5–9 V1_1, 10–14 V1_1_Feat_SyntheticPoRep, each 2 KiB, 8 MiB,
    512 MiB, 32 GiB, 64 GiB; ``FilecoinError`` for NI-PoRep (15–19) and other numbers."""
    if type(number) is not int:
        raise FilecoinError(f"registered_proof: expected a number, got {number!r}")
    for proof in REGISTERED_PROOFS.values():
        if proof.registered_id == number:
            return proof
    size = number - _FIRST_NON_INTERACTIVE
    if 0 <= size < len(_SIZES):
        raise _not_proved(f"{number} (StackedDrg{_SIZES[size]}{_NON_INTERACTIVE})")
    raise FilecoinError(f"registered_proof: {number!r} is not a registered seal proof number "
                        f"(0–14; 15–19 are NI-PoRep)")


def for_sector(sector_size: int, api_version: ApiVersion) -> RegisteredProof:
    """The registered proof of a sector size and API version."""
    for proof in REGISTERED_PROOFS.values():
        if proof.sector_size == sector_size and proof.api_version == api_version and \
                not proof.synthetic:
            return proof
    sizes = ", ".join(f"{size} ({_SIZE_BYTES[size]})" for size in _SIZES)
    raise FilecoinError(f"sector_size: {sector_size} is not a Filecoin sector size "
                        f"(expected one of {sizes})")
