"""``Phase1Out`` decoded in threads (``c1_base64``): the bytes and the errors of
``binascii.a2b_base64(strict_mode=True)``, on random payloads cut into tiny pieces and on
every kind of damage."""

from __future__ import annotations

import base64
import binascii
import random

import pytest

from snark.filecoin import c1_base64, c1_pieces
from snark.filecoin.c1_base64 import decode_base64


@pytest.fixture(autouse=True)
def _tiny_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of a few quanta on 4 threads, whatever this machine's cores."""
    monkeypatch.setattr(c1_pieces, "PIECE", 12)
    monkeypatch.setattr(c1_pieces, "THREADS", 4)


def _binascii(data: bytes) -> bytes | str:
    try:
        return binascii.a2b_base64(data, strict_mode=True)
    except binascii.Error as exc:
        return f"error: {exc}"


def _ours(data: bytes) -> bytes | str:
    try:
        return decode_base64(data)
    except binascii.Error as exc:
        return f"error: {exc}"


def _damaged(rng: random.Random, text: bytes) -> bytes:
    """The text with one kind of damage a payload might carry."""
    at = rng.randrange(len(text) + 1)
    damage = rng.choice([b"=", b"==", b"\n", b" ", b"-", b"_", b"\x00", b"\xff", b"A", b"AB"])
    if rng.random() < 0.5:
        return text[:at] + damage + text[at:]
    return text[:at] + damage + text[at + len(damage):]


def test_random_payloads_decode_as_binascii_decodes_them(rng: random.Random) -> None:
    for _ in range(300):
        payload = rng.randbytes(rng.randrange(0, 400))
        text = base64.b64encode(payload)
        assert decode_base64(text) == payload


def test_every_damage_gives_binascii_s_bytes_or_its_error(rng: random.Random) -> None:
    outcomes = set()
    for _ in range(600):
        text = _damaged(rng, base64.b64encode(rng.randbytes(rng.randrange(9, 300))))
        ours, theirs = _ours(text), _binascii(text)
        assert ours == theirs, text
        outcomes.add(isinstance(theirs, str))
    assert outcomes == {True, False}  # both kinds were tried


def test_short_texts_and_few_threads_are_binascii_s(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(c1_base64, "_quanta", lambda text: calls.append(text))
    monkeypatch.setattr(c1_pieces, "PIECE", 1 << 22)
    assert decode_base64(base64.b64encode(b"a short payload")) == b"a short payload"
    monkeypatch.setattr(c1_pieces, "PIECE", 12)
    monkeypatch.setattr(c1_pieces, "THREADS", c1_base64.MIN_THREADS - 1)
    assert decode_base64(base64.b64encode(bytes(300))) == bytes(300)
    assert not calls
