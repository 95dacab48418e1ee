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
"""

from __future__ import annotations

import warnings

import numpy as np

from snark.filecoin.domain import DOMAIN_BYTES

_OPEN, _CLOSE, _QUOTE, _COMMA = (ord(c) for c in '[]",')
#: Every byte except the digits becomes a space: the text is then numbers and whitespace.
DIGITS_ONLY = bytes(c if 48 <= c <= 57 else 32 for c in range(256))


def lift_domains(raw: bytes) -> tuple[bytes, np.ndarray | None]:
    """``(skeleton, table)``: the text with each flat array replaced by ``""`` and the arrays
    as ``uint8 (n, 32)`` in document order; ``(raw, None)`` where that does not apply."""
    text = np.frombuffer(raw, dtype=np.uint8)
    starts, ends = _flat_arrays(text)
    if not len(starts):
        return raw, None
    skeleton, markers = _skeleton(text, starts, ends)
    skeleton_text = skeleton.tobytes()
    if b"\\" in skeleton_text or skeleton_text.count(b'""') != len(starts):
        return raw, None
    table = _numbers(raw, skeleton, markers, len(starts))
    if table is None or not _well_formed(table, ends - starts - 1):
        return raw, None
    commas = np.count_nonzero(text == _COMMA) - np.count_nonzero(skeleton == _COMMA)
    if commas != (DOMAIN_BYTES - 1) * len(starts):
        return raw, None
    return skeleton_text, table.astype(np.uint8)


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


def _numbers(raw: bytes, skeleton: np.ndarray, markers: np.ndarray,
             arrays: int) -> np.ndarray | None:
    """The arrays' numbers ``(arrays, 32)``: all digit runs of the text, less the skeleton's
    (a skeleton run before k markers is preceded by k · 32 array numbers)."""
    with warnings.catch_warnings():  # fromstring's text mode is deprecated, still the fastest
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            numbers = np.fromstring(raw.translate(DIGITS_ONLY), dtype=np.uint16, sep=" ")
        except ValueError:  # a number beyond what the scanner takes
            return None
    digits = (skeleton - 48) < 10
    runs = np.flatnonzero(digits & ~np.concatenate([[False], digits[:-1]]))
    if len(numbers) != len(runs) + DOMAIN_BYTES * arrays:
        return None
    own = np.arange(len(runs)) + DOMAIN_BYTES * np.searchsorted(markers, runs)
    keep = np.ones(len(numbers), dtype=bool)
    keep[own] = False
    return numbers[keep].reshape(arrays, DOMAIN_BYTES)


def _well_formed(table: np.ndarray, content_lengths: np.ndarray) -> bool:
    """Every value a byte, and every array's text exactly its digits and 31 separators."""
    if table.max(initial=0) > 255:
        return False
    extra_digits = np.add((table > 9).view(np.uint8), (table > 99).view(np.uint8))
    digits = DOMAIN_BYTES + extra_digits.sum(axis=1, dtype=np.int64)
    return bool((content_lengths == DOMAIN_BYTES - 1 + digits).all())
