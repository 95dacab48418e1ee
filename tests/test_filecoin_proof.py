"""StackedCircuit on real-format C1s: witnesses satisfy bellperson's R1CS and public inputs
are derived. (Proved: a 2 KiB and an 8 MiB sector under a development key in bellperson's
formats, ``test_e2e_filecoin.py``, through the service; ``test_gpu_filecoin.py``; 8 MiB on
the GPU: ``bench/scale.py --type filecoin``.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from snark.filecoin import registered_proof, seal, seal_sparse
from snark.filecoin.circuit import StackedShape, structure, witness
from snark.filecoin.circuit.inputs import partition_data, public_inputs
from snark.gadgets.assembly import check_rows


def np_rng(rng) -> np.random.Generator:
    return np.random.default_rng(rng.getrandbits(64))


@pytest.fixture(scope="module")
def sealed_2kib(module_rng):
    return seal(registered_proof("StackedDrg2KiBV1_1"), np_rng(module_rng))


def unsatisfied(c1, data) -> np.ndarray:
    shape = StackedShape.of(c1.proof)
    return check_rows(structure(shape), witness(shape, data).assignment())


def test_a_sealed_2kib_partition_satisfies_every_row(sealed_2kib):
    data = partition_data(sealed_2kib, 0)
    shape = StackedShape.of(sealed_2kib.proof)
    assignment = witness(shape, data)
    assert check_rows(structure(shape), assignment.assignment()).size == 0
    assert assignment.public_inputs() == public_inputs(sealed_2kib, 0)
    assert len(assignment.public_inputs()) == 3 + 18 * shape.challenges


def _with_sibling(path: list[dict]) -> list[dict]:
    levels = [dict(level) for level in path]
    siblings = levels[0]["siblings"].copy()
    siblings[0, 0] = (siblings[0, 0] + 1) % (1 << 250)
    levels[0]["siblings"] = siblings
    return levels


@pytest.mark.parametrize("tamper", ["data leaf", "tree D sibling", "DRG parent row",
                                    "tree C sibling"])
def test_tampered_private_values_break_a_row(sealed_2kib, tamper):
    data = partition_data(sealed_2kib, 0)
    if tamper == "data leaf":
        leaf = data.data_leaf.copy()
        leaf[1] += 1
        data = dataclasses.replace(data, data_leaf=leaf)
    elif tamper == "tree D sibling":
        data = dataclasses.replace(data, comm_d_path=_with_sibling(data.comm_d_path))
    elif tamper == "DRG parent row":
        rows = data.drg_rows.copy()
        rows[0, 2, 1] += 1
        data = dataclasses.replace(data, drg_rows=rows)
    else:
        data = dataclasses.replace(data, comm_c_path=_with_sibling(data.comm_c_path))
    assert unsatisfied(sealed_2kib, data).size > 0


def test_a_sparse_512mib_shaped_partition_satisfies_every_row(rng):
    c1 = seal_sparse(registered_proof("StackedDrg512MiBV1_1"), np_rng(rng))
    shape = StackedShape.of(c1.proof)
    assignment = witness(shape, partition_data(c1, 0))
    assert check_rows(structure(shape), assignment.assignment()).size == 0
    assert assignment.public_inputs() == public_inputs(c1, 0)


@pytest.mark.slow  # the session's 2 KiB development key: minutes on two cores
def test_a_development_key_goes_straight_to_the_workers_layout(filecoin_2kib_dev_params):
    """A worker's missing development key is set up into proofq's layout with its .vk and
    label beside the others and no .params (at 32 GiB that round trip cost ~3 min and
    47 GB): the key is named by its stem, and the .vk is the resident key's own (the proofs
    of test_e2e_filecoin.py, made with the resident key, verify from the .vk alone)."""
    from snark.filecoin.params import (bellperson_files, load_verifying_key,
                                       resident_key_dir)
    from snark.filecoin.registered_proofs import dev_stem
    from snark.keys import ProvingKey

    proof = registered_proof("StackedDrg2KiBV1_1")
    params_path, vk_path = bellperson_files(proof, "development", filecoin_2kib_dev_params,
                                            filecoin_2kib_dev_params)
    assert not params_path.exists() and vk_path.exists()
    assert params_path.with_suffix(".json").exists()
    key = ProvingKey.load(resident_key_dir(proof, "development", filecoin_2kib_dev_params))
    assert key.circuit_id == dev_stem(proof)
    assert load_verifying_key(vk_path).to_json() == key.vk.to_json()
