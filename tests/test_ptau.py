"""bench/ptau.py's known-τ ptau: its points relate as a prepared powers of tau's must (checked
with pairings and sums, not with τ), and snarkjs sets up keys from it whose proofs — snarkjs's
and proofq's — pass ``snarkjs groth16 verify``."""

from __future__ import annotations

import json

import pytest

from bench.ptau import write_ptau
from snark import groth16
from snark.cpu_backend import CpuBackend
from snark.curve import GT, G1Point, G2Point, scalars_from_ints
from snark.domain import powers
from snark.fields import FQ_BYTES, FQ_MODULUS, FR_MODULUS
from snark.snarkjs.binfile import le_int, read_sections, u32s
from snark.snarkjs.json_formats import proof_to_json, public_to_json
from snark.snarkjs.keystore import import_zkey
from snark.snarkjs.points import check_points, decode_points, point_size
from snark.snarkjs.roots import SNARKJS_ROOT_OF_UNITY
from snark.snarkjs.witness import public_inputs
from snark.snarkjs.wtns import read_wtns
from tests.snarkjs_tools import Tools, build_circuit, tools_bin


def read_ptau(path, power: int) -> dict[int, list]:
    """Every section as checked arkworks points (the header checked here); section 12–15 as
    one list per power."""
    file = read_sections(path, b"ptau", (1,))
    header = file.section(1, "header")
    assert u32s(header, 0, 1) == [FQ_BYTES] and le_int(header, 4, FQ_BYTES) == FQ_MODULUS
    assert u32s(header, 4 + FQ_BYTES, 2) == [power, power] and header.size == 12 + FQ_BYTES
    assert u32s(file.section(7, "contributions"), 0, 1) == [0]
    n = 1 << power

    def points(kind: int, group: int, counts: list[int]) -> list[list]:
        raw = file.section(kind, str(kind))
        assert raw.size == sum(counts) * point_size(group)
        decoded = decode_points(raw, group, sum(counts), str(kind))
        check_points(decoded, str(kind))  # on the curve, in the subgroup
        flat, out = decoded.to_points(), []
        for count in counts:
            out.append(flat[:count])
            flat = flat[count:]
        return out

    blocks = [1 << p for p in range(power + 1)]
    return {2: points(2, 1, [2 * n - 1])[0], 3: points(3, 2, [n])[0], 4: points(4, 1, [n])[0],
            5: points(5, 1, [n])[0], 6: points(6, 2, [1])[0],
            12: points(12, 1, blocks + [2 * n]), 13: points(13, 2, blocks),
            14: points(14, 1, blocks), 15: points(15, 1, blocks)}


def total(points: list):
    acc = points[0]
    for p in points[1:]:
        acc = acc + p
    return acc


def test_points_are_powers_and_lagrange_forms_of_one_tau(tmp_path, rng):
    power = 4
    seed = rng.randrange(2**63)
    print(f"ptau seed {seed}")
    write_ptau(tmp_path / "p.ptau", power, seed, log=lambda _: None)
    s = read_ptau(tmp_path / "p.ptau", power)
    g1, g2 = G1Point(), G2Point()
    tau_g1, tau_g2, alpha_g1, beta_g1, beta_g2 = s[2], s[3], s[4], s[5], s[6][0]
    assert tau_g1[0] == g1 and tau_g2[0] == g2 and tau_g1[1] != g1
    # The same τ in every section: e(τ^(i+1)·G1, G2) = e(τ^i·G1, τ·G2), and α, β likewise.
    for i in (0, 1, len(tau_g1) - 2):
        assert GT.pairing_check([tau_g1[i + 1], -tau_g1[i]], [g2, tau_g2[1]])
    for i in (1, len(tau_g2) - 1):
        assert GT.pairing_check([tau_g1[i], -g1], [g2, tau_g2[i]])
    assert GT.pairing_check([beta_g1[0], -g1], [g2, beta_g2])
    for i in (1, len(alpha_g1) - 1):
        assert GT.pairing_check([alpha_g1[i], -alpha_g1[0]], [g2, tau_g2[i]])
        assert GT.pairing_check([beta_g1[i], -beta_g1[0]], [g2, tau_g2[i]])
    # Lagrange blocks: Σ_j L_j(τ) = 1 and Σ_j w^j·L_j(τ) = τ (w snarkjs's root of the block:
    # this pins the order), in G1 and G2; α·L and β·L sum to α·G1, β·G1. The last G1 block
    # (no τ^(2N−1)) keeps both sums.
    for p, block in enumerate(s[12]):
        w = pow(SNARKJS_ROOT_OF_UNITY, 1 << (32 - p), FR_MODULUS)
        assert total(block) == g1, p
        if p:
            weights = scalars_from_ints(powers(w, len(block)))
            assert G1Point.multiexp_unchecked(block, weights) == tau_g1[1], p
        if p <= power:
            assert total(s[13][p]) == g2 and total(s[14][p]) == alpha_g1[0], p
            assert total(s[15][p]) == beta_g1[0], p
            if p:
                assert G2Point.multiexp_unchecked(s[13][p], weights) == tau_g2[1], p
    # Σ_j w^(kj)·L_j(τ) = τ^k; the last block (M = 2N points) lacks τ^(M−1)·w^j/M, as
    # snarkjs's does: k = M − 1 gives 0 instead of τ^(M−1), k = M − 2 still τ^(M−2).
    top = s[12][power + 1]
    w = pow(SNARKJS_ROOT_OF_UNITY, 1 << (32 - power - 1), FR_MODULUS)
    for k, expected in ((len(top) - 1, G1Point.identity()), (len(top) - 2, tau_g1[-1])):
        weights = scalars_from_ints(powers(pow(w, k, FR_MODULUS), len(top)))
        assert G1Point.multiexp_unchecked(top, weights) == expected, k


def test_processes_write_the_same_file(tmp_path, rng):
    seed = rng.randrange(2**63)
    for jobs in (1, 2):
        write_ptau(tmp_path / f"{jobs}.ptau", 3, seed, jobs=jobs, log=lambda _: None)
    assert (tmp_path / "1.ptau").read_bytes() == (tmp_path / "2.ptau").read_bytes()


@pytest.mark.slow
def test_snarkjs_sets_up_keys_from_it_and_accepts_proofq_proofs(tmp_path, rng):
    """groth16 setup and a zkey contribution by snarkjs on the writer's ptau; proofq proves a
    fresh witness, ``snarkjs groth16 verify`` accepts it and rejects a wrong public input."""
    tools = Tools(tools_bin())
    seed = rng.randrange(2**63)
    print(f"ptau seed {seed}")
    write_ptau(tmp_path / "p8.ptau", 8, seed, log=lambda _: None)
    circuit = build_circuit(tools, tmp_path, "chain-200", tmp_path / "p8.ptau")  # domain 2^8
    key = import_zkey(circuit.zkey, tmp_path / "params")  # every point checked
    assert key.domain_size == 1 << 8  # its H basis comes from the 2^9 block
    wtns = circuit.witness(rng.randrange(FR_MODULUS), rng.randrange(FR_MODULUS),
                           tmp_path / "w.wtns")
    witness = read_wtns(wtns)
    public = public_inputs(key, witness)
    proof = groth16.prove(key, witness, CpuBackend())
    assert groth16.verify(key.vk, public, proof)
    (tmp_path / "proof.json").write_text(json.dumps(proof_to_json(proof)))
    (tmp_path / "public.json").write_text(json.dumps(public_to_json(public)))
    assert tools.groth16_verify(circuit.vk, tmp_path / "public.json", tmp_path / "proof.json")
    (tmp_path / "wrong.json").write_text(json.dumps(public_to_json(
        [(public[0] + 1) % FR_MODULUS, *public[1:]])))
    assert not tools.groth16_verify(circuit.vk, tmp_path / "wrong.json", tmp_path / "proof.json")
    # snarkjs's own prover on the same key agrees.
    tools.snarkjs("groth16", "prove", circuit.zkey, wtns, tmp_path / "sj.json",
                  tmp_path / "sj-public.json")
    assert tools.groth16_verify(circuit.vk, tmp_path / "sj-public.json", tmp_path / "sj.json")
