"""The SDR expander's Feistel permutation in native code (``src/feistel.cpp``): BLAKE2b
round functions over millions of values, which numpy ran a word-array at a time."""

from __future__ import annotations

import numpy as np

from snark.native.library import call, ptr


def feistel_permute(values: np.ndarray, elements: int, keys: tuple[int, ...],
                    half_bits: int) -> np.ndarray:
    """π(values) for the permutation of [0, ``elements``) on halves of ``half_bits`` bits,
    round keys ``keys[:3]``; uint64, every value below ``elements``."""
    values = np.ascontiguousarray(values, dtype=np.uint64).reshape(-1)
    round_keys = np.array(keys[:3], dtype=np.uint64)
    if len(round_keys) != 3:
        raise ValueError(f"keys: {len(keys)} round keys, the permutation takes 3")
    out = np.empty_like(values)
    call("pq_feistel_permute", ptr(values), len(values), elements, ptr(round_keys), half_bits,
         ptr(out))
    return out
