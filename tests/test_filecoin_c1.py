"""Reading C1s: both encodings, every Merkle shape, the bulk reading, and malformed inputs."""

from __future__ import annotations

import base64
import dataclasses
import json

import numpy as np
import pytest
from click.testing import CliRunner

from client.cli import main
from snark.filecoin.c1_canonical import read_canonical
from snark.filecoin.c1_lift import lift_domains
from snark.filecoin.c1_schema import parse_c1
from snark.filecoin.c1_write import curio_json, phase1_json
from snark.filecoin.errors import FilecoinError
from snark.filecoin.registered_proofs import REGISTERED_PROOFS, registered_proof
from tests.filecoin_c1s import random_c1, small_big_proofs  # noqa: F401 (a fixture)

TAG = "vanilla_proofs.StackedDrg2KiBV1"


def assert_same(a, b, path="c1"):
    """Equal dataclasses, arrays, tuples and values, naming the first difference."""
    if isinstance(a, np.ndarray):
        assert a.shape == b.shape and np.array_equal(a, b), path
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    elif isinstance(a, tuple):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b, path


@pytest.mark.usefixtures("small_big_proofs")
@pytest.mark.parametrize("name", list(REGISTERED_PROOFS))
def test_both_encodings_and_every_shape_round_trip(name, np_rng):
    """Every registered proof, its ticket and seed above r."""
    c1 = random_c1(registered_proof(name), np_rng)
    assert min(c1.ticket[31], c1.seed[31]) > 0x73  # chain randomness above r: 32 raw bytes
    raw = phase1_json(c1)
    assert read_canonical(*lift_domains(raw)) is not None  # serde's layout, read by template
    got = parse_c1(raw)
    assert_same(c1, got)
    assert got.vanilla.comm_r_last.shape == c1.proof.shape.name
    wrapped = parse_c1(curio_json(c1, sector_num=42))
    assert (wrapped.encoding, wrapped.sector_num, wrapped.prover_id) == ("curio", 42, None)
    assert_same(c1.vanilla, wrapped.vanilla)
    assert phase1_json(got) == raw  # the writer is serde's layout, byte for byte
    ids = dataclasses.replace(c1, prover_id=b"\xff" * 32, sector_id=12345)
    with_ids = parse_c1(phase1_json(ids, with_ids=True))
    assert (with_ids.prover_id, with_ids.sector_id) == (ids.prover_id, 12345)


@pytest.mark.usefixtures("small_big_proofs")
def test_partitions_lead_with_the_challenge_axis(np_rng):
    c1 = random_c1(registered_proof("StackedDrg32GiBV1_1"), np_rng)
    part = parse_c1(phase1_json(c1)).partition(0)
    assert part.nodes.shape == (2,)
    assert part.columns.rows.shape == (2, 15, 11, 32)
    assert [level.arity for level in part.columns.path.levels] == [8] * 9 + [8]
    assert part.columns.path.levels[0].siblings.shape == (2, 15, 7, 32)
    assert part.comm_d.levels[0].siblings.shape == (2, 1, 32) and len(part.comm_d.levels) == 30
    assert part.labeling.parents.shape == (2, 11, 37, 32)
    assert np.array_equal(part.comm_r_last.node_index(),
                          sum(lv.index * 8 ** k for k, lv in enumerate(part.comm_r_last.levels)))
    with pytest.raises(IndexError):
        parse_c1(phase1_json(c1)).partition(1)


def test_fields_in_any_order_and_any_spacing_read_the_same(np_rng):
    """serde reads fields in any order; the bulk reading numbers the lifted arrays in document
    order, so a reordered document must come out the same, as must a pretty-printed one."""
    c1 = random_c1(registered_proof("StackedDrg2KiBV1_1"), np_rng)
    doc = json.loads(phase1_json(c1))

    def reverse(node):
        if isinstance(node, dict):
            return {key: reverse(node[key]) for key in reversed(node)}
        return [reverse(item) for item in node] if isinstance(node, list) else node

    reordered = json.dumps(reverse(doc), separators=(",", ":")).encode()
    assert read_canonical(*lift_domains(reordered)) is None  # not serde's layout: the walk
    assert lift_domains(reordered)[1] is not None
    assert_same(c1, parse_c1(reordered))
    pretty = json.dumps(doc, indent=2).encode()
    assert lift_domains(pretty)[1] is None  # whitespace inside arrays: the full reading
    assert_same(c1, parse_c1(pretty))


def test_the_bulk_reading_steps_aside_for_unusual_text(np_rng):
    c1 = random_c1(registered_proof("StackedDrg2KiBV1_1"), np_rng)
    raw = phase1_json(c1)
    spaced_outside = raw.replace(b'"seed":[', b'"seed" : [', 1)
    spaced_inside = raw.replace(b'"seed":[', b'"seed":[ ', 1)
    assert lift_domains(spaced_outside)[1] is not None
    assert lift_domains(spaced_inside)[1] is None
    for text in (spaced_outside, spaced_inside):
        assert_same(c1, parse_c1(text))
    assert lift_domains(b'{"a[1,2]": [1]}')[1] is None
    escaped = raw.replace(b'"ticket"', b'"\\u0074icket"')  # JSON escapes: the same key
    assert lift_domains(escaped)[1] is None
    assert_same(c1, parse_c1(escaped))
    array = "[" + ",".join(["7"] * 32) + "]"  # an array's text inside a string is no array
    doc = json.loads(raw)
    doc[f"x{array}"] = 1
    assert_same(c1, parse_c1(json.dumps(doc, separators=(",", ":"))))  # an unknown field


def _every_level(doc: dict) -> None:
    """An unknown field in each kind of object of a C1, one of them in every challenge."""
    doc["new_field"] = [1] * 32
    for part in doc["vanilla_proofs"]["StackedDrg2KiBV1"]:
        for proof in part:
            proof["extra"] = {"a": 1}
    first = doc["vanilla_proofs"]["StackedDrg2KiBV1"][0][0]
    first["comm_d_proofs"]["data"]["Single"]["path"]["path"][0]["more"] = None
    first["replica_column_proofs"]["c_x"]["column"]["later"] = "x"
    first["labeling_proofs"][1]["v2"] = 7


def test_unknown_fields_are_ignored_and_named_once_in_the_log(np_rng, caplog):
    """As serde reads a C1 (no deny_unknown_fields): a newer Curio or lotus adding a field
    must not stop proving."""
    c1 = random_c1(registered_proof("StackedDrg2KiBV1_1"), np_rng)
    doc = json.loads(phase1_json(c1))
    _every_level(doc)
    text = json.dumps(doc, separators=(",", ":")).encode()
    wrapper = {"SectorNum": 4, "Phase1Out": base64.b64encode(text).decode(),
               "SectorSize": 2048, "Miner": 1}
    named = ["Column.later", "LabelingProof.v2", "PathElement.more", "Proof.extra",
             "SealCommitPhase1Output.new_field"]
    for raw, extra in ((text, []), (json.dumps(wrapper).encode(), ["Commit2In.Miner"])):
        caplog.clear()
        assert_same(c1.vanilla, parse_c1(raw).vanilla)
        [record] = [r for r in caplog.records if "unknown" in r.getMessage()]
        assert record.getMessage() == ("c1: ignored unknown fields (as rust-fil-proofs' serde "
                                       f"does): {', '.join(sorted(named + extra))}")


def _first(doc):
    return doc["vanilla_proofs"]["StackedDrg2KiBV1"][0][1]


def _single(doc):
    return _first(doc)["comm_r_last_proof"]["data"]["Single"]


def _set(path_fn, key, value):
    def mutate(doc):
        path_fn(doc)[key] = value
    return mutate


def _pop(path_fn, key):
    return lambda doc: path_fn(doc).pop(key)


def _col(doc, k=0):
    return _first(doc)["replica_column_proofs"]["drg_parents"][k]


BAD = {
    "registered proof missing": (_pop(lambda d: d, "registered_proof"),
                                 "registered_proof: required field is missing"),
    "unknown registered proof": (_set(lambda d: d, "registered_proof", "StackedDrg1KiBV1"),
                                 "registered_proof: unknown registered proof 'StackedDrg1KiBV1'"),
    "non-interactive porep": (_set(lambda d: d, "registered_proof",
                                   "StackedDrg2KiBV1_2_Feat_NonInteractivePoRep"),
                              "registered_proof: StackedDrg2KiBV1_2_Feat_NonInteractivePoRep is "
                              "non-interactive PoRep"),
    "registered proof not a string": (_set(lambda d: d, "registered_proof", 5),
                                      "registered_proof: expected a string, got integer"),
    "commitment missing": (_pop(lambda d: d, "comm_d"), "comm_d: required field is missing"),
    "commitment short": (lambda d: d["comm_r"].pop(),
                         "comm_r: expected 32 bytes (a field element), got 31"),
    "byte too large": (lambda d: d["seed"].__setitem__(3, 256),
                       "seed[3]: must be a byte (0..255), got 256"),
    "byte negative": (lambda d: d["seed"].__setitem__(0, -1),
                      "seed[0]: must be a byte (0..255), got -1"),
    "byte as string": (lambda d: d["ticket"].__setitem__(5, "7"),
                       "ticket[5]: expected an integer, got string"),
    "byte as float": (lambda d: d["ticket"].__setitem__(5, 7.0),
                      "ticket[5]: expected an integer, got number"),
    "not a field element": (_set(lambda d: d, "replica_id", [255] * 32),
                            "replica_id: not a field element"),
    # seal_commit_phase2's as_safe_commitment (comm_r) and verify_seal's (comm_d):
    "comm_r at or above r": (_set(lambda d: d, "comm_r", [255] * 32),
                             "comm_r: not a field element"),
    "comm_d at or above r": (_set(lambda d: d, "comm_d", [0] * 31 + [0x74]),
                             "comm_d: not a field element"),
    # generate_public_inputs: "porep challenge seed must be set prior to circuit generation"
    "seed missing": (_pop(lambda d: d, "seed"), "seed: required field is missing"),
    # seal_commit_phase2_circuit_proofs: "C1 output contains no vanilla proofs" (and
    # circuit_proofs' and StackedCompound::circuit's refusals of no vanilla proofs)
    "no partitions": (_set(lambda d: d, "vanilla_proofs", {"StackedDrg2KiBV1": []}),
                      f"{TAG}: expected 1 partitions, got 0"),
    "an empty partition": (_set(lambda d: d, "vanilla_proofs", {"StackedDrg2KiBV1": [[]]}),
                           f"{TAG}[0]: expected 2 challenge proofs, got 0"),
    "commitment not an array": (_set(lambda d: d, "comm_r", "00"),
                                "comm_r: expected an array of 32 bytes"),
    "wrong vanilla tag": (_set(lambda d: d, "vanilla_proofs", {"StackedDrg8MiBV1": []}),
                          "vanilla_proofs: expected the single tag StackedDrg2KiBV1"),
    "too many partitions": (lambda d: d["vanilla_proofs"]["StackedDrg2KiBV1"].append([]),
                            f"{TAG}: expected 1 partitions, got 2"),
    "too many challenges": (lambda d: d["vanilla_proofs"]["StackedDrg2KiBV1"][0].append({}),
                            f"{TAG}[0]: expected 2 challenge proofs, got 3"),
    "proof field missing": (_pop(_first, "encoding_proof"),
                            f"{TAG}[0][1].encoding_proof: required field is missing"),
    "wrong tree variant": (lambda d: _first(d)["comm_r_last_proof"].__setitem__(
        "data", {"Sub": _single(d)}), f"{TAG}[0][1].comm_r_last_proof.data: expected Single "
                                      f"(the 8-0-0 tree of StackedDrg2KiBV1_1), got 'Sub'"),
    "path index beyond the arity": (
        lambda d: _single(d)["path"]["path"][1].__setitem__("index", 9),
        f"{TAG}[0][1].comm_r_last_proof.data.Single.path.path[1].index: must be < 8, got 9"),
    "path too long": (lambda d: _single(d)["path"]["path"].append(_single(d)["path"]["path"][0]),
                      f"{TAG}[0][1].comm_r_last_proof.data.Single.path.path: expected 2 path "
                      f"elements, got 3"),
    "siblings missing": (lambda d: _single(d)["path"]["path"][0]["hashes"].pop(),
                         f"{TAG}[0][1].comm_r_last_proof.data.Single.path.path[0].hashes: "
                         f"expected 7 hashes, got 6"),
    "binary index 2": (lambda d: _first(d)["comm_d_proofs"]["data"]["Single"]["path"]["path"][4]
                       .__setitem__("index", 2),
                       f"{TAG}[0][1].comm_d_proofs.data.Single.path.path[4].index: must be < 2, "
                       f"got 2"),
    "index a boolean": (lambda d: _single(d)["path"]["path"][0].__setitem__("index", True),
                        f"{TAG}[0][1].comm_r_last_proof.data.Single.path.path[0].index: expected "
                        f"an integer, got boolean"),
    "root missing": (_pop(_single, "root"),
                     f"{TAG}[0][1].comm_r_last_proof.data.Single.root: required field is "
                     f"missing"),
    "leaf byte bad": (lambda d: _single(d)["leaf"].__setitem__(31, 300),
                      f"{TAG}[0][1].comm_r_last_proof.data.Single.leaf[31]: must be a byte"),
    "five drg parents": (lambda d: _first(d)["replica_column_proofs"]["drg_parents"].pop(),
                         f"{TAG}[0][1].replica_column_proofs.drg_parents: expected 6 column "
                         f"proofs, got 5"),
    "nine exp parents": (lambda d: _first(d)["replica_column_proofs"]["exp_parents"].append({}),
                         f"{TAG}[0][1].replica_column_proofs.exp_parents: expected 8 column "
                         f"proofs, got 9"),
    "three rows": (lambda d: _col(d, 2)["column"]["rows"].append([0] * 32),
                   f"{TAG}[0][1].replica_column_proofs.drg_parents[2].column.rows: expected 2 "
                   f"rows, got 3"),
    "column index out of the sector": (
        lambda d: _col(d)["column"].__setitem__("index", 64),
        f"{TAG}[0][1].replica_column_proofs.drg_parents[0].column.index: must be < 64 (a sector "
        f"of 64 nodes), got 64"),
    "phantom not null": (lambda d: _col(d)["column"].__setitem__("_h", 0),
                         f"{TAG}[0][1].replica_column_proofs.drg_parents[0].column._h: expected "
                         f"null, got integer"),
    "inclusion proof missing": (
        lambda d: _col(d, 5).pop("inclusion_proof"),
        f"{TAG}[0][1].replica_column_proofs.drg_parents[5].inclusion_proof: required field"),
    "one labeling proof": (lambda d: _first(d)["labeling_proofs"].pop(),
                           f"{TAG}[0][1].labeling_proofs: expected 2 labeling proofs (one per "
                           f"layer), got 1"),
    "36 parents": (lambda d: _first(d)["labeling_proofs"][1]["parents"].pop(),
                   f"{TAG}[0][1].labeling_proofs[1].parents: expected 37 parents, got 36"),
    "negative layer": (lambda d: _first(d)["labeling_proofs"][0].__setitem__("layer_index", -1),
                       f"{TAG}[0][1].labeling_proofs[0].layer_index: must be >= 0, got -1"),
    "node beyond the sector": (lambda d: _first(d)["encoding_proof"].__setitem__("node", 1 << 40),
                               f"{TAG}[0][1].encoding_proof.node: must be < 64"),
    "sector_id alone": (_set(lambda d: d, "sector_id", 5),
                        "prover_id: required field is missing (prover_id and sector_id go "
                        "together)"),
    "a proof not an object": (lambda d: d["vanilla_proofs"]["StackedDrg2KiBV1"][0]
                              .__setitem__(0, []),
                              f"{TAG}[0][0]: expected an object, got array"),
}


@pytest.fixture(scope="module")
def small_doc(module_rng):
    rng = np.random.default_rng(module_rng.getrandbits(64))
    return phase1_json(random_c1(registered_proof("StackedDrg2KiBV1_1"), rng))


@pytest.mark.parametrize("mutate, expected", BAD.values(), ids=BAD.keys())
def test_malformed_c1_names_the_field(mutate, expected, small_doc, tmp_path):
    """In both encodings, and from the CLI: one line, exit code 2."""
    doc = json.loads(small_doc)
    mutate(doc)
    text = json.dumps(doc, separators=(",", ":")).encode()
    with pytest.raises(FilecoinError) as info:
        parse_c1(text)
    message = str(info.value)
    assert message.startswith(expected), message
    assert "\n" not in message
    wrapper = {"SectorNum": 1, "Phase1Out": base64.b64encode(text).decode(), "SectorSize": 2048}
    with pytest.raises(FilecoinError) as info:
        parse_c1(json.dumps(wrapper))
    assert str(info.value) == f"Phase1Out.{message}"
    path = tmp_path / "c1.json"
    path.write_text(json.dumps(wrapper))
    result = CliRunner().invoke(main, ["filecoin", "check", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.strip().splitlines() == [f"Error: {path}: Phase1Out.{message}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c1.json"]  # nothing else written


WRAPPER_BAD = {
    "not base64": (lambda w: w.__setitem__("Phase1Out", "@@@@"), "Phase1Out: not valid base64"),
    "sector size": (lambda w: w.__setitem__("SectorSize", 4096),
                    "SectorSize: 4096 is not the sector size of StackedDrg2KiBV1_1 (2048)"),
    "sector number missing": (lambda w: w.pop("SectorNum"), "SectorNum: required field"),
    "negative sector": (lambda w: w.__setitem__("SectorNum", -1), "SectorNum: must be >= 0"),
    "payload not JSON": (lambda w: w.__setitem__("Phase1Out", base64.b64encode(b"{").decode()),
                         "Phase1Out: not valid JSON"),
}


@pytest.mark.parametrize("mutate, expected", WRAPPER_BAD.values(), ids=WRAPPER_BAD.keys())
def test_malformed_wrapper_names_the_field(mutate, expected, small_doc):
    wrapper = {"SectorNum": 1, "Phase1Out": base64.b64encode(small_doc).decode(),
               "SectorSize": 2048}
    mutate(wrapper)
    with pytest.raises(FilecoinError, match="^" + expected.replace("(", r"\(").replace(")", r"\)")):
        parse_c1(json.dumps(wrapper))


def test_not_json_not_a_c1_and_too_large(small_doc):
    with pytest.raises(FilecoinError, match=r"^c1: not valid JSON \(Expecting"):
        parse_c1(b"{" + small_doc)
    with pytest.raises(FilecoinError, match="^c1: expected a SealCommitPhase1Output object, got "
                                            "array"):
        parse_c1(b"[1]")
    with pytest.raises(FilecoinError, match="^registered_proof: required field is missing"):
        parse_c1(b'{"SectorNum": 1}')
    with pytest.raises(FilecoinError, match=f"^c1: {len(small_doc)} bytes exceeds max_input_bytes "
                                            f"\\(1000, PROOFQ_MAX_INPUT_BYTES\\)"):
        parse_c1(small_doc, max_bytes=1000)


def test_miner_id_in_the_wrapper_names_prover_and_sector(small_doc):
    wrapper = {"SectorNum": 9, "Phase1Out": base64.b64encode(small_doc).decode(),
               "SectorSize": 2048, "MinerId": 1000}
    c1 = parse_c1(json.dumps(wrapper))
    assert (c1.prover_id[:2], c1.sector_id, c1.sector_num) == (b"\xe8\x07", 9, 9)
