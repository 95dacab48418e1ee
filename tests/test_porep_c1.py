"""C1 parsing: shape and type errors name the field in one line (no proofs, fast)."""

from __future__ import annotations

import json
import re

import pytest

from snark.job_input import InputLimits
from snark.fields import FR_MODULUS, limbs_to_ints, random_fr
from snark.porep.c1 import (FR_HEX_PATTERN, C1Error, circuit_name, fr_hex, parse_c1, parse_c1_hex,
                            parse_size, size_name)
from snark.porep.proof_type import PorepType


def random_c1_dict(rng, sector_size=2048, partitions=2, challenges=3) -> dict:
    """A C1 of the right shape filled with random field elements (values unchecked here)."""
    depth = (sector_size // 32).bit_length() - 1
    values = iter(limbs_to_ints(random_fr(5 + partitions * challenges * (2 + 2 * depth), rng)))
    hx = lambda: fr_hex(next(values))  # noqa: E731
    doc = {"sector_size": sector_size, "partitions": partitions, "challenges": challenges}
    doc |= {name: hx() for name in ("comm_d", "comm_r", "replica_id", "seed", "ticket")}
    doc["vanilla_proofs"] = [{"challenges": [
        {"index": int(rng.integers(sector_size // 32)), "data_leaf": hx(), "replica_leaf": hx(),
         "d_path": [hx() for _ in range(depth)], "r_path": [hx() for _ in range(depth)]}
        for _ in range(challenges)]} for _ in range(partitions)]
    return doc


def test_round_trip_through_json(np_rng):
    doc = random_c1_dict(np_rng)
    c1 = parse_c1(json.dumps(doc))
    assert c1.nodes == 64 and c1.depth == 6
    assert json.loads(c1.to_json()) == doc | {"format": "proofq-porep-c1/1"}
    assert parse_c1(c1.to_json().encode()) == c1 == parse_c1(doc)


def test_hex_model_writes_the_int_models_canonical_json(np_rng):
    """A producer stores what ``parse_c1_hex`` writes; a worker reads it with ``parse_c1``:
    both must agree on every value, upper-case input included."""
    doc = random_c1_dict(np_rng)
    doc["comm_d"] = "0x" + doc["comm_d"][2:].upper()
    _first_challenge(doc)["d_path"][1] = "0x" + _first_challenge(doc)["d_path"][1][2:].upper()
    text = parse_c1_hex(json.dumps(doc)).to_json()
    assert text == parse_c1(doc).to_json()
    assert parse_c1(text).to_json() == text


def test_the_hex_pattern_is_exactly_below_the_modulus(np_rng):
    """Values at and around r, and values sharing each prefix of r's digits, are accepted by
    the regex exactly when they are below r."""
    digits = f"{FR_MODULUS:064x}"
    values = [0, 1, FR_MODULUS - 1, FR_MODULUS, FR_MODULUS + 1, (1 << 256) - 1]
    for i in range(64):  # r's first i digits, then a random tail
        tail = int(np_rng.integers(16 ** min(64 - i, 15)))
        values += [int(digits[:i] + f"{tail:0{64 - i}x}"[-(64 - i):], 16) if i < 64 else 0,
                   int(digits[:i] + "f" * (64 - i), 16), int(digits[:i] + "0" * (64 - i), 16)]
    values += [int.from_bytes(np_rng.bytes(32), "big") for _ in range(200)]
    pattern = re.compile(FR_HEX_PATTERN)
    for value in values:
        assert bool(pattern.match(fr_hex(value))) == (value < FR_MODULUS), fr_hex(value)


def _first_challenge(doc):
    return doc["vanilla_proofs"][0]["challenges"][0]


BAD = {
    "missing field": (lambda d: d.pop("seed"), "seed: required field is missing"),
    "missing nested field": (lambda d: _first_challenge(d).pop("r_path"),
                             "vanilla_proofs[0].challenges[0].r_path: required field"),
    "unknown field": (lambda d: d.update(extra=1), "extra: unknown field"),
    "wrong type int as str": (lambda d: d.update(sector_size="2048"), "sector_size: input should"),
    "wrong type hex as int": (lambda d: d.update(comm_r=5), "comm_r: expected a 0x-prefixed"),
    "bool is not an int": (lambda d: _first_challenge(d).update(index=True),
                           "vanilla_proofs[0].challenges[0].index"),
    "malformed hex": (lambda d: d.update(comm_d="0x12ab"),
                      "comm_d: malformed hex: expected 0x and 64 hex digits, got 4 digits"),
    "hex one digit long": (lambda d: d.update(comm_d="0x" + "1" * 65),
                           "comm_d: malformed hex: expected 0x and 64 hex digits, got 65 digits"),
    "hex without 0x": (lambda d: d.update(ticket="ab" * 32),
                       "ticket: malformed hex: expected 0x and 64 hex digits, got 64 characters "
                       "not starting with 0x"),
    "hex with junk": (lambda d: d.update(seed="0x" + "0" * 40 + "g" * 24),
                      "seed: malformed hex: 'g' at digit 40 is not a hex digit"),
    "non-canonical hex": (lambda d: d.update(replica_id=fr_hex(FR_MODULUS)),
                          "replica_id: non-canonical"),
    "non-canonical sibling": (lambda d: _first_challenge(d)["d_path"].__setitem__(2,
                                                                                  "0x" + "f" * 64),
                              "vanilla_proofs[0].challenges[0].d_path[2]: non-canonical"),
    "short path": (lambda d: _first_challenge(d)["d_path"].pop(),
                   "vanilla_proofs[0].challenges[0].d_path: expected 6 siblings, got 5"),
    "long path": (lambda d: _first_challenge(d)["r_path"].append(_first_challenge(d)["r_path"][0]),
                  "vanilla_proofs[0].challenges[0].r_path: expected 6 siblings, got 7"),
    "index out of range": (lambda d: _first_challenge(d).update(index=64),
                           "vanilla_proofs[0].challenges[0].index: 64 is out of range"),
    "negative index": (lambda d: _first_challenge(d).update(index=-1),
                       "vanilla_proofs[0].challenges[0].index"),
    "partition count": (lambda d: d.update(partitions=3), "vanilla_proofs: expected 3 partitions"),
    "challenge count": (lambda d: d["vanilla_proofs"][1]["challenges"].pop(),
                        "vanilla_proofs[1].challenges: expected 3 challenges"),
    "sector size not a power of two": (lambda d: d.update(sector_size=3072),
                                       "sector_size: 3072 is not a power of two"),
    "sector size too small": (lambda d: d.update(sector_size=1024), "sector_size: 1024"),
    "sector size too large": (lambda d: d.update(sector_size=1 << 41),
                              "sector_size: 2199023255552"),
    "zero partitions": (lambda d: d.update(partitions=0), "partitions:"),
    "wrong format": (lambda d: d.update(format="other/1"), "format:"),
}


@pytest.mark.parametrize("parse", [parse_c1, parse_c1_hex])
@pytest.mark.parametrize("mutate, expected", BAD.values(), ids=BAD.keys())
def test_bad_input_names_the_field(mutate, expected, parse, np_rng):
    doc = random_c1_dict(np_rng)
    mutate(doc)
    for raw in (doc, json.dumps(doc)):
        with pytest.raises(C1Error) as err:
            parse(raw)
        message = str(err.value)
        assert message.startswith(expected), message
        assert "\n" not in message


@pytest.mark.parametrize("parse", [parse_c1, parse_c1_hex])
def test_every_missing_field_is_named_at_once(parse, np_rng, rng):
    """Before: ``{}`` named one of its nine missing fields."""
    doc = random_c1_dict(np_rng)
    gone = sorted(rng.sample(sorted(doc), rng.randrange(2, len(doc) + 1)), key=list(doc).index)
    for name in gone:
        del doc[name]
    with pytest.raises(C1Error) as err:
        parse(doc)
    expected = f"c1: {len(gone)} required fields are missing: {', '.join(gone)}"
    assert str(err.value) == expected
    with pytest.raises(C1Error, match="^c1: 9 required fields are missing: sector_size, "):
        parse("{}")


def test_input_of_another_kind_is_named_plainly():
    for step in (PorepType().parse, PorepType().admit):
        with pytest.raises(C1Error, match=r"^c1: expected JSON text, bytes, a dict or a C1, "
                                          r"got list$"):
            step([1, 2], InputLimits(1 << 20, 1 << 20))


def test_invalid_json_and_size_limit(np_rng):
    with pytest.raises(C1Error, match=r"^c1: not valid JSON"):
        parse_c1('{"sector_size": ')
    with pytest.raises(C1Error, match=r"^c1: input should be an object, got list"):
        parse_c1("[1, 2]")
    with pytest.raises(C1Error, match=r"^c1: not valid JSON"):  # lone surrogate, bad UTF-8
        parse_c1('{"format": "\ud800"}')
    with pytest.raises(C1Error, match=r"^c1: not valid JSON"):
        parse_c1(b'{"format": "\xff"}')
    raw = json.dumps(random_c1_dict(np_rng))
    with pytest.raises(C1Error, match=r"exceeds max_input_bytes"):
        parse_c1(raw, max_bytes=len(raw) - 1)
    assert parse_c1(raw, max_bytes=len(raw)).to_json()
    # the porep type applies the limits it is given, for workers and producers alike
    tight, enough = InputLimits(len(raw) - 1, 1), InputLimits(len(raw), 1)
    for step in (PorepType().parse, PorepType().admit):
        with pytest.raises(C1Error, match=r"exceeds max_input_bytes"):
            step(raw, tight)
        step(raw, enough)


def test_sizes_and_names():
    assert parse_size("2KiB") == 2048 and parse_size("32GiB") == 32 << 30
    assert parse_size("4096") == 4096 and size_name(8 << 20) == "8MiB"
    assert circuit_name(2048, 7) == "porep-2KiB-k7"
    with pytest.raises(C1Error, match="sector_size: cannot read"):
        parse_size("2 KB")

