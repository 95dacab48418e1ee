"""The Poseidon permutation of ``snark.poseidon.fast`` (a ``FastSchedule``, any width t)
over a batch of states in native code, byte-identical to ``fast.permute_words``."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from snark.fields import fr_to_limbs
from snark.native.field import fr_limbs
from snark.native.library import call, ptr

if TYPE_CHECKING:
    from snark.poseidon.fast import FastSchedule


@lru_cache(maxsize=8)
def schedule_constants(schedule: "FastSchedule") -> tuple[np.ndarray, int, int, int, int]:
    """The schedule as ``pq_poseidon`` reads it: its constants in one array (head
    constants, head matrices, partial constants, sparse rounds as a, w, v, tail constants,
    the MDS matrix) and t, head, partial and tail round counts."""
    t = len(schedule.mds)
    values: list[int] = []
    for row in schedule.head_constants:
        values += row
    for matrix in schedule.head_matrices:
        for row in matrix:
            values += row
    values += schedule.partial_constants
    for sparse in schedule.sparse_rounds:
        values += [sparse.a, *sparse.w, *sparse.v]
    for row in schedule.tail_constants:
        values += row
    for row in schedule.mds:
        values += row
    return (fr_to_limbs(values), t, len(schedule.head_constants),
            len(schedule.partial_constants), len(schedule.tail_constants))


def permute_batch(states: np.ndarray, schedule: "FastSchedule") -> np.ndarray:
    """The permutation of every state: ``states`` and the result are ``(n, t, 4)``
    standard-form limbs."""
    constants, t, head, partial, tail = schedule_constants(schedule)
    if states.ndim != 3 or states.shape[1:] != (t, 4):
        raise ValueError(f"states: expected shape (n, {t}, 4), got {states.shape}")
    n = states.shape[0]
    flat = fr_limbs(states.reshape(n * t, 4), "states")
    out = np.empty((n, t, 4), dtype=np.uint64)
    call("pq_poseidon", ptr(constants), constants.shape[0], t, schedule.alpha, head, partial,
         tail, ptr(flat), ptr(out), n)
    return out
