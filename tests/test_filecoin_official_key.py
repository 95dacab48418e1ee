"""A missing official key: the error says where to put it and how a test cluster names the
development key instead, in the words the intake, the CLI and the settings know."""

from __future__ import annotations

import json

import pytest

from snark.filecoin.job import filecoin_envelope
from snark.filecoin.params import convert_key
from snark.filecoin.registered_proofs import REGISTERED_PROOFS
from snark.keys import KeyFileError


def test_a_missing_official_key_names_the_fields_that_choose_the_development_key(tmp_path):
    proof = REGISTERED_PROOFS["StackedDrg2KiBV1_1"]
    with pytest.raises(KeyFileError) as missing:
        convert_key(proof, "official", tmp_path / "params", tmp_path / "official")
    message = str(missing.value)
    assert "PROOFQ_FILECOIN_PARAMS_DIR" in message and "is not there" in message
    assert "--key development" in message and "PROOFQ_FILECOIN_KEY=development" in message
    envelope = message[message.index('{"key"'):message.index("}") + 1]
    # the envelope the hint shows is the one the filecoin type reads
    assert json.loads(envelope.replace("<c1.json>", "{}")) == json.loads(
        filecoin_envelope(b"{}", "development"))
