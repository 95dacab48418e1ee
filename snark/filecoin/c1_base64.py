"""Decoding Curio's ``Phase1Out`` (the C1's JSON, base64: ~51 MB at 32 GiB) in threads.

``binascii.a2b_base64`` holds the GIL: 0.1–0.2 s of one core for a 32 GiB C1, the largest
serial step of its parse once the arrays are lifted in threads (``c1_lift``). Here all but
the last quantum is decoded by numpy in pieces, in threads (a lookup of each character's six
bits, then three bytes from four), and the last quantum, which may be padded, by binascii.
The result is ``binascii.a2b_base64(data, strict_mode=True)``'s, and so is every error: a
text with anything but the alphabet before its last four characters, or whose length is not
a multiple of four, is handed to binascii whole, which names the problem.
"""

from __future__ import annotations

import binascii

import numpy as np

from snark.filecoin import c1_pieces

_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_NOT_BASE64 = 64
#: Each byte's six bits, or ``_NOT_BASE64``.
_SIX_BITS = np.full(256, _NOT_BASE64, dtype=np.uint8)
_SIX_BITS[np.frombuffer(_ALPHABET, dtype=np.uint8)] = np.arange(64, dtype=np.uint8)
#: Below this many threads binascii's one pass wins (51 MB: 115 ms; numpy's passes 196 ms
#: on one core, 131 ms on two, of the development machine).
MIN_THREADS = 4


def decode_base64(data: bytes) -> bytes:
    """``binascii.a2b_base64(data, strict_mode=True)``, its bulk in threads (texts up to
    ``c1_pieces.PIECE`` long are binascii's alone)."""
    if c1_pieces.THREADS < MIN_THREADS or len(data) <= c1_pieces.PIECE or len(data) % 4:
        return binascii.a2b_base64(data, strict_mode=True)
    body = np.frombuffer(data, dtype=np.uint8, count=len(data) - 4).reshape(-1, 4)
    pieces = np.array_split(body, c1_pieces.piece_count(len(data)))
    decoded = [part for part in c1_pieces.map_pieces(_quanta, pieces) if part is not None]
    if len(decoded) < len(pieces):
        return binascii.a2b_base64(data, strict_mode=True)  # raises, naming the problem
    try:
        last = binascii.a2b_base64(data[-4:], strict_mode=True)
    except binascii.Error:
        return binascii.a2b_base64(data, strict_mode=True)
    return b"".join(decoded) + last


def _quanta(text: np.ndarray) -> bytes | None:
    """Three bytes from each row of four characters; None where one is not in the alphabet
    (padding included: it may only end the text)."""
    six = _SIX_BITS[text]
    if (six == _NOT_BASE64).any():
        return None
    out = np.empty((len(text), 3), dtype=np.uint8)
    out[:, 0] = six[:, 0] << 2 | six[:, 1] >> 4
    out[:, 1] = six[:, 1] << 4 | six[:, 2] >> 2  # uint8: the shifts drop the high bits
    out[:, 2] = six[:, 2] << 6 | six[:, 3]
    return out.tobytes()
