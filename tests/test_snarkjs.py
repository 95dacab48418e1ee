"""circom/snarkjs Groth16 circuits with the real tools: proofq's proofs pass
``snarkjs groth16 verify``, snarkjs's proofs pass ``proofq verify``, and tampered proofs or
public signals are rejected by both. Bad files are one line naming the file and field."""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from click.testing import CliRunner

from client.cli import main
from config.settings import get_settings
from snark import groth16
from snark.curve import G1Point, Scalar
from snark.fields import FQ_MODULUS, FR_MODULUS, limbs_to_ints
from snark.keys import KeyFileError
from snark.qap import ODD
from snark.params import load_key
from snark.snarkjs.binfile import SnarkjsFormatError
from snark.snarkjs.json_formats import proof_from_json, proof_to_json
from snark.snarkjs.keystore import import_zkey, zkey_id
from snark.snarkjs.witness import public_inputs
from snark.snarkjs.wtns import read_wtns
from snark.snarkjs.zkey import read_zkey
from tests.snarkjs_tools import snarkjs_fixtures

SEED = random.randrange(2**32)
print(f"test_snarkjs seed {SEED}")


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    return snarkjs_fixtures(tmp_path_factory)


@pytest.fixture(scope="module")
def tools(fixtures):
    return fixtures[0]


@pytest.fixture(scope="module", params=["chain-20", "secret-100", "chain-200"])
def circuit(fixtures, request):
    return fixtures[1][request.param]


@pytest.fixture(scope="module")
def params_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("snarkjs-params")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROOFQ_PARAMS_DIR", str(path))
        get_settings.cache_clear()
        yield path
    get_settings.cache_clear()


def run(*args, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == code, (result.exit_code, result.output)
    if code == 2:
        assert "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
    return result.output


@pytest.fixture(scope="module")
def proved(circuit, params_dir, tmp_path_factory):
    """proofq's proof of a fresh witness (seeded inputs), via the CLI."""
    rng = random.Random(f"{SEED}-{circuit.name}")
    work = tmp_path_factory.mktemp(f"proved-{circuit.name}")
    wtns = circuit.witness(rng.randrange(1, FR_MODULUS), rng.randrange(1, FR_MODULUS),
                           work / "w.wtns")
    key_id = run("keys", "add", circuit.zkey).strip()
    assert key_id == zkey_id(circuit.zkey)
    out = json.loads(run("prove", "--zkey", circuit.zkey, "--wtns", wtns,
                         "-o", work / "proof.json", "--public", work / "public.json",
                         "--backend", "cpu", "--json"))
    assert out["key_id"] == key_id
    return work


# -- accepted by snarkjs, and snarkjs's proofs accepted here -----------------------------
def test_snarkjs_accepts_proofq_proof(tools, circuit, proved):
    assert tools.groth16_verify(circuit.vk, proved / "public.json", proved / "proof.json")
    run("verify", "--vk", circuit.vk, "--public", proved / "public.json",
        "--proof", proved / "proof.json")


def test_public_json_lists_outputs_then_public_inputs(circuit, proved):
    public = json.loads((proved / "public.json").read_text())
    nPublic = json.loads(circuit.vk.read_text())["nPublic"]
    witness = read_wtns(proved / "w.wtns")
    assert public == [str(v) for v in limbs_to_ints(witness[1:1 + nPublic])]
    if circuit.name.startswith("chain"):  # outputs c, d first, then the public inputs
        inputs = json.loads((proved / "w.input.json").read_text())
        assert public[2:] == [inputs[name] for name in ("a", "b")][:nPublic - 2]


def test_proofq_accepts_snarkjs_proof(tools, circuit, proved):
    tools.snarkjs("groth16", "prove", circuit.zkey, proved / "w.wtns",
                  proved / "sj-proof.json", proved / "sj-public.json")
    assert (json.loads((proved / "sj-public.json").read_text())
            == json.loads((proved / "public.json").read_text()))
    run("verify", "--vk", circuit.vk, "--public", proved / "sj-public.json",
        "--proof", proved / "sj-proof.json")


# -- tampering ---------------------------------------------------------------------------
def _write(path, data) -> None:
    path.write_text(json.dumps(data))


def test_tampered_proof_rejected_by_both(tools, circuit, proved, tmp_path):
    rng = random.Random(f"{SEED}-tamper-{circuit.name}")
    proof = proof_from_json(json.loads((proved / "proof.json").read_text()))
    field = rng.choice(["a", "c"])
    moved = getattr(proof, field) + G1Point() * Scalar(rng.randrange(1, FR_MODULUS))
    tampered = proof_to_json(type(proof)(**{**vars(proof), field: moved}))
    _write(tmp_path / "proof.json", tampered)
    assert not tools.groth16_verify(circuit.vk, proved / "public.json", tmp_path / "proof.json")
    run("verify", "--vk", circuit.vk, "--public", proved / "public.json",
        "--proof", tmp_path / "proof.json", code=1)


def test_tampered_public_rejected_by_both(tools, circuit, proved, tmp_path):
    public = json.loads((proved / "public.json").read_text())
    if not public:
        pytest.skip(f"{circuit.name} has no public signals")
    rng = random.Random(f"{SEED}-public-{circuit.name}")
    i = rng.randrange(len(public))
    public[i] = str((int(public[i]) + rng.randrange(1, FR_MODULUS)) % FR_MODULUS)
    _write(tmp_path / "public.json", public)
    assert not tools.groth16_verify(circuit.vk, tmp_path / "public.json", proved / "proof.json")
    run("verify", "--vk", circuit.vk, "--public", tmp_path / "public.json",
        "--proof", proved / "proof.json", code=1)


def test_malformed_files_are_one_line_exit_2(circuit, proved, tmp_path):
    proof = json.loads((proved / "proof.json").read_text())
    off_curve = {**proof, "pi_a": [proof["pi_a"][0], str((int(proof["pi_a"][1]) + 1)
                                                          % FQ_MODULUS), "1"]}
    cases = {
        "off-curve": (off_curve, "pi_a"),
        "not-decimal": ({**proof, "pi_c": ["0x12", proof["pi_c"][1], "1"]}, "pi_c[0]"),
        "other-curve": ({**proof, "curve": "bn128"}, "curve"),
        "short": ({**proof, "pi_b": proof["pi_b"][:2]}, "pi_b"),
    }
    for name, (data, field) in cases.items():
        _write(tmp_path / f"{name}.json", data)
        out = run("verify", "--vk", circuit.vk, "--public", proved / "public.json",
                  "--proof", tmp_path / f"{name}.json", code=2)
        assert f"{name}.json" in out and field in out, (name, out)
    public = json.loads((proved / "public.json").read_text())
    _write(tmp_path / "extra.json", public + ["1"])
    out = run("verify", "--vk", circuit.vk, "--public", tmp_path / "extra.json",
              "--proof", proved / "proof.json", code=2)
    assert "public signals" in out
    (tmp_path / "broken.json").write_text("{")
    assert "not valid JSON" in run("verify", "--vk", tmp_path / "broken.json", "--public",
                                   proved / "public.json", "--proof", proved / "proof.json",
                                   code=2)


# -- import, keys, witnesses -------------------------------------------------------------
def test_import_stores_checked_key_under_its_hash(circuit, tmp_path):
    key = import_zkey(circuit.zkey, tmp_path)
    digest = hashlib.sha256(circuit.zkey.read_bytes()).hexdigest()[:32]
    assert key.circuit_id == digest and (tmp_path / digest / "manifest.json").exists()
    assert key.qap is ODD and len(key.h_g1) == key.domain_size
    assert import_zkey(circuit.zkey, tmp_path).circuit_id == digest  # found, not re-imported
    zkey = read_zkey(circuit.zkey)
    assert key.r1cs.num_variables == zkey.n_vars and key.vk.num_public == zkey.n_public
    # The vk's points are the ones snarkjs exported.
    vk = json.loads(circuit.vk.read_text())
    x, y = (int(v) for v in vk["vk_alpha_1"][:2])
    want = G1Point.from_xy_bytes_le(x.to_bytes(48, "little") + y.to_bytes(48, "little"))
    assert key.vk.alpha_g1 == want
    # Stored arrays are checked against the manifest on load.
    npy = tmp_path / digest / "h_g1.npy"
    data = bytearray(npy.read_bytes())
    data[-1] ^= 1
    npy.write_bytes(bytes(data))
    with pytest.raises(KeyFileError, match="h_g1.npy: sha256"):
        load_key(tmp_path, digest)


def test_proof_matches_between_api_and_reloaded_key(circuit, proved, tmp_path):
    key = import_zkey(circuit.zkey, tmp_path)
    reloaded = load_key(tmp_path, key.circuit_id)
    witness = read_wtns(proved / "w.wtns")
    r, s = random.randrange(1, FR_MODULUS), random.randrange(1, FR_MODULUS)
    proof = groth16.prove(reloaded, witness, r=r, s=s)
    assert proof.to_bytes() == groth16.prove(key, witness, r=r, s=s).to_bytes()
    assert groth16.verify(key.vk, public_inputs(key, witness), proof)


def _patched(src, dst, offset: int, data: bytes):
    raw = bytearray(src.read_bytes())
    raw[offset:offset + len(data)] = data
    dst.write_bytes(bytes(raw))
    return dst


def _section_offset(path, kind: int) -> int:
    raw = path.read_bytes()
    pos, count = 12, int.from_bytes(raw[8:12], "little")
    for _ in range(count):
        k = int.from_bytes(raw[pos:pos + 4], "little")
        size = int.from_bytes(raw[pos + 4:pos + 12], "little")
        if k == kind:
            return pos + 12
        pos += 12 + size
    raise AssertionError(f"no section {kind}")


BN128_Q = 0x30644E72E131A029B85045B68181585D97816A916871CA8D3C208C16D87CFD47
BN128_R = 0x30644E72E131A029B85045B68181585D2833E84879B9709143E1F593F0000001


def test_bad_zkeys_name_the_field(fixtures, params_dir, tmp_path):
    zkey = fixtures[1]["chain-20"].zkey
    header = _section_offset(zkey, 2)
    cases = {
        "plonk": (_section_offset(zkey, 1), (2).to_bytes(4, "little"), "protocol: plonk"),
        "bn128": (header + 4, BN128_Q.to_bytes(48, "little"), "header q: the file is for bn128"),
        # as snarkjs writes a bn128 key: a 32-byte base field (before: "header n8q: 32-byte")
        "bn128-as-written": (header, (32).to_bytes(4, "little") + BN128_Q.to_bytes(32, "little"),
                             "header q: the file is for bn128"),
        "off-curve": (_section_offset(zkey, 5) + 96 * 3 + 50, b"\x01\x02", "a_g1["),
        "magic": (0, b"ptau", "not a zkey file"),
    }
    for name, (offset, data, message) in cases.items():
        path = _patched(zkey, tmp_path / f"{name}.zkey", offset, data)
        with pytest.raises(SnarkjsFormatError, match=message.replace("[", r"\[")):
            import_zkey(path, tmp_path / "params")
        out = run("keys", "add", path, code=2)
        assert f"{name}.zkey" in out
    truncated = tmp_path / "truncated.zkey"
    truncated.write_bytes(zkey.read_bytes()[:-100])
    assert "truncated" in run("keys", "add", truncated, code=2)
    assert not (tmp_path / "params").exists() or not any((tmp_path / "params").iterdir())


def test_bad_witnesses_name_the_field(fixtures, params_dir, tmp_path):
    small, large = fixtures[1]["chain-20"], fixtures[1]["chain-200"]
    rng = random.Random(f"{SEED}-witness")
    wtns = small.witness(rng.randrange(1, 1000), rng.randrange(1, 1000), tmp_path / "w.wtns")
    other = large.witness(2, 3, tmp_path / "other.wtns")
    out = tmp_path / "proof.json", tmp_path / "public.json"
    prove = ("prove", "--zkey", small.zkey, "-o", out[0], "--public", out[1], "--backend", "cpu")
    assert "other.wtns" in run(*prove, "--wtns", other, code=2)
    bn128 = _patched(wtns, tmp_path / "bn128.wtns", _section_offset(wtns, 1) + 4,
                     BN128_R.to_bytes(32, "little"))
    assert "header prime: the file is for bn128" in run(*prove, "--wtns", bn128, code=2)
    # A witness that does not satisfy the circuit: the proof fails its check, nothing written.
    values = _section_offset(wtns, 2)
    n_vars = len(read_wtns(wtns))
    bad = _patched(wtns, tmp_path / "bad.wtns", values + 32 * (n_vars - 1), b"\x07")
    assert "does not verify" in run(*prove, "--wtns", bad, code=2)
    assert not out[0].exists() and not out[1].exists()
    not_canonical = _patched(wtns, tmp_path / "big.wtns", values + 32, b"\xff" * 32)
    assert "witness[1]: not below r" in run(*prove, "--wtns", not_canonical, code=2)
