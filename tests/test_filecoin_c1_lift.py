"""The bulk reading of a C1's arrays (``c1_lift``): in any number of pieces it gives what one
piece gives, and both what its docstring promises, on random texts of well-formed arrays and
every kind of malformed one."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from snark.filecoin import c1_lift, c1_pieces
from snark.filecoin.c1_lift import lift_domains, scan_numbers
from snark.filecoin.c1_write import phase1_json
from snark.filecoin.registered_proofs import registered_proof
from tests.filecoin_c1s import random_c1

_BYTE = rb"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])"
_WELL_FORMED = re.compile(rb"\[" + _BYTE + rb"(?:," + _BYTE + rb"){31}\]")
_FLAT = re.compile(rb"\[[^\[\]]*\]")


def _promised(text: bytes) -> tuple[bytes, np.ndarray | None]:
    """The module docstring's rule, read with regular expressions."""
    arrays = _FLAT.findall(text)
    skeleton = _FLAT.sub(b'""', text)
    if (not arrays or not all(_WELL_FORMED.fullmatch(a) for a in arrays)
            or b"\\" in skeleton or skeleton.count(b'""') != len(arrays)):
        return text, None
    return skeleton, np.array([[int(v) for v in a[1:-1].split(b",")] for a in arrays],
                              dtype=np.uint8)


def _numbers(rng: random.Random, count: int = 32) -> list[str]:
    return [str(rng.randrange(256)) for _ in range(count)]


def _malformed(rng: random.Random) -> str:
    """An array that is not 32 comma-separated bytes, or one that only nearly is."""
    values = _numbers(rng)
    k = rng.randrange(31)
    kind = rng.randrange(13)
    if kind == 0:
        values[k] = "0" + values[k]                       # a leading zero
    elif kind == 1:
        values[k] = str(rng.choice([256, 999, rng.randrange(256, 1000), 1000,
                                    65536 + int(values[k]), 10 ** 30]))
    elif kind == 2:
        values.pop(k)                                     # 31
    elif kind == 3:
        values.insert(k, values[k])                       # 33
    elif kind == 4:
        values[k] = rng.choice([" ", "\n", "\t"]) + values[k]
    elif kind == 5:
        values[k] = rng.choice(["-", "+", "", "x", '"']) + values[k]
    elif kind == 6:
        values[k] = values[k] + rng.choice([".5", "e2", ",", ";"])
    elif kind == 7:
        values = []
    elif kind == 8:
        values = [rng.choice(["true", "null", '"7"', "{}"])] + values[1:]
    elif kind == 9:                                       # 31 here, 33 in the next array,
        gap = f"]{rng.choice(['', ',', ',7,', ',123,'])}["  # extra length where they meet
        return "[" + ",".join(values[:31]) + ",," + gap + ",".join(_numbers(rng, 33)) + "]"
    elif kind == 10:
        return "[" + ",".join(_numbers(rng, 33)) + "],9,[" + ",,".join(_numbers(rng, 31)) + "]"
    elif kind == 11:                                      # one separator not a comma
        return ("[" + ",".join(values[:k + 1]) + rng.choice([";", " ", ":", "."])
                + ",".join(values[k + 1:]) + "]")
    else:
        return "[" + ",".join(values) + ",]"
    return "[" + ",".join(values) + "]"


def _random_text(rng: random.Random) -> bytes:
    """JSON-like text: flat arrays, nested arrays, strings, numbers and punctuation, and in
    three texts of five one thing that may stop the bulk reading (most often a malformed
    array)."""
    parts = []
    for _ in range(rng.randrange(40)):
        kind = rng.random()
        if kind < 0.5:
            parts.append("[" + ",".join(_numbers(rng)) + "]")
        elif kind < 0.6:
            inner = ["[" + ",".join(_numbers(rng)) + "]" for _ in range(rng.randrange(1, 3))]
            parts.append(rng.choice(["[", "[ ", "[1,"]) + ",".join(inner) + "]")
        elif kind < 0.7:
            parts.append('"' + "".join(rng.choice("ab{},: 07") for _ in range(8)) + '"')
        elif kind < 0.8:
            parts.append(str(rng.randrange(10 ** rng.randrange(1, 25))))
        else:
            parts.append(rng.choice(['{"k":', "}", ",", ", ", ":", " ", "\n"]))
    if rng.random() < 0.6:
        spoiler = _malformed(rng) if rng.random() < 0.7 else rng.choice(
            ['"a""b"', '"\\u0041"', "[]", "[", "]", '"[a]"', '"a[7]"'])
        parts.insert(rng.randrange(len(parts) + 1), spoiler)
    return "".join(parts).encode()


def _same(got: tuple[bytes, np.ndarray | None], want: tuple[bytes, np.ndarray | None]) -> None:
    assert got[0] == want[0]
    if want[1] is None:
        assert got[1] is None
    else:
        assert got[1] is not None and got[1].dtype == np.uint8
        assert np.array_equal(got[1], want[1])


def test_any_pieces_lift_as_one_piece_and_as_promised(rng, monkeypatch):
    """Random texts cut into pieces of a few bytes: a cut lands wherever a ``[`` is, between
    a malformed array's neighbours and next to nested ones."""
    outcomes = {"lifted": 0, "fell back": 0, "in pieces": 0}
    for _ in range(300):
        text = _random_text(rng)
        monkeypatch.setattr(c1_pieces, "PIECE", 1 << 30)
        whole = lift_domains(text)
        _same(whole, _promised(text))
        monkeypatch.setattr(c1_pieces, "PIECE", rng.randrange(1, 100))
        monkeypatch.setattr(c1_pieces, "THREADS", rng.randrange(1, 17))
        _same(lift_domains(text), whole)
        outcomes["lifted" if whole[1] is not None else "fell back"] += 1
        outcomes["in pieces"] += len(c1_lift._pieces(text)) > 1
    assert min(outcomes.values()) > 50, outcomes  # each was tried


@pytest.mark.parametrize("proof", ["StackedDrg2KiBV1_1", "StackedDrg512MiBV1_1"])
def test_a_c1_in_pieces_lifts_as_in_one(proof, np_rng, rng, monkeypatch):
    c1 = random_c1(registered_proof(proof), np_rng)
    raw = phase1_json(c1)
    monkeypatch.setattr(c1_pieces, "PIECE", 1 << 40)
    whole = lift_domains(raw)
    assert whole[1] is not None
    monkeypatch.setattr(c1_pieces, "PIECE", rng.randrange(1, 1 << 12))
    monkeypatch.setattr(c1_pieces, "THREADS", rng.randrange(1, 17))
    assert len(c1_lift._pieces(raw)) > 1
    _same(lift_domains(raw), whole)


def test_numbers_are_the_digit_runs_in_any_pieces(rng):
    """As the lift's pieces scan them: a text cut between numbers reads the same in pieces,
    a piece of spaces alone (which numpy's scanner reads as one 0) or of nothing included."""
    for _ in range(300):
        words = [rng.choice(["", " ", "  "]) + str(rng.randrange(10 ** rng.randrange(1, 5)))
                 .zfill(rng.choice([1, 1, 1, 3])) for _ in range(rng.randrange(30))]
        text = (rng.choice(["", " "]) + " ".join(words) + rng.choice(["", " ", "   "])).encode()
        want = [int(word) for word in text.split()]
        assert scan_numbers(text).tolist() == want
        spaces = [i for i, c in enumerate(text) if c == 32]
        cuts = sorted(rng.sample(spaces, min(len(spaces), rng.randrange(8))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        assert np.concatenate([scan_numbers(p) for p in pieces]).tolist() == want
    assert scan_numbers(b"   ").tolist() == [] and scan_numbers(b"").tolist() == []
