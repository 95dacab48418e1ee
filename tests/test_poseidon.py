"""Poseidon: the reference vector, the derived constants, the fast schedule, the hash API."""

from __future__ import annotations


import numpy as np
import pytest

from snark.fields import FR_MODULUS, fr_to_limbs, limbs_to_ints, random_fr
from snark.poseidon.hashing import hash2, hash2_many
from snark.poseidon.native import permute
from snark.poseidon.params import poseidon_x5_255_3
from snark.poseidon import hashing
from snark.poseidon.fast import permute_words
from snark.poseidon.gadget import hash_template, poseidon_hash2_gadget
from snark.poseidon.linalg import charpoly, identity, matmul, roots
from snark.poseidon.mds_security import is_secure_mds
from snark.poseidon.grain import GrainLFSR
from snark.poseidon.params import derive_params
from snark.r1cs import ONE, ConstraintSystem

REFERENCE_PERM_0_1_2 = [
    0x28CE19420FC246A05553AD1E8C98F5C9D67166BE2C18E9E4CB4B4E317DD2A78A,
    0x51F3E312C95343A896CFD8945EA82BA956C1118CE9B9859B6EA56637B4B1DDC4,
    0x3B2B69139B235626A0BFB56C9527AE66A7BF486AD8C11C14D1DA0C69BBE0F79A,
]


def test_reference_vector():
    assert permute([0, 1, 2]) == REFERENCE_PERM_0_1_2


def _grain_one_bit_at_a_time(seed_bits: list[int], count: int) -> list[int]:
    """The reference LFSR as the Poseidon paper states it: one XOR of six taps a step,
    160 steps discarded, then of each pair of outputs the second if the first is 1."""
    bits, out, step = list(seed_bits), [], 0
    while len(out) < count:
        bits.append(bits[-80 + 62] ^ bits[-80 + 51] ^ bits[-80 + 38] ^ bits[-80 + 23]
                    ^ bits[-80 + 13] ^ bits[-80])
        step += 1
        if step > 160 and step % 2 == 0 and bits[-2]:
            out.append(bits[-1])
    return out


def test_grain_blocks_give_the_one_bit_stream(rng):
    """The 18-bits-a-shift register against the plain recurrence, across its refills, for
    random seed fields, read in draws of random widths."""
    widths = (2, 4, 12, 12, 10, 10)
    fields = [rng.randrange(1 << w) for w in widths]
    seed = [int(b) for v, w in zip(fields, widths) for b in format(v, f"0{w}b")]
    expected = _grain_one_bit_at_a_time(seed + [1] * (80 - len(seed)), 5000)
    lfsr, got = GrainLFSR(*fields), []
    while len(got) < len(expected):
        n = rng.choice((1, 17, 64, 255))
        got.extend(int(b) for b in format(lfsr.integer(n), f"0{n}b"))
    assert got[:len(expected)] == expected, f"seed fields {fields}"


def test_derived_parameters_have_the_reference_shape():
    params = poseidon_x5_255_3()
    assert (params.t, params.alpha, params.full_rounds, params.partial_rounds) == (3, 5, 8, 57)
    assert len(params.round_constants) == 65
    assert all(len(row) == 3 and all(0 <= c < FR_MODULUS for c in row)
               for row in params.round_constants)
    # A Cauchy matrix: every entry is 1/(x_i + y_j), so entry(i,j)^-1 - entry(i,k)^-1
    # does not depend on i.
    inv = [[pow(m, -1, FR_MODULUS) for m in row] for row in params.mds]
    diffs = {(row[0] - row[1]) % FR_MODULUS for row in inv}
    assert len(diffs) == 1


def test_derived_mds_passes_the_security_tests_and_weak_matrices_fail():
    assert is_secure_mds(poseidon_x5_255_3().mds, FR_MODULUS)
    assert not is_secure_mds(identity(3), FR_MODULUS)  # scalar matrix
    block = ((2, 1, 0), (1, 2, 0), (0, 0, 3))  # e2 spans an invariant subspace
    assert not is_secure_mds(block, FR_MODULUS)


def test_roots_finds_exactly_the_field_roots(rng):
    def times(f, g):
        out = [0] * (len(f) + len(g) - 1)
        for i, a in enumerate(f):
            for j, b in enumerate(g):
                out[i + j] = (out[i + j] + a * b) % FR_MODULUS
        return out

    expected = [rng.randrange(FR_MODULUS) for _ in range(2)]
    non_residue = next(a for a in range(2, 200) if pow(a, (FR_MODULUS - 1) // 2, FR_MODULUS) != 1)
    f = [-non_residue % FR_MODULUS, 0, 1]  # x^2 - n has no root in the field
    for r in expected:
        f = times(f, [-r % FR_MODULUS, 1])
    assert sorted(roots(f, FR_MODULUS)) == sorted(expected)


def test_charpoly_annihilates_its_matrix(rng):
    a = tuple(tuple(rng.randrange(FR_MODULUS) for _ in range(3)) for _ in range(3))
    coeffs = charpoly(a, FR_MODULUS)
    total = ((0,) * 3,) * 3
    power = identity(3)
    for c in coeffs:
        total = tuple(tuple((x + c * y) % FR_MODULUS for x, y in zip(r1, r2))
                      for r1, r2 in zip(total, power))
        power = matmul(power, a, FR_MODULUS)
    assert total == ((0,) * 3,) * 3


def test_other_round_counts_seed_other_constants():
    base = poseidon_x5_255_3()
    other = derive_params(FR_MODULUS, 255, t=3, alpha=5, full_rounds=8, partial_rounds=56)
    assert other.round_constants[0] != base.round_constants[0]


def test_fast_schedule_equals_reference_on_random_states(rng):
    for _ in range(8):
        state = [rng.randrange(FR_MODULUS), rng.randrange(FR_MODULUS), rng.randrange(FR_MODULUS)]
        assert permute_words(state) == permute(state)


def test_hash2_is_perm_first_element(rng):
    x, y = rng.randrange(FR_MODULUS), rng.randrange(FR_MODULUS)
    assert hash2(x, y) == permute([0, x, y])[0]
    assert hash2(x, y) != hash2(y, x)


def test_hash2_many_limbs_match_scalar_hash(monkeypatch, np_rng):
    monkeypatch.setattr(hashing, "CHUNK", 4)  # 17 pairs cross several chunks
    xs, ys = random_fr(17, np_rng), random_fr(17, np_rng)
    out = hash2_many(xs, ys)
    assert out.shape == (17, 4) and out.dtype == np.uint64
    expected = [hash2(x, y) for x, y in zip(limbs_to_ints(xs), limbs_to_ints(ys))]
    assert limbs_to_ints(out) == expected


def test_hash2_many_ints_and_broadcast(rng):
    key = rng.randrange(FR_MODULUS)
    ys = [rng.randrange(FR_MODULUS) for _ in range(5)]
    out = hash2_many(key, ys)
    assert out.dtype == object
    assert list(out) == [hash2(key, y) for y in ys]
    assert list(hash2_many(np.asarray(ys, dtype=object), 7)) == [hash2(y, 7) for y in ys]


@pytest.mark.parametrize("bad", [FR_MODULUS, -1, FR_MODULUS + 5])
def test_non_canonical_input_is_rejected(bad):
    with pytest.raises(ValueError, match="reduced Fr element"):
        hash2(bad, 1)
    with pytest.raises(ValueError, match=r"ys\[1\]"):
        hash2_many([1, 2], [3, bad])


def test_non_canonical_limbs_are_rejected(np_rng):
    xs = random_fr(3, np_rng)
    xs[2] = fr_to_limbs([FR_MODULUS])[0]
    with pytest.raises(ValueError, match=r"xs\[2\] is not a reduced Fr element"):
        hash2_many(xs, random_fr(3, np_rng))


def test_length_mismatch_is_rejected():
    with pytest.raises(ValueError, match="differ in length"):
        hash2_many([1, 2, 3], [1, 2])


def test_permute_rejects_wrong_width():
    with pytest.raises(ValueError, match="3 elements"):
        permute([1, 2])


# -- the R1CS gadget ----------------------------------------------------------------------

def test_gadget_equals_native_hash_and_costs_240_constraints(rng):
    cs = ConstraintSystem(check=True)
    x, y = rng.randrange(FR_MODULUS), rng.randrange(FR_MODULUS)
    a, b = cs.alloc(x), cs.alloc_input(y)
    out = poseidon_hash2_gadget(cs, a, b)
    assert cs.eval(out) == hash2(x, y)
    assert len(cs.constraints) == hash_template().num_constraints == 240


def test_gadget_accepts_linear_combinations(rng):
    cs = ConstraintSystem(check=True)
    u, v = rng.randrange(FR_MODULUS), rng.randrange(FR_MODULUS)
    a, b = cs.alloc(u), cs.alloc(v)
    x_lc = {a: 1, b: 3}
    y_lc = {b: 1, ONE: 5}
    out = poseidon_hash2_gadget(cs, x_lc, y_lc)
    assert cs.eval(out) == hash2((u + 3 * v) % FR_MODULUS, (v + 5) % FR_MODULUS)


def test_gadget_r1cs_is_satisfied_and_a_tampered_witness_is_not(rng):
    cs = ConstraintSystem()
    x, y = rng.randrange(FR_MODULUS), rng.randrange(FR_MODULUS)
    out = poseidon_hash2_gadget(cs, cs.alloc(x), cs.alloc(y))
    digest = cs.alloc_input(cs.eval(out))
    cs.enforce(out, ONE, digest, "digest")
    r1cs = cs.compile()
    witness = cs.witness()
    assert r1cs.is_satisfied(witness)

    tampered = witness.copy()
    row = cs.num_inputs + rng.randrange(cs.num_aux)
    value = limbs_to_ints(tampered[row:row + 1])[0]
    tampered[row] = fr_to_limbs([(value + 1) % FR_MODULUS])[0]
    assert not r1cs.is_satisfied(tampered)

    wrong_digest = witness.copy()
    wrong_digest[digest] = fr_to_limbs([(cs.eval(out) + 1) % FR_MODULUS])[0]
    assert not r1cs.is_satisfied(wrong_digest)
