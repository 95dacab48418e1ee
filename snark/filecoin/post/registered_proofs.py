"""Filecoin's registered PoSt proofs, as Curio names them (Go's numbering) and as
rust-fil-proofs runs them.

Facts (cited ``repo:path``):

* Go's ``RegisteredPoStProof`` (go-state-types ``abi/sector.go``): 0–4 WinningPoSt V1, 5–9
  WindowPoSt V1, 10–14 WindowPoSt V1_1, each in size order 2 KiB, 8 MiB, 512 MiB, 32 GiB,
  64 GiB. cuzk maps 0–9 to the same-named api proof (ApiVersion 1.0.0) and Go's V1_1 to the
  api's ``StackedDrgWindow*V1_2`` (ApiVersion 1.2.0, the "grindability" fix:
  ``rust-filecoin-proofs-api:src/registry.rs``).
* WindowPoSt: 10 challenges per sector; 2 sectors a partition up to 512 MiB, 2,349 at
  32 GiB, 2,300 at 64 GiB (``rust-fil-proofs:filecoin-proofs/src/constants.rs``).
* WinningPoSt: one sector, 66 challenges; its circuit is 66 "sectors" of one challenge
  each (``filecoin-proofs/src/parameters.rs`` ``winning_post_setup_params``).
* Parameter files: ``v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-<shape>-``
  ``<sha256 of FallbackPoSt::PublicParams{…}>`` (``storage-proofs-core/src/parameter_cache.rs``,
  ``storage-proofs-post/src/fallback/compound.rs``); the api version is not part of it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import Enum

from snark.filecoin.errors import FilecoinError
from snark.filecoin.registered_proofs import CACHE_VERSION, NODE_BYTES, TREE_HASHER, TreeShape

WINDOW, WINNING = "window", "winning"
WINDOW_CHALLENGES = 10
WINNING_CHALLENGES = 66
_SIZES = (("2KiB", 1 << 11, 2), ("8MiB", 1 << 23, 2), ("512MiB", 1 << 29, 2),
          ("32GiB", 1 << 35, 2349), ("64GiB", 1 << 36, 2300))

#: rust-fil-proofs ``parameters.json`` (v28): the ``.params`` and ``.vk`` digest (blake2b-512,
#: its first 32 hex digits) of every official PoSt file, by name.
POST_DIGESTS = {
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
    "0170db1f394b35d995252228ee359194b13199d259380541dc529fb0099096b0":
        ("7610b9f82bfc88405b7a832b651ce2f6", "0e0958009936b9d5e515ec97b8cb792d"),
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
    "3ea05428c9d11689f23529cde32fd30aabd50f7d2c93657c1d3650bca3e8ea9e":
        ("82c88066be968bb550a05e30ff6c2413", "ffd79788d614d27919ae5bd2d94eacb6"),
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
    "5294475db5237a2e83c3e52fd6c2b03859a1831d45ed08c4f35dbf9a803165a9":
        ("c49499bb76a0762884896f9683403f55", "34d4feeacd9abf788d69ef1bb4d8fd00"),
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
    "50c7368dea9593ed0989e70974d28024efa9d156d585b7eea1be22b2e753f331":
        ("700171ecf7334e3199437c930676af82", "79ebb55f56fda427743e35053edad8fc"),
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
    "0cfb4f178bbb71cf2ecfcd42accce558b27199ab4fb59cb78f2483fe21ef36d9":
        ("1a7d4a9c8a502a497ed92a54366af33f", "4dae975de4f011f101f5a2f86d1daaba"),
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-0-0-"
    "7d739b8cf60f1b0709eeebee7730e297683552e4b69cab6984ec0285663c5781":
        ("827359440349fe8f5a016e7598993b79", "bd2cd62f65c1ab84f19ca27e97b7c731"),
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-"
    "0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc":
        ("2cf49eb26f1fee94c85781a390ddb4c8", "0f8ec542485568fa3468c066e9fed82b"),
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-"
    "559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e":
        ("d84f79a16fe40e9e25a36e2107bb1ba0", "fc02943678dd119e69e7fab8420e8819"),
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-"
    "2627e4006b67f99cef990c0a47d5426cb7ab0a0ad58fc1061547bf2d28b09def":
        ("3810b7780ac0e299b22ae70f1f94c9bc", "59d2bf1857adc59a4f08fcf2afaa916b"),
    "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-2-"
    "b62098629d07946e9028127e70295ed996fe3ed25b0f9f88eb610a0ab4385a3c":
        ("2170a91ad5bae22ea61f2ea766630322", "6d3789148fb6466d07ee1e24d6292fd6"),
}


class PostApiVersion(str, Enum):
    """What a PoSt's api version changes: the challenge index of a sector's n-th leaf is
    ``sector_index·challenge_count + n`` up to 1.1 and ``n`` from 1.2
    (``storage-proofs-post/src/fallback/utils.rs`` ``get_challenge_index``)."""

    V1_0 = "1.0.0"
    V1_1 = "1.1.0"
    V1_2 = "1.2.0"


@dataclass(frozen=True)
class PostProof:
    """One registered PoSt proof. ``sector_count`` × ``challenge_count`` is its circuit
    (WinningPoSt: 66 × 1); ``config_challenges`` the challenges a vanilla proof holds per
    sector (WinningPoSt: 66 of its one sector)."""

    go_id: int
    name: str          # Go's name, e.g. StackedDrgWindow32GiBV1_1
    api_name: str      # the api's, e.g. StackedDrgWindow32GiBV1_2
    kind: str          # window or winning
    sector_size: int
    sector_count: int
    challenge_count: int
    api_version: PostApiVersion

    @property
    def nodes(self) -> int:
        return self.sector_size // NODE_BYTES

    @property
    def shape(self) -> TreeShape:
        big = self.sector_size >= 1 << 35
        return TreeShape(8, 8 if big else 0, 2 if self.sector_size == 1 << 36 else 0)

    @property
    def config_challenges(self) -> int:
        return WINNING_CHALLENGES if self.kind == WINNING else self.challenge_count

    @property
    def size_name(self) -> str:
        return next(name for name, size, _ in _SIZES if size == self.sector_size)

    @property
    def parameter_identifier(self) -> str:
        return (f"FallbackPoSt::PublicParams{{sector_size: {self.sector_size}, "
                f"challenge_count: {self.challenge_count}, sector_count: {self.sector_count}}}")

    @property
    def params_file_stem(self) -> str:
        """The official ``.params`` / ``.vk`` name without its extension."""
        digest = hashlib.sha256(self.parameter_identifier.encode()).hexdigest()
        return (f"v{CACHE_VERSION}-proof-of-spacetime-fallback-merkletree-{TREE_HASHER}-"
                f"{self.shape.display}-{digest}")


def _build() -> dict[int, PostProof]:
    proofs = {}
    for first, kind, suffix, api_suffix, version in (
            (0, WINNING, "V1", "V1", PostApiVersion.V1_0),
            (5, WINDOW, "V1", "V1", PostApiVersion.V1_0),
            (10, WINDOW, "V1_1", "V1_2", PostApiVersion.V1_2)):
        for i, (size_name, size, window_sectors) in enumerate(_SIZES):
            stem = f"StackedDrg{kind.capitalize()}{size_name}"
            proofs[first + i] = PostProof(
                go_id=first + i, name=stem + suffix, api_name=stem + api_suffix, kind=kind,
                sector_size=size,
                sector_count=WINNING_CHALLENGES if kind == WINNING else window_sectors,
                challenge_count=1 if kind == WINNING else WINDOW_CHALLENGES,
                api_version=version)
    return proofs


POST_PROOFS: dict[int, PostProof] = _build()


def post_proof(go_id: int, kind: str | None = None) -> PostProof:
    """The PoSt proof of Go's number ``go_id``; ``kind`` (window or winning), when given,
    must be the proof's."""
    proof = POST_PROOFS.get(go_id) if isinstance(go_id, int) else None
    if proof is None:
        raise FilecoinError(f"registered_proof: {go_id!r} is not a PoSt proof in Go's "
                            f"numbering (0-4 WinningPoSt, 5-9 WindowPoSt V1, 10-14 WindowPoSt "
                            f"V1_1)")
    if kind is not None and proof.kind != kind:
        raise FilecoinError(f"registered_proof: {go_id} is {proof.name}, not a {kind} PoSt "
                            "proof")
    return proof


def post_proof_named(name: str) -> PostProof:
    """By Go's or the api's name (``StackedDrgWindow2KiBV1_1`` or ``…V1_2``)."""
    for proof in POST_PROOFS.values():
        if name in (proof.name, proof.api_name):
            return proof
    raise FilecoinError(f"registered_proof: unknown PoSt proof {name!r}")


def for_size(kind: str, sector_size: int) -> PostProof:
    """The current proof of a kind and size (WindowPoSt V1_1, WinningPoSt V1)."""
    for proof in POST_PROOFS.values():
        if proof.kind == kind and proof.sector_size == sector_size and (
                kind == WINNING or proof.api_version == PostApiVersion.V1_2):
            return proof
    raise FilecoinError(f"sector_size: {sector_size} is not a Filecoin sector size")
