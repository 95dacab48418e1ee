"""A C1's text worked on in pieces, in threads: numpy lets go of the GIL, so the lift of its
byte arrays (``c1_lift``) and its base64 decode (``c1_base64``) each run on every core of
a worker host. Both cut the text the same way: into pieces of at most about ``PIECE`` bytes
(which stay in the cache: one 40 MB piece takes a fifth longer on one core), as many as a
multiple of the threads, so that they finish together.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

#: Threads a text is worked on in …
THREADS = min(16, os.cpu_count() or 1)
#: … in pieces of at most about this many bytes; a text no longer is one piece.
PIECE = 1 << 22

P = TypeVar("P")
R = TypeVar("R")


def piece_count(length: int) -> int:
    """Pieces for a text of ``length`` bytes: the fewest multiple of ``THREADS`` whose
    pieces are at most about ``PIECE`` bytes."""
    return THREADS * -(-length // (THREADS * PIECE))


def map_pieces(work: Callable[[P], R], pieces: Sequence[P]) -> list[R]:
    """``[work(p) for p in pieces]``, on up to ``THREADS`` threads (in the calling thread
    for one piece)."""
    workers = min(THREADS, len(pieces))
    if workers <= 1:
        return [work(piece) for piece in pieces]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(work, pieces))
