"""bellperson's .params and .vk: points, layout, keys round trip, and what is refused."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from snark import groth16
from snark.bellperson import (BellpersonFormatError, ParamsFile, decode_points,
                              encode_points, read_key, read_vk, verifying_key, write_key)
from snark.curve import G1Point, G2Point, PointArray, Scalar
from snark.fields import FQ_MODULUS
from snark.filecoin import registered_proof
from snark.filecoin.errors import FilecoinError
from snark.filecoin.params import check_digest, official_paths
from snark.gadgets.assembly import to_r1cs
from snark.gadgets.evaluation import evaluate
from snark.gadgets.program import Program, TemplateBook
from snark.filecoin.circuit.por import pack_digest
from snark.gadgets.blocks import block
from snark.gadgets.num import inputize
from snark.gadgets.sha256 import sha256
from tests.test_gadgets import bits_block, message_bits


def random_points(rng, group: int, n: int, infinity: int = 0) -> PointArray:
    generator = G1Point() if group == 1 else G2Point()
    points = [generator * Scalar(rng.randrange(1, 1 << 200)) for _ in range(n)]
    points += [type(generator).identity()] * infinity
    return PointArray.from_points(points)


@pytest.mark.parametrize("group", [1, 2])
def test_points_round_trip_and_use_zcash_coordinate_order(group, rng):
    points = random_points(rng, group, 5, infinity=1)
    raw = encode_points(points)
    back = decode_points(raw, group, "points")
    assert np.array_equal(back.xy, points.xy) and np.array_equal(back.inf, points.inf)
    for row, point in zip(raw[:5], points.to_points()):
        compressed = point.to_compressed_bytes()  # x in zcash order, flags in byte 0
        assert bytes(row[1:48 * group]) == compressed[1:]
        assert row[0] == compressed[0] & 0x1F
    assert raw[5, 0] == 0x40 and not raw[5, 1:].any()


@pytest.mark.parametrize("damage, message", [
    (lambda r: r.__setitem__((0, 0), r[0, 0] | 0x80), "compressed"),
    (lambda r: r.__setitem__((0, 0), r[0, 0] | 0x20), "sort flag"),
    (lambda r: r.__setitem__((0, slice(0, 48)), np.frombuffer(FQ_MODULUS.to_bytes(48, "big"),
                                                              np.uint8)), "not below q"),
    (lambda r: r.__setitem__((0, 0), 0x40), "infinity flag with coordinates"),
])
def test_malformed_points_are_refused_naming_the_point(damage, message, rng):
    raw = encode_points(random_points(rng, 1, 2))
    damage(raw)
    with pytest.raises(BellpersonFormatError, match=message) as error:
        decode_points(raw, 1, "a")
    assert "a[0]" in str(error.value)


@block
def public(cs, num):
    inputize(cs, num)


@pytest.fixture(scope="module")
def small_circuit(module_rng):
    """SHA-256 of 32 random bytes, the digest packed into a public input."""
    program = Program(TemplateBook(), keep_data=True)
    digest = sha256(program, message_bits(program, module_rng.randbytes(32)))
    public(program, pack_digest_block(program, digest))
    return program, to_r1cs(program), evaluate(program)


@block
def pack_digest_block(cs, digest):
    return pack_digest(cs, digest)


@pytest.fixture(scope="module")
def files(small_circuit, tmp_path_factory):
    _, r1cs, _ = small_circuit
    key = groth16.setup(r1cs, density=True)
    directory = tmp_path_factory.mktemp("bellperson")
    write_key(key, directory / "k.params", directory / "k.vk")
    return key, directory / "k.params", directory / "k.vk"


def test_a_key_round_trips_and_proves_in_bellpersons_form(small_circuit, files):
    _, r1cs, witness = small_circuit
    key, params_path, vk_path = files
    params = ParamsFile(params_path)
    assert params.counts() == {"h": r1cs.domain_size - 1, "l": r1cs.num_aux,
                               "a": int(key.a_density.sum()), "b_g1": int(key.b_density.sum()),
                               "b_g2": int(key.b_density.sum())}
    back = read_key(params, r1cs, "k")
    for name in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1"):
        assert np.array_equal(getattr(back, name).xy, getattr(key, name).xy), name
    proof = groth16.prove(back, witness.assignment())
    vk = verifying_key(read_vk(vk_path), "k")
    assert groth16.verify(vk, witness.public_inputs(), proof)
    wrong = list(witness.public_inputs())
    wrong[0] ^= 1
    assert not groth16.verify(vk, wrong, proof)


def test_a_key_for_another_circuit_is_refused(files, tmp_path):
    _, params_path, _ = files
    other = Program(TemplateBook(), keep_data=True)
    sha256(other, bits_block(other, data={"bits": np.zeros(8, bool)}))
    with pytest.raises(BellpersonFormatError, match="another circuit"):
        read_key(ParamsFile(params_path), to_r1cs(other), "k")


def test_truncated_and_padded_files_are_refused(files, tmp_path):
    _, params_path, vk_path = files
    data = params_path.read_bytes()
    (tmp_path / "short.params").write_bytes(data[:-100])
    with pytest.raises(BellpersonFormatError, match="runs past the end"):
        ParamsFile(tmp_path / "short.params")
    (tmp_path / "long.params").write_bytes(data + b"\0")
    with pytest.raises(BellpersonFormatError, match="1 bytes after B_G2"):
        ParamsFile(tmp_path / "long.params")
    vk = vk_path.read_bytes()
    (tmp_path / "cut.vk").write_bytes(vk[:-10])
    with pytest.raises(BellpersonFormatError, match="too early"):
        read_vk(tmp_path / "cut.vk")
    ic_count = 3 * 96 + 3 * 192  # after alpha, beta_g1, beta_g2, gamma_g2, delta_g1, delta_g2
    (tmp_path / "more.vk").write_bytes(vk[:ic_count] + struct.pack(">I", 1000) + vk[ic_count + 4:])
    with pytest.raises(BellpersonFormatError, match="ic \\(1000 points\\)"):
        read_vk(tmp_path / "more.vk")


def test_an_official_name_with_another_digest_is_refused(tmp_path, rng):
    params_path, vk_path = official_paths(registered_proof("StackedDrg2KiBV1_1"), tmp_path)
    params_path.write_bytes(rng.randbytes(1000))
    with pytest.raises(FilecoinError, match="not parameters.json's 434fb1338ecfaf0f"):
        check_digest(params_path)
    vk_path.write_bytes(rng.randbytes(100))
    with pytest.raises(FilecoinError, match="dc1ade9929ade170"):
        check_digest(vk_path)
