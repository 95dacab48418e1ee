"""The fast porep witness equals the reference synthesis and cannot hide a bad C1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from snark.fields import FR_MODULUS
from snark.keys import KeyFileError
from snark.params import shape_path
from snark.poseidon.hashing import hash2
from snark.poseidon.gadget import poseidon_hash2_gadget
from snark.poseidon.gadget import hash_template
from snark.poseidon.trace import hash2_trace
from snark.porep.c1 import C1Error
from snark.porep.circuit import CIRCUIT_VERSION, circuit_r1cs, synthesize
from snark.porep.prove import load_or_setup_key, prove_partition
from snark.porep.seal import seal
from snark.porep.vanilla import verify_vanilla
from snark.porep.witness import challenge_layout, partition_witness
from snark.r1cs import ConstraintSystem

SHAPES = [(2048, 2, 1), (2048, 2, 2), (4096, 2, 5), (8192, 1, 2)]


def _objects(values: list[int]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def test_trace_yields_the_gadgets_sbox_values(rng):
    xs = [rng.randrange(FR_MODULUS) for _ in range(4)]
    ys = [rng.randrange(FR_MODULUS) for _ in range(4)]
    digest, powers = hash2_trace(_objects(xs), _objects(ys))
    assert powers.shape == (len(hash_template().sbox_inputs), 3, 4)
    for i, (x, y) in enumerate(zip(xs, ys)):
        cs = ConstraintSystem()
        out = poseidon_hash2_gadget(cs, cs.alloc(x), cs.alloc(y))
        assert cs.aux[2:] == list(powers[:, :, i].reshape(-1))  # after x and y
        assert digest[i] == hash2(x, y) == cs.eval(out)


@pytest.mark.parametrize("sector_size,partitions,challenges", SHAPES)
def test_fast_witness_equals_synthesis_and_satisfies_the_circuit(sector_size, partitions,
                                                                 challenges):
    c1 = seal(sector_size, partitions, challenges)
    r1cs = circuit_r1cs(sector_size, challenges)
    for partition in range(partitions):
        witness = partition_witness(c1, partition)
        reference = synthesize(c1, partition).witness()
        assert witness.dtype == np.uint64 and witness.shape == reference.shape
        assert np.array_equal(witness, reference)
        assert r1cs.is_satisfied(witness)


@pytest.fixture(scope="module")
def key_2kib_k2(tmp_path_factory):
    """The porep-2KiB-k2 key, in the params dir test_porep.py shares (one setup)."""
    return load_or_setup_key(seal(2048, 1, 2), tmp_path_factory.getbasetemp() / "porep-params")


@pytest.mark.parametrize("field", ["data_leaf", "replica_leaf", "d_path", "r_path", "index"])
def test_a_tampered_c1_yields_an_unsatisfying_witness(field, key_2kib_k2):
    c1 = seal(2048, 1, 2)
    tampered = _tamper(c1, field)
    witness = partition_witness(tampered, 0)
    assert np.array_equal(witness, synthesize(tampered, 0).witness())
    assert not circuit_r1cs(2048, 2).is_satisfied(witness)
    with pytest.raises(C1Error, match=r"vanilla_proofs\[0\]\.challenges\[1\]"):
        partition_witness(tampered, 0, check=True)
    with pytest.raises(C1Error):
        verify_vanilla(tampered)
    with pytest.raises(C1Error):
        prove_partition(tampered, 0, key_2kib_k2)


def test_the_check_passes_an_honest_partition():
    c1 = seal(2048, 2, 3)
    for partition in range(2):
        assert np.array_equal(partition_witness(c1, partition, check=True),
                              partition_witness(c1, partition))


def _tamper(c1, field: str):
    """A copy of ``c1`` with one value of challenge 1 of partition 0 changed."""
    part = c1.vanilla_proofs[0]
    ch = part.challenges[1]
    if field == "index":
        new = ch.model_copy(update={"index": ch.index ^ 1})
    elif field.endswith("_path"):
        path = list(getattr(ch, field))
        path[3] = (path[3] + 1) % FR_MODULUS
        new = ch.model_copy(update={field: path})
    else:
        new = ch.model_copy(update={field: (getattr(ch, field) + 1) % FR_MODULUS})
    challenges = [part.challenges[0], new, *part.challenges[2:]]
    proofs = [part.model_copy(update={"challenges": challenges}), *c1.vanilla_proofs[1:]]
    return c1.model_copy(update={"vanilla_proofs": proofs})


def test_partition_out_of_range_is_a_c1_error():
    c1 = seal(2048, 1, 1)
    with pytest.raises(C1Error, match="partition"):
        partition_witness(c1, 1)


def test_layout_claims_every_aux_slot_once():
    layout = challenge_layout(4096)
    claimed = np.concatenate([s.reshape(-1) for s in layout.slots.values()])
    assert np.array_equal(np.sort(claimed), np.arange(layout.stride))
    assert layout.stride == synthesize(seal(4096, 1, 1), 0).num_aux


# -- finding the key by shape, without compiling --------------------------------------

@pytest.fixture(scope="module")
def shape_params(tmp_path_factory):
    """A params dir holding the porep-2KiB-k1 and -k2 keys and their shape records."""
    params_dir = tmp_path_factory.mktemp("shape-params")
    keys = {k: load_or_setup_key(seal(2048, 1, k), params_dir) for k in (1, 2)}
    return params_dir, keys


def test_setup_records_the_shapes_circuit_id(shape_params):
    params_dir, keys = shape_params
    for k, key in keys.items():
        record = json.loads(shape_path(params_dir, f"porep-2KiB-k{k}").read_text())
        assert record["circuit_id"] == key.circuit_id == circuit_r1cs(2048, k).circuit_id()
        assert record["circuit_version"] == CIRCUIT_VERSION
        assert (record["num_inputs"], record["num_aux"], record["num_constraints"]) == (
            key.r1cs.num_inputs, key.r1cs.num_aux, key.r1cs.num_constraints)


@pytest.mark.slow
def test_a_second_process_loads_the_key_without_compiling(shape_params):
    params_dir, keys = shape_params
    script = (
        "import json, sys\n"
        "from snark.porep.circuit import circuit_r1cs\n"
        "from snark.porep.prove import load_or_setup_key\n"
        "from snark.porep.seal import seal\n"
        "key = load_or_setup_key(seal(2048, 1, 2), sys.argv[1])\n"
        "print(json.dumps([key.circuit_id, circuit_r1cs.cache_info().misses]))\n")
    out = subprocess.run([sys.executable, "-c", script, str(params_dir)], check=True,
                         capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert json.loads(out.stdout) == [keys[2].circuit_id, 0]


@pytest.fixture
def record_k2(shape_params):
    """The porep-2KiB-k2 record's path; its original content is restored afterwards."""
    params_dir, _ = shape_params
    path = shape_path(params_dir, "porep-2KiB-k2")
    original = path.read_text()
    yield path
    path.write_text(original)


def _rewrite(path: Path, **changes) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_a_stale_record_is_refused_naming_the_file(shape_params, record_k2):
    params_dir, _ = shape_params
    _rewrite(record_k2, circuit_version=CIRCUIT_VERSION + 1)
    with pytest.raises(KeyFileError, match=rf"{record_k2}: recorded for circuit code version"):
        load_or_setup_key(seal(2048, 1, 2), params_dir)


def test_a_record_naming_another_shapes_key_is_refused(shape_params, record_k2):
    params_dir, keys = shape_params
    _rewrite(record_k2, circuit_id=keys[1].circuit_id)
    with pytest.raises(KeyFileError, match=rf"{record_k2}: names key {keys[1].circuit_id}, "
                                           rf"which was made for another circuit"):
        load_or_setup_key(seal(2048, 1, 2), params_dir)


def test_a_record_of_another_shape_is_refused(shape_params, record_k2):
    params_dir, _ = shape_params
    record_k2.write_text(shape_path(params_dir, "porep-2KiB-k1").read_text())
    with pytest.raises(KeyFileError, match=rf"{record_k2}: name is 'porep-2KiB-k1'"):
        load_or_setup_key(seal(2048, 1, 2), params_dir)


def test_a_malformed_record_is_refused(shape_params, record_k2):
    params_dir, _ = shape_params
    c1 = seal(2048, 1, 2)
    record_k2.write_text("{not json")
    with pytest.raises(KeyFileError, match=rf"{record_k2}: not valid JSON"):
        load_or_setup_key(c1, params_dir)
    record_k2.write_text(json.dumps({"format": "proofq-shape/1"}))
    with pytest.raises(KeyFileError, match=rf"{record_k2}: recorded for circuit code version"):
        load_or_setup_key(c1, params_dir)


def test_a_record_with_a_malformed_circuit_id_is_refused(shape_params, record_k2):
    params_dir, _ = shape_params
    _rewrite(record_k2, circuit_id="../k1")
    with pytest.raises(KeyFileError, match=rf"{record_k2}: circuit_id is missing or not 32 hex"):
        load_or_setup_key(seal(2048, 1, 2), params_dir)
