"""Strict decoding of compressed points, as bellman/zcash do: each way a proof's or a
verifying key's point can be wrong is refused with its own reason."""

from __future__ import annotations

import json

import pytest

from snark import groth16
from snark.curve import G1Point, G2Point, PointFormatError, Scalar, decode_compressed
from snark.fields import FQ_MODULUS, FR_MODULUS
from snark.keys import KeyFileError, VerifyingKey
from snark.proof import Proof, ProofFormatError
from tests.circuits import random_circuit


def _g1_x(x: int) -> bytes:
    return (x | (0x80 << 376)).to_bytes(48, "big")


def _off_curve_x() -> int:
    """The least x for which x³ + 4 is not a square mod q: no point has it."""
    x = 1
    while pow((x ** 3 + 4) % FQ_MODULUS, (FQ_MODULUS - 1) // 2, FQ_MODULUS) == 1:
        x += 1
    return x


#: 48-byte G1 encodings → the reason they are refused.
BAD_G1 = {
    "infinity": (bytes([0xC0]) + bytes(47), "the point at infinity is not allowed here"),
    "all ones": (b"\xff" * 48, "not canonical: an infinity flag with other bits set"),
    "infinity with larger-y": (bytes([0xE0]) + bytes(47), "not canonical: an infinity flag"),
    "infinity with a stray bit": (bytes([0xC0]) + bytes(46) + b"\x01",
                                  "not canonical: an infinity flag"),
    "uncompressed flag": (bytes(48), "not canonical: the compression flag"),
    "x above q": (_g1_x(FQ_MODULUS), "not canonical: x is not below the field modulus q"),
    "off the curve": (_g1_x(_off_curve_x()), "not on the curve"),
    "outside the subgroup": (_g1_x(0), "not in the prime-order subgroup"),  # (0, ±2)
}


@pytest.mark.parametrize("data, reason", BAD_G1.values(), ids=BAD_G1.keys())
def test_bad_g1_encodings_say_why(data, reason):
    with pytest.raises(PointFormatError, match=reason):
        decode_compressed(data, 1)


def test_g2_infinity_and_non_canonical_x_are_refused():
    with pytest.raises(PointFormatError, match="at infinity"):
        decode_compressed(bytes([0xC0]) + bytes(95), 2)
    high = (FQ_MODULUS | (0x80 << 376)).to_bytes(48, "big")  # x.c1 ≥ q
    with pytest.raises(PointFormatError, match="x is not below"):
        decode_compressed(high + bytes(48), 2)


def test_random_points_round_trip(rng):
    for _ in range(4):
        k = Scalar(rng.randrange(1, FR_MODULUS))
        for group, point in ((1, G1Point() * k), (2, G2Point() * k)):
            assert decode_compressed(point.to_compressed_bytes(), group) == point


@pytest.fixture(scope="module")
def proved(module_rng):
    circuit = random_circuit(num_inputs=2, num_constraints=20, rng=module_rng)
    key = groth16.setup(circuit.compile())
    return key, groth16.prove(key, circuit.witness()).to_bytes()


@pytest.mark.parametrize("part, start, stop", [("a", 0, 48), ("b", 48, 144), ("c", 144, 192)])
def test_a_proof_point_at_infinity_is_malformed(proved, part, start, stop):
    _, proof = proved
    infinity = bytes([0xC0]) + bytes(stop - start - 1)
    with pytest.raises(ProofFormatError, match=f"proof.{part}: the point at infinity"):
        Proof.from_bytes(proof[:start] + infinity + proof[stop:])


def test_a_proof_of_all_ones_is_malformed():
    with pytest.raises(ProofFormatError, match="proof.a: not canonical"):
        Proof.from_bytes(b"\xff" * 192)


def test_verifying_key_refuses_points_at_infinity(proved):
    key, _ = proved
    data = key.vk.to_json()
    data["ic"][1] = G1Point.identity().to_compressed_bytes().hex()
    with pytest.raises(KeyFileError, match=r"vk.json: ic\[1\]: the point at infinity"):
        VerifyingKey.from_json(data)
    data = key.vk.to_json()
    data["delta_g2"] = G2Point.identity().to_compressed_bytes().hex()
    with pytest.raises(KeyFileError, match="vk.json.delta_g2: the point at infinity"):
        VerifyingKey.from_json(data)


def test_verifying_key_hex_errors_say_the_length(proved):
    key, _ = proved
    data = key.vk.to_json()
    data["alpha_g1"] = data["alpha_g1"][:-2]
    with pytest.raises(KeyFileError, match="alpha_g1: expected 96 hex digits .48 bytes., got 94"):
        VerifyingKey.from_json(data)


def test_verifying_key_is_checked_against_the_manifest(proved, tmp_path):
    """A vk.json altered after setup (still a valid key, of other points) is refused."""
    key, _ = proved
    directory = key.save(tmp_path)
    assert VerifyingKey.load(directory).to_json() == key.vk.to_json()
    vk = json.loads((directory / "vk.json").read_text())
    vk["alpha_g1"], vk["ic"][0] = vk["ic"][0], vk["alpha_g1"]
    (directory / "vk.json").write_text(json.dumps(vk, indent=1))
    with pytest.raises(KeyFileError, match="vk.json: sha256 does not match the manifest"):
        VerifyingKey.load(directory)
