"""Filecoin's published values the tests compare against (facts from the public sources).

``KNOWN_ANSWERS`` is ``tests/data/filecoin/known-answers.json`` (neptune, filecoin-hashers and
rust-fil-proofs test vectors); the names below are rust-fil-proofs' ``parameters.json`` and
``storage-proofs-porep/parent_cache.json`` entries.
"""

from __future__ import annotations

import json
from pathlib import Path

KNOWN_ANSWERS = json.loads(
    (Path(__file__).parent / "data" / "filecoin" / "known-answers.json").read_text())

#: rust-fil-proofs:parameters.json, one ``.params``/``.vk`` pair per size (V1 and V1_1 share).
PARAMS_FILE_STEMS = {
    "2KiB": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
            "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f",
    "8MiB": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
            "ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb",
    "512MiB": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
              "6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472",
    "32GiB": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-"
             "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820",
    "64GiB": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-sha256_hasher-"
             "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2",
}

#: rust-fil-proofs:storage-proofs-porep/parent_cache.json: name → (sector size, digest).
PARENT_CACHES = {
    "v28-sdr-parent-3f0eef38bb48af1f48ad65e14eb85b4ebfc167cec18cd81764f6d998836c9899":
        (2048, "3da49221e2ed55371b86d0bf3d6526fcf128af61bed904f966428db1b531750d"),
    "v28-sdr-parent-494d91dc80f2df5272c4b9e129bc7ade9405225993af9fe34e6542a39a47554b":
        (2048, "840057702eea7652cf97e04306c30fe57174714d90de156a25eddd6075c25b97"),
    "v28-sdr-parent-dcdabb0fbe4364bf0ac28b6a18c66de246409fa1a9020a00f33fb3e3053da6dc":
        (8388608, "a76604f2f59f2744c7151653bbb1d8596b6b57d295e6fa6c1f0c41d725b502ce"),
    "v28-sdr-parent-5eed212119fd91aa6220a27f31a8966444a9381842bceb3a1ea61525bd47a5b5":
        (8388608, "03cd13565ded97c240a5f52e54295ad127bd0461b57904cb3a4d79b097bbecab"),
    "v28-sdr-parent-2aa9c77c3e58259481351cc4be2079cc71e1c9af39700866545c043bfa30fb42":
        (536870912, "3adcc092423aa76d6a7184016893406da44dd974b219a89cd3ece25e4e3018f5"),
    "v28-sdr-parent-7ba215a1d2345774ab90b8cb1158d296e409d6068819d7b8c7baf0b25d63dc34":
        (536870912, "b5877d1963793efebc261fd8fde4dd6bc59e6b5c7abf52617a4ee023b8dc173a"),
    "v28-sdr-parent-e1fa5d5b811ddbd118be3412c4a8c329156b8b8acc72632bca459455b5a05a13":
        (34359738368, "3c4f9841fcc75aed8c695800e58d08480629f25af3a2aefd81904181d75cc0b6"),
    "v28-sdr-parent-21981246c370f9d76c7a77ab273d94bde0ceb4e938292334960bce05585dc117":
        (34359738368, "93deeac5e3052b6927467d4b2641bb782f05491de18d510147c93eeedd8672da"),
    "v28-sdr-parent-8a99e8d6b6be7ab87a56b632e6739ff201c23ea14e99737c74690f0e265574d6":
        (68719476736, "2778a732ad46a7dc18e0564dfdf59fd321dcde74ab476fd6d3c4e6735d7cd89c"),
    "v28-sdr-parent-4905486b7af19558ac3649bc6261411858b6add534438878c4ee3b29d8b9de0b":
        (68719476736, "2698b74eb2606b55b98d8b095e18b6320b47f46e00075956d48640ccd1641b03"),
}
