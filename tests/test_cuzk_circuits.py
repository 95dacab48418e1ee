"""cuzk's circuit ids as proofq reads them (``client.cuzk.circuits``): each id cuzk defines
names the key of the ``.params`` file cuzk loads for it (the file names of
``curio:extern/cuzk/cuzk-core/src/srs_manager.rs`` ``circuit_id_to_param_filename``), the
development sizes follow the same spelling, and a worker's card names map back."""

from __future__ import annotations

import pytest

from client.cuzk.circuits import circuit, circuit_of_card_name, circuits

#: cuzk's ids and the .params file stem it loads for each (curio@e0294b0f).
CUZK = {
    "porep-32g": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-"
                 "sha256_hasher-82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820",
    "porep-64g": "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-"
                 "sha256_hasher-96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2",
    "wpost-32g": "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-"
                 "0377ded656c6f524f1618760bffe4e0a1c51d5a70c4509eedae8a27555733edc",
    "winning-32g": "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-8-8-0-"
                   "559e581f022bb4e4ec6e719e563bf0e026ad6de42e56c18714a2c692b1b88d7e",
    "snap-32g": "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-"
                "3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18",
    "snap-64g": "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-2-"
                "102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7",
}


def test_every_cuzk_id_names_the_params_file_cuzk_loads():
    for circuit_id, stem in CUZK.items():
        assert circuit(circuit_id).key_name() == stem, circuit_id


def test_ids_at_every_size_and_their_card_names():
    assert set(circuits()) == {f"{kind}-{size}" for kind in ("porep", "snap", "wpost", "winning")
                               for size in ("2k", "8m", "512m", "32g", "64g")}
    types = {c.proof_type for c in circuits().values()}
    assert types == {"filecoin", "snap", "window-post", "winning-post"}
    names = circuit_of_card_name()
    for c in circuits().values():
        official, development = c.card_names()
        assert official.startswith(f"{c.proof_type}/v28-")
        assert development.startswith(f"{c.proof_type}/proofq-dev-")
        assert names[official] == names[development] == c.circuit_id
    assert len(names) == 2 * len(circuits())  # no two circuits share a key


@pytest.mark.parametrize("bad", ["porep-3g", "POREP-32G", "porep", "wpost-32", "32g"])
def test_an_unknown_id_is_refused_naming_the_known_ones(bad):
    with pytest.raises(ValueError, match=rf"circuit_id: '{bad}' is not a circuit id \(known: "
                                         r"porep-2k, .*winning-64g\)"):
        circuit(bad)
