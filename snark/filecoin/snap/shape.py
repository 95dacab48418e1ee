"""What fixes a SnapDeals (EmptySectorUpdate) proof: the sector's nodes and its tree R shape.

``storage-proofs-update/src/constants.rs``: partitions, challenges per partition, apex leaves
and the ``hs`` table follow from the sector's nodes alone; the tree R shape is the sector's
(``validate_tree_r_shape``, which also names the 1–32 KiB test shapes). The registered
update proofs are Go's ``RegisteredUpdateProof`` 0–4 (api ``StackedDrg*V1``, ApiVersion 1.1).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from snark.filecoin.errors import FilecoinError
from snark.filecoin.registered_proofs import TreeShape

NODE_BYTES = 32
KIB_NODES = 1024 // NODE_BYTES

#: Tree R arities by sector nodes (``validate_tree_r_shape``).
TREE_R_SHAPES = {
    KIB_NODES: TreeShape(8, 4, 0), 2 * KIB_NODES: TreeShape(8, 0, 0),
    4 * KIB_NODES: TreeShape(8, 2, 0), 8 * KIB_NODES: TreeShape(8, 4, 0),
    16 * KIB_NODES: TreeShape(8, 8, 0), 32 * KIB_NODES: TreeShape(8, 8, 2),
    1 << 18: TreeShape(8, 0, 0), 1 << 19: TreeShape(8, 2, 0), 1 << 24: TreeShape(8, 0, 0),
    1 << 30: TreeShape(8, 8, 0), 1 << 31: TreeShape(8, 8, 2)}

#: Go's ``abi.RegisteredUpdateProof`` numbering → sector size (api ``StackedDrg*V1``).
UPDATE_PROOF_SIZES = {0: 1 << 11, 1: 1 << 23, 2: 1 << 29, 3: 1 << 35, 4: 1 << 36}
_SIZE_NAMES = {1 << 11: "2KiB", 1 << 23: "8MiB", 1 << 29: "512MiB", 1 << 35: "32GiB",
               1 << 36: "64GiB"}
CACHE_VERSION = 28


@dataclass(frozen=True)
class SnapShape:
    nodes: int

    def __post_init__(self) -> None:
        if self.nodes not in TREE_R_SHAPES:
            raise FilecoinError(f"sector_size: {self.nodes * NODE_BYTES} bytes is not a "
                                "SnapDeals sector size")

    @classmethod
    def of_size(cls, sector_size: int) -> "SnapShape":
        if not isinstance(sector_size, int) or sector_size % NODE_BYTES:
            raise FilecoinError(f"sector_size: {sector_size!r} is not a SnapDeals sector size")
        return cls(sector_size // NODE_BYTES)

    @property
    def sector_size(self) -> int:
        return self.nodes * NODE_BYTES

    @property
    def tree(self) -> TreeShape:
        return TREE_R_SHAPES[self.nodes]

    @property
    def partitions(self) -> int:
        return (1 if self.nodes <= 8 * KIB_NODES else 2 if self.nodes <= 32 * KIB_NODES
                else 4 if self.nodes <= 1 << 19 else 16)

    @property
    def challenges(self) -> int:
        """Challenges per partition."""
        return 10 if self.nodes <= 1 << 19 else 86

    @property
    def apex_leaves(self) -> int:
        return 8 if self.nodes <= 8 * KIB_NODES else 128

    @property
    def hs(self) -> tuple[int, ...]:
        return (1,) * 6 if self.nodes <= 32 * KIB_NODES else (7, 8, 9, 10, 11, 12)

    @property
    def h(self) -> int:
        """The ``h`` every production proof uses (``h_default``)."""
        return self.hs[3]

    @property
    def h_select(self) -> int:
        return 1 << self.hs.index(self.h)

    @property
    def challenge_bits(self) -> int:
        return self.nodes.bit_length() - 1

    @property
    def partition_bits(self) -> int:
        return self.partitions.bit_length() - 1

    @property
    def apex_bits(self) -> int:
        return self.apex_leaves.bit_length() - 1

    @property
    def random_bits(self) -> int:
        """Random bits per challenge (the partition's bits complete it)."""
        return self.challenge_bits - self.partition_bits

    @property
    def below_apex(self) -> int:
        """Tree D levels from a leaf to its apex leaf."""
        return self.random_bits - self.apex_bits

    def tree_arities(self) -> list[int]:
        return list(self.tree.level_arities(self.nodes))

    def k_and_h_select(self, k: int) -> int:
        """The partition's first public input: ``k | h_select << log2(partitions)``."""
        return k | self.h_select << self.partition_bits

    @property
    def size_name(self) -> str:
        return _SIZE_NAMES.get(self.sector_size, f"{self.sector_size // 1024}KiB")

    @property
    def name(self) -> str:
        return f"snap-{self.size_name}"

    @property
    def parameter_identifier(self) -> str:
        return f"empty_sector_update::PublicParams{{ sector_nodes: {self.nodes} }}"

    @property
    def params_file_stem(self) -> str:
        """The official ``.params`` / ``.vk`` name (``parameter_cache.rs``)."""
        digest = hashlib.sha256(self.parameter_identifier.encode()).hexdigest()
        return (f"v{CACHE_VERSION}-empty-sector-update-merkletree-poseidon_hasher-"
                f"{self.tree.display}-{digest}")


def update_proof_shape(registered_proof: int, sector_size: int | None = None) -> SnapShape:
    """The shape of Go's ``RegisteredUpdateProof`` number, checked against ``sector_size``
    where one is given."""
    if isinstance(registered_proof, bool) or registered_proof not in UPDATE_PROOF_SIZES:
        raise FilecoinError(f"registered_proof: {registered_proof!r} is not a registered "
                            "update proof (Go numbering 0-4: 2KiB, 8MiB, 512MiB, 32GiB, 64GiB)")
    size = UPDATE_PROOF_SIZES[registered_proof]
    if sector_size is not None and sector_size != size:
        raise FilecoinError(f"sector_size: {sector_size!r} is not the {_SIZE_NAMES[size]} of "
                            f"registered_proof {registered_proof}")
    return SnapShape(size // NODE_BYTES)


def update_proof_number(shape: SnapShape) -> int:
    for number, size in UPDATE_PROOF_SIZES.items():
        if size == shape.sector_size:
            return number
    raise FilecoinError(f"sector_size: {shape.sector_size} has no registered update proof")
