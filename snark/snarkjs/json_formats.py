"""snarkjs's JSON files: ``proof.json``, ``public.json`` and ``verification_key.json``.

Numbers are decimal strings in standard form. Points are projective with affine values:
G1 ``[x, y, "1"]``, G2 ``[[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]``; infinity has z = 0
(``["0", "1", "0"]``). A proof is ``{"pi_a", "pi_b", "pi_c", "protocol": "groth16",
"curve": "bls12381"}``; public.json is the list of public signals. Decoding checks every
point (on the curve, in the subgroup) and names the file and field of anything wrong.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from snark.curve import G1Point, G2Point
from snark.fields import FQ_BYTES, FQ_MODULUS, FR_MODULUS
from snark.keys import VerifyingKey
from snark.proof import Proof
from snark.snarkjs.binfile import SnarkjsFormatError

PROTOCOL = "groth16"
CURVE = "bls12381"


# -- encoding -----------------------------------------------------------------------------
def _coordinates(point: G1Point | G2Point) -> list[int]:
    raw = point.to_xy_bytes_le()
    return [int.from_bytes(raw[i:i + FQ_BYTES], "little") for i in range(0, len(raw), FQ_BYTES)]


def g1_to_json(point: G1Point) -> list[str]:
    if point == G1Point.identity():
        return ["0", "1", "0"]
    x, y = _coordinates(point)
    return [str(x), str(y), "1"]


def g2_to_json(point: G2Point) -> list[list[str]]:
    if point == G2Point.identity():
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    x0, x1, y0, y1 = _coordinates(point)
    return [[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]]


def proof_to_json(proof: Proof) -> dict[str, Any]:
    return {"pi_a": g1_to_json(proof.a), "pi_b": g2_to_json(proof.b),
            "pi_c": g1_to_json(proof.c), "protocol": PROTOCOL, "curve": CURVE}


def public_to_json(values: list[int]) -> list[str]:
    return [str(v) for v in values]


# -- decoding -----------------------------------------------------------------------------
def _number(value: Any, field: str, modulus: int) -> int:
    if not isinstance(value, str) or not value.isdigit() or not value.isascii():
        raise SnarkjsFormatError(f"{field}: expected a decimal string, got {value!r}")
    number = int(value)
    if number >= modulus:
        raise SnarkjsFormatError(f"{field}: {value} is not below the field modulus")
    return number


def _list(value: Any, length: int, field: str) -> list:
    if not isinstance(value, list) or len(value) != length:
        raise SnarkjsFormatError(f"{field}: expected a list of {length}, got {value!r:.80}")
    return value


def g1_from_json(value: Any, field: str) -> G1Point:
    x, y, z = (_number(v, f"{field}[{i}]", FQ_MODULUS)
               for i, v in enumerate(_list(value, 3, field)))
    return _point(G1Point, [x, y], z, field)


def g2_from_json(value: Any, field: str) -> G2Point:
    coords = [[_number(v, f"{field}[{i}][{j}]", FQ_MODULUS)
               for j, v in enumerate(_list(pair, 2, f"{field}[{i}]"))]
              for i, pair in enumerate(_list(value, 3, field))]
    (x0, x1), (y0, y1), z = coords
    return _point(G2Point, [x0, x1, y0, y1], z[0] if z[1] == 0 else -1, field)


def _point(cls, coords: list[int], z: int, field: str):
    if z == 0:
        return cls.identity()
    if z != 1:
        raise SnarkjsFormatError(f"{field}: z must be 1 (affine) or 0 (infinity)")
    try:
        return cls.from_xy_bytes_le(b"".join(c.to_bytes(FQ_BYTES, "little") for c in coords))
    except ValueError as exc:
        raise SnarkjsFormatError(f"{field}: {exc}") from None


def _object(data: Any, name: str, required: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise SnarkjsFormatError(f"{name}: expected a JSON object")
    for key in required:
        if key not in data:
            raise SnarkjsFormatError(f"{name}: missing field {key!r}")
    if data.get("protocol", PROTOCOL) != PROTOCOL:
        raise SnarkjsFormatError(f"{name}: protocol is {data['protocol']!r}, only {PROTOCOL}")
    if data.get("curve", CURVE) != CURVE:
        raise SnarkjsFormatError(f"{name}: curve is {data['curve']!r}, only {CURVE}")
    return data


def proof_from_json(data: Any, name: str = "proof.json") -> Proof:
    data = _object(data, name, ("pi_a", "pi_b", "pi_c"))
    return Proof(g1_from_json(data["pi_a"], f"{name}: pi_a"),
                 g2_from_json(data["pi_b"], f"{name}: pi_b"),
                 g1_from_json(data["pi_c"], f"{name}: pi_c"))


def public_from_json(data: Any, name: str = "public.json") -> list[int]:
    if not isinstance(data, list):
        raise SnarkjsFormatError(f"{name}: expected a JSON list of decimal strings")
    return [_number(v, f"{name}[{i}]", FR_MODULUS) for i, v in enumerate(data)]


def vk_from_json(data: Any, name: str = "verification_key.json") -> VerifyingKey:
    """A snarkjs verifying key; its id is a hash of the points (snarkjs has none)."""
    data = _object(data, name, ("nPublic", "vk_alpha_1", "vk_beta_2", "vk_gamma_2",
                                "vk_delta_2", "IC"))
    ic = data["IC"]
    if not isinstance(ic, list) or not isinstance(data["nPublic"], int) \
            or len(ic) != data["nPublic"] + 1:
        raise SnarkjsFormatError(f"{name}: IC must hold nPublic + 1 points")
    canonical = json.dumps([data[k] for k in ("vk_alpha_1", "vk_beta_2", "vk_gamma_2",
                                              "vk_delta_2", "IC")], separators=(",", ":"))
    return VerifyingKey(
        hashlib.sha256(canonical.encode()).hexdigest()[:32],
        g1_from_json(data["vk_alpha_1"], f"{name}: vk_alpha_1"),
        g2_from_json(data["vk_beta_2"], f"{name}: vk_beta_2"),
        g2_from_json(data["vk_gamma_2"], f"{name}: vk_gamma_2"),
        g2_from_json(data["vk_delta_2"], f"{name}: vk_delta_2"),
        [g1_from_json(p, f"{name}: IC[{i}]") for i, p in enumerate(ic)])
