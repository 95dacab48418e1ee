"""ChaCha on numpy, one block per row: rand_chacha's ChaCha8 (the DRG parents) and RFC 8439's
ChaCha20 (synthetic PoRep's challenges).

Both are the same 4×4 state of u32 words: the constant, the 8 key words, and a last row that
is rand_chacha's 64-bit block counter and zero stream (``chacha8_block``) or RFC 8439's
32-bit counter and 96-bit nonce (``chacha20_blocks``); R rounds, then the initial state added.
"""

from __future__ import annotations

import numpy as np

_U32 = np.uint32
_SIGMA = np.frombuffer(b"expand 32-byte k", dtype="<u4")
#: The 4×4 state's columns, then its diagonals: ChaCha's double round.
COLUMNS_THEN_DIAGONALS = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
                          (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))


def rotl32(x: np.ndarray, r: int) -> np.ndarray:
    return (x << _U32(r)) | (x >> _U32(32 - r))


def _quarter(s: list, a: int, b: int, c: int, d: int) -> None:
    s[a] += s[b]
    s[d] = rotl32(s[d] ^ s[a], 16)
    s[c] += s[d]
    s[b] = rotl32(s[b] ^ s[c], 12)
    s[a] += s[b]
    s[d] = rotl32(s[d] ^ s[a], 8)
    s[c] += s[d]
    s[b] = rotl32(s[b] ^ s[c], 7)


def chacha_blocks(keys: np.ndarray, last_row: np.ndarray, rounds: int) -> np.ndarray:
    """One block per row: ``keys`` uint32 ``(n, 8)``, ``last_row`` uint32 ``(n, 4)`` →
    keystream words uint32 ``(n, 16)``."""
    n = len(keys)
    initial = [np.full(n, w, dtype=_U32) for w in _SIGMA]
    initial += [np.ascontiguousarray(keys[:, i], dtype=_U32) for i in range(8)]
    initial += [np.ascontiguousarray(last_row[:, i], dtype=_U32) for i in range(4)]
    s = [w.copy() for w in initial]
    for _ in range(rounds // 2):  # a double round: columns, then diagonals
        for a, b, c, d in COLUMNS_THEN_DIAGONALS:
            _quarter(s, a, b, c, d)
    return np.stack([x + y for x, y in zip(s, initial)], axis=1)


def chacha8_block(keys: np.ndarray, counter: int) -> np.ndarray:
    """One ChaCha8 block (counter ``counter``, stream 0) for each 32-byte key: ``keys`` uint32
    ``(n, 8)`` LE key words, result ``(n, 16)`` keystream words (rand_chacha's layout)."""
    row = np.array([counter & 0xFFFFFFFF, counter >> 32, 0, 0], dtype=_U32)
    return chacha_blocks(keys, np.broadcast_to(row, (len(keys), 4)), 8)


def chacha20_blocks(key: bytes, nonce: bytes, blocks: np.ndarray) -> np.ndarray:
    """RFC 8439 ChaCha20 keystream blocks ``blocks`` (block counters, int) of one key and
    96-bit nonce: uint8 ``(len(blocks), 64)``."""
    blocks = np.asarray(blocks, dtype=np.int64).reshape(-1)
    keys = np.broadcast_to(np.frombuffer(key, dtype="<u4"), (len(blocks), 8))
    row = np.empty((len(blocks), 4), dtype=_U32)
    row[:, 0] = blocks.astype(_U32)
    row[:, 1:] = np.frombuffer(nonce, dtype="<u4")
    words = chacha_blocks(keys, row, 20)
    return np.ascontiguousarray(words.astype("<u4")).view(np.uint8)
