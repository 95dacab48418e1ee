"""The two-to-one hash H(x, y) = perm([0, x, y])[0], for one pair or a whole batch.

One pair runs the Python schedule (``fast.permute_words``); a batch runs the same schedule
in native code (``snark.native.permute_batch``, byte-identical), chunk by chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from snark import native
from snark.fields import FR_MODULUS, fr_to_limbs, is_canonical, limbs_to_object
from snark.poseidon.fast import fast_schedule, permute_words

#: Pairs hashed per native call: bounds the temporary states of a huge batch (96 bytes a pair).
CHUNK = 1 << 18


def _check_int(value: int, name: str) -> int:
    if not isinstance(value, (int, np.integer)) or not 0 <= value < FR_MODULUS:
        raise ValueError(f"{name} must be a reduced Fr element (0 <= v < r), got {value!r}")
    return int(value)


def hash2(x: int, y: int) -> int:
    """Poseidon H(x, y) of two field elements given as ints."""
    return permute_words([0, _check_int(x, "x"), _check_int(y, "y")])[0]


def _check_limbs(values: np.ndarray, name: str) -> np.ndarray:
    if values.ndim != 2 or values.shape[1] != 4:
        raise ValueError(f"{name} must be Fr limbs of shape (n, 4), got {values.shape}")
    bad = np.flatnonzero(~is_canonical(values, FR_MODULUS))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is not a reduced Fr element")
    return values


def fr_words(values: np.ndarray | Sequence[int], name: str) -> np.ndarray:
    """A vector of reduced Fr elements — limbs ``(n, 4)`` or ints — as an object array of
    ints; ``ValueError`` naming ``name[i]`` otherwise."""
    if isinstance(values, np.ndarray) and values.dtype == np.uint64:
        return limbs_to_object(_check_limbs(values, name))
    words = np.empty(len(values), dtype=object)
    words[:] = [int(v) for v in values]
    bad = np.flatnonzero((words < 0) | (words >= FR_MODULUS))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] is not a reduced Fr element")
    return words


def _as_limbs(values: int | np.ndarray | Sequence[int], name: str) -> tuple[np.ndarray, bool, bool]:
    """Checked limbs of ``values``, whether they came as limbs, and whether as one int."""
    if isinstance(values, (int, np.integer)):
        return fr_to_limbs([_check_int(values, name)]), False, True
    if isinstance(values, np.ndarray) and values.dtype == np.uint64:
        return _check_limbs(values, name), True, False
    return fr_to_limbs(fr_words(values, name)).reshape(-1, 4), False, False


def hash2_many(xs: int | np.ndarray | Sequence[int],
               ys: int | np.ndarray | Sequence[int]) -> np.ndarray:
    """H(x_i, y_i) for every i.

    ``xs`` and ``ys`` are Fr limbs ``(n, 4)``, 1-D sequences (or object arrays) of ints,
    or a single int that is paired with every element of the other. The result is Fr limbs
    if either argument was limbs, otherwise a 1-D object array of ints.
    """
    x, x_limbs, x_single = _as_limbs(xs, "xs")
    y, y_limbs, y_single = _as_limbs(ys, "ys")
    lengths = {len(v) for v, single in ((x, x_single), (y, y_single)) if not single}
    if len(lengths) > 1:
        raise ValueError(f"xs and ys differ in length: {len(x)} != {len(y)}")
    n = lengths.pop() if lengths else 1
    schedule = fast_schedule()
    out = np.empty((n, 4), dtype=np.uint64)
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        states = np.zeros((stop - start, 3, 4), dtype=np.uint64)
        states[:, 1] = x[0] if x_single else x[start:stop]
        states[:, 2] = y[0] if y_single else y[start:stop]
        out[start:stop] = native.permute_batch(states, schedule)[:, 0]
    return out if x_limbs or y_limbs else limbs_to_object(out)
