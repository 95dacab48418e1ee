"""The two-to-one hash H(x, y) = perm([0, x, y])[0], for one pair or a whole batch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from snark.fields import FR_MODULUS, fr_to_limbs, is_canonical, limbs_to_object
from snark.poseidon.fast import permute_words

Words = int | np.ndarray

#: Pairs hashed per vector pass: bounds the temporaries of a huge batch (each element is
#: a Python int object) and keeps the working set near the CPU caches.
CHUNK = 1 << 14


def _check_int(value: int, name: str) -> int:
    if not isinstance(value, (int, np.integer)) or not 0 <= value < FR_MODULUS:
        raise ValueError(f"{name} must be a reduced Fr element (0 <= v < r), got {value!r}")
    return int(value)


def hash2(x: int, y: int) -> int:
    """Poseidon H(x, y) of two field elements given as ints."""
    return permute_words([0, _check_int(x, "x"), _check_int(y, "y")])[0]


def fr_words(values: np.ndarray | Sequence[int], name: str) -> np.ndarray:
    """A vector of reduced Fr elements — limbs ``(n, 4)`` or ints — as an object array of
    ints (what a batched hash computes on); ``ValueError`` naming ``name[i]`` otherwise."""
    if isinstance(values, np.ndarray) and values.dtype == np.uint64:
        if values.ndim != 2 or values.shape[1] != 4:
            raise ValueError(f"{name} must be Fr limbs of shape (n, 4), got {values.shape}")
        bad = np.flatnonzero(~is_canonical(values, FR_MODULUS))
        words = limbs_to_object(values)
    else:
        words = np.empty(len(values), dtype=object)
        words[:] = [int(v) for v in values]
        bad = np.flatnonzero((words < 0) | (words >= FR_MODULUS))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is not a reduced Fr element")
    return words


def _as_words(values: int | np.ndarray | Sequence[int], name: str) -> tuple[Words, bool]:
    """An int, or an object array of ints; the flag says the caller passed Fr limbs."""
    if isinstance(values, (int, np.integer)):
        return _check_int(values, name), False
    is_limbs = isinstance(values, np.ndarray) and values.dtype == np.uint64
    return fr_words(values, name), is_limbs


def hash2_many(xs: int | np.ndarray | Sequence[int],
               ys: int | np.ndarray | Sequence[int]) -> np.ndarray:
    """H(x_i, y_i) for every i, each round applied to whole vectors.

    ``xs`` and ``ys`` are Fr limbs ``(n, 4)``, 1-D sequences (or object arrays) of ints,
    or a single int that is paired with every element of the other. The result is Fr limbs
    if either argument was limbs, otherwise a 1-D object array of ints.
    """
    x_words, x_limbs = _as_words(xs, "xs")
    y_words, y_limbs = _as_words(ys, "ys")
    lengths = {len(w) for w in (x_words, y_words) if isinstance(w, np.ndarray)}
    if len(lengths) > 1:
        raise ValueError(f"xs and ys differ in length: {len(x_words)} != {len(y_words)}")
    n = lengths.pop() if lengths else 1
    x_words, y_words = (np.full(n, w, dtype=object) if isinstance(w, int) else w
                        for w in (x_words, y_words))
    out = np.empty(n, dtype=object)
    for start in range(0, n, CHUNK):
        part = slice(start, start + CHUNK)
        zeros = np.zeros(len(x_words[part]), dtype=object)
        out[part] = permute_words([zeros, x_words[part], y_words[part]])[0]
    return fr_to_limbs(out) if x_limbs or y_limbs else out
