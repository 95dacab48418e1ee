"""Taking a C1's field elements out of its JSON text in bulk.

A 32 GiB C1 is ~40 MB of JSON, almost all of it arrays of 32 byte values (about 10 million
numbers): a JSON parser building Python lists of them takes seconds. Here every array with
no other bracket inside (a *flat* array) is cut out of the text at once, its numbers read by
numpy's C number scanner, and replaced by ``""`` in a much smaller skeleton that ``json``
then parses; ``c1_schema`` counts the ``""`` in document order.

It is all or nothing: the bulk reading is used only if every flat array is exactly 32
comma-separated decimal bytes without leading zeros, and the skeleton has no escape (``\\``)
and no ``""`` of its own. Otherwise (whitespace inside arrays, a malformed array, an unusual
text) the caller reads the text in full, so results and errors never depend on this
shortcut. A "flat array" inside a string would leave two string tokens side by side in the
skeleton, which no JSON reader accepts, so strings need no scan here. The checks that make
it exact, per flat array of content length n:

* its numbers are the digit runs of the text in order, the skeleton's own digit runs removed;
* exactly 32 of them, each of 1–3 digits, ≤ 255, with n = 31 + their digit count (so there are
  31 single separators and no leading zeros: "007" has 3 characters but 7 has 1 digit);
* all separators are commas: the commas of the text less the skeleton's are 31 per array.

numpy lets go of the GIL, so a long text is lifted in pieces, in threads, each cut just
before a ``[``: a flat array (``[`` then ``]``, no bracket between) never crosses such a cut,
nor does a digit run, so each piece reads and checks its own arrays as above. A piece whose
digit runs are not its skeleton's plus 32 an array has an array of other than 32 numbers,
which the checks refuse in one piece too; the skeleton's ``""`` and escapes and the commas
are counted over the joined pieces.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from snark.filecoin import c1_pieces
from snark.filecoin.domain import DOMAIN_BYTES

_OPEN, _CLOSE, _QUOTE, _COMMA, _SPACE = (ord(c) for c in '[]", ')
#: Every byte except the digits becomes a space: the text is then numbers and whitespace.
DIGITS_ONLY = bytes(c if 48 <= c <= 57 else _SPACE for c in range(256))
_DIGITS_ONLY_TABLE = np.frombuffer(DIGITS_ONLY, dtype=np.uint8)


class _Piece(NamedTuple):
    """What one piece of the text gives the lift."""

    skeleton: np.ndarray      # the piece, each flat array's ``[…]`` now ``""``
    arrays: int               # how many flat arrays it had
    table: np.ndarray | None  # their bytes, ``uint8 (arrays, 32)``; None: one is malformed
    commas: int               # its commas less its skeleton's


def lift_domains(raw: bytes) -> tuple[bytes, np.ndarray | None]:
    """``(skeleton, table)``: the text with each flat array replaced by ``""`` and the arrays
    as ``uint8 (n, 32)`` in document order; ``(raw, None)`` where that does not apply."""
    return _combine(raw, c1_pieces.map_pieces(_lift_piece, _pieces(raw)))


def _pieces(raw: bytes) -> list[np.ndarray]:
    """The text cut just before a ``[`` into ``c1_pieces.piece_count`` pieces (about)."""
    text = np.frombuffer(raw, dtype=np.uint8)
    if len(raw) <= c1_pieces.PIECE:
        return [text]
    step = -(-len(raw) // c1_pieces.piece_count(len(raw)))
    cuts = [0]
    while (cut := raw.find(b"[", cuts[-1] + step)) != -1:
        cuts.append(cut)
    return [text[a:b] for a, b in zip(cuts, [*cuts[1:], len(raw)])]


def _lift_piece(text: np.ndarray) -> _Piece:
    """One piece's flat arrays read and checked on their own (see the module's docstring)."""
    starts, ends = _flat_arrays(text)
    if not len(starts):
        return _Piece(text, 0, np.zeros((0, DOMAIN_BYTES), dtype=np.uint8), 0)
    skeleton, markers = _skeleton(text, starts, ends)
    table = _numbers(text, skeleton, markers, len(starts))
    if table is None or not _well_formed(table, ends - starts - 1):
        return _Piece(skeleton, len(starts), None, 0)
    commas = np.count_nonzero(text == _COMMA) - np.count_nonzero(skeleton == _COMMA)
    return _Piece(skeleton, len(starts), table.astype(np.uint8), int(commas))


def _combine(raw: bytes, pieces: list[_Piece]) -> tuple[bytes, np.ndarray | None]:
    """The pieces' lifts joined, and the checks that need the whole skeleton."""
    arrays = sum(piece.arrays for piece in pieces)
    tables = [piece.table for piece in pieces if piece.table is not None]
    if not arrays or len(tables) < len(pieces):
        return raw, None
    skeleton = b"".join(piece.skeleton.tobytes() for piece in pieces)
    if b"\\" in skeleton or skeleton.count(b'""') != arrays:
        return raw, None
    if sum(piece.commas for piece in pieces) != (DOMAIN_BYTES - 1) * arrays:
        return raw, None
    return skeleton, np.concatenate(tables)


def _flat_arrays(text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``[`` and ``]`` of every flat array."""
    brackets = np.flatnonzero((text == _OPEN) | (text == _CLOSE))
    closing = text[brackets] == _CLOSE
    first = np.flatnonzero(~closing[:-1] & closing[1:])
    return brackets[first], brackets[first + 1]


def _skeleton(text: np.ndarray, starts: np.ndarray,
              ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The text between the arrays, each array's ``[…]`` becoming ``""``, and the markers'
    positions in it."""
    gap_start = np.concatenate([[0], ends])                # each gap keeps the ']' before it
    gap_end = np.concatenate([starts + 1, [len(text)]])    # … and the '[' after it
    lengths = gap_end - gap_start
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    index = np.arange(lengths.sum()) + np.repeat(gap_start - offsets, lengths)
    skeleton = text[index]
    markers = offsets[:-1] + lengths[:-1] - 1              # where each '[' landed
    skeleton[markers] = _QUOTE
    skeleton[markers + 1] = _QUOTE
    return skeleton, markers


def _numbers(text: np.ndarray, skeleton: np.ndarray, markers: np.ndarray,
             arrays: int) -> np.ndarray | None:
    """The arrays' numbers ``(arrays, 32)``: all digit runs of the text, less the skeleton's
    (a skeleton run before k markers is preceded by k · 32 array numbers)."""
    numbers = scan_numbers(_DIGITS_ONLY_TABLE[text].tobytes())
    if numbers is None:
        return None
    digits = (skeleton - 48) < 10
    runs = np.flatnonzero(digits & ~np.concatenate([[False], digits[:-1]]))
    if len(numbers) != len(runs) + DOMAIN_BYTES * arrays:
        return None
    own = np.arange(len(runs)) + DOMAIN_BYTES * np.searchsorted(markers, runs)
    keep = np.ones(len(numbers), dtype=bool)
    keep[own] = False
    return numbers[keep].reshape(arrays, DOMAIN_BYTES)


def scan_numbers(digits: bytes) -> np.ndarray | None:
    """The numbers of a text of digits and spaces, in order, by numpy's C scanner; one too
    large for ``uint16`` wraps or saturates, which the digit count then refuses (``None``
    should a numpy refuse it instead: the caller then reads the text in full). ``bytes``,
    not an array: the scanner reads past the end of its buffer, and only ``bytes`` end in a
    NUL (from an array's, a number the buffer cuts short is missed)."""
    try:
        numbers = np.fromstring(digits, dtype=np.uint16, sep=" ")
    except ValueError:
        return None
    if len(numbers) == 1 and not digits.strip():
        return numbers[:0]  # spaces alone read as one 0
    return numbers


def _well_formed(table: np.ndarray, content_lengths: np.ndarray) -> bool:
    """Every value a byte, and every array's text exactly its digits and 31 separators."""
    if table.max(initial=0) > 255:
        return False
    extra_digits = np.add((table > 9).view(np.uint8), (table > 99).view(np.uint8))
    digits = DOMAIN_BYTES + extra_digits.sum(axis=1, dtype=np.int64)
    return bool((content_lengths == DOMAIN_BYTES - 1 + digits).all())
