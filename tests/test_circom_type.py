"""The ``circom`` proof type (``groth16`` before): job inputs (inline and shared-storage
witnesses), and a batch of circom witnesses through the worker runtime, accepted by
``snarkjs groth16 verify``."""

from __future__ import annotations

import base64
import json
import random
import struct

import pytest
import redis

from config.settings import load_settings
from snark.fields import FR_MODULUS
from snark.job_input import InputLimits
from snark.keys import KeyFileError
from snark.proof_types import Storage
from snark.registry import proof_type, worker_half
from snark.snarkjs.binfile import SnarkjsFormatError
from snark.snarkjs.keystore import import_zkey
from snark.snarkjs.job import CircomJobError, job_from_files, parse_job, read_witness
from tests.snarkjs_tools import snarkjs_fixtures
from workers.gpu_binding import bind_cpu
from workers.failures import PartitionFailed
from workers.runtime import WorkerRuntime

SEED = random.randrange(2**32)
print(f"test_groth16_type seed {SEED}")
CIRCOM = proof_type("circom")
LIMITS = InputLimits(max_input_bytes=1 << 24, max_inline_witness_bytes=1 << 22)
KEY = "0123456789abcdef" * 2
BN128_R = 0x30644E72E131A029B85045B68181585D2833E84879B9709143E1F593F0000001


def wtns_bytes(values: list[int]) -> bytes:
    """A .wtns file (version 2: header section, values section) holding ``values``."""
    header = struct.pack("<I", 32) + FR_MODULUS.to_bytes(32, "little") + \
        struct.pack("<I", len(values))
    data = b"".join(v.to_bytes(32, "little") for v in values)
    sections = b"".join(struct.pack("<IQ", kind, len(body)) + body
                        for kind, body in ((1, header), (2, data)))
    return b"wtns" + struct.pack("<II", 2, 2) + sections


def _job(witnesses, key=KEY) -> str:
    return json.dumps({"key": key, "witnesses": witnesses})


INLINE = {"wtns": base64.b64encode(wtns_bytes([1, 2, 3])).decode()}


@pytest.mark.parametrize("raw, message", [
    ("[]", 'job: expected a JSON object with exactly "key" and "witnesses"'),
    ("{", "job: not valid JSON"),
    (_job([INLINE], key="abc"), "key: expected a key id of 32 lowercase hex digits"),
    (_job([]), "witnesses: expected a non-empty list"),
    (_job([INLINE, {"wtns": "@@"}]), r"witnesses\[1\].wtns: not base64"),
    (_job([{"wtns": "AA==", "path": "a"}]), r"witnesses\[0\]: expected"),
    (_job([{"path": "/etc/passwd"}]), r"witnesses\[0\].path: '/etc/passwd' must be a relative"),
    (_job([{"path": "a/../../b.wtns"}]), r"witnesses\[0\].path: .* no \.\."),
    (_job([{"path": 7}]), r"witnesses\[0\].path: expected a string"),
])
def test_bad_jobs_are_refused_naming_the_field(raw, message):
    with pytest.raises(CircomJobError, match=message):
        parse_job(raw, max_bytes=1 << 20, max_inline=1 << 20)


def test_size_limits_of_the_job_and_of_an_inline_witness():
    raw = _job([INLINE])
    with pytest.raises(CircomJobError, match="exceeds max_input_bytes"):
        parse_job(raw, max_bytes=len(raw) - 1, max_inline=1 << 20)
    inline = len(wtns_bytes([1, 2, 3]))
    with pytest.raises(CircomJobError, match=r"witnesses\[0\].wtns: .* exceeds "
                                              r"max_inline_witness_bytes"):
        parse_job(raw, max_bytes=1 << 20, max_inline=inline - 1)
    assert parse_job(raw, max_bytes=1 << 20, max_inline=inline).witnesses[0].wtns


def test_small_files_travel_inline_large_ones_by_path_under_the_witness_dir(tmp_path):
    rng = random.Random(SEED)
    shared = tmp_path / "shared"
    (shared / "batch").mkdir(parents=True)
    small = [1, *(rng.randrange(FR_MODULUS) for _ in range(3))]
    large = [1, *(rng.randrange(FR_MODULUS) for _ in range(40))]
    (tmp_path / "small.wtns").write_bytes(wtns_bytes(small))
    (shared / "batch" / "large.wtns").write_bytes(wtns_bytes(large))
    limit = len(wtns_bytes(small))
    job = job_from_files(KEY, [tmp_path / "small.wtns", shared / "batch" / "large.wtns"],
                         max_inline=limit, witness_dir=shared)
    assert job.witnesses[0].wtns is not None and job.witnesses[1].path == "batch/large.wtns"
    again = parse_job(job.to_json(), max_bytes=1 << 20, max_inline=limit)
    assert again == job
    for i, values in enumerate((small, large)):
        read = read_witness(again, i, shared)
        assert [int.from_bytes(row.tobytes(), "little") for row in read] == values
    with pytest.raises(CircomJobError, match="not under witness_dir"):
        job_from_files(KEY, [shared / "batch" / "large.wtns"], max_inline=limit,
                       witness_dir=tmp_path / "elsewhere")
    with pytest.raises(CircomJobError, match=r"witnesses\[1\].path: this worker has no "
                                              r"witness_dir"):
        read_witness(again, 1, None)


def test_a_path_that_leads_outside_the_witness_dir_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (tmp_path / "secret.wtns").write_bytes(wtns_bytes([1, 5]))
    (shared / "link.wtns").symlink_to(tmp_path / "secret.wtns")
    job = parse_job(_job([{"path": "link.wtns"}]), max_bytes=1 << 20, max_inline=1 << 20)
    with pytest.raises(CircomJobError, match="leads outside the witness directory"):
        read_witness(job, 0, shared)


def test_the_former_name_is_the_same_type_and_the_callers_limits_apply():
    assert proof_type("groth16") is CIRCOM and CIRCOM.name == "circom"
    raw = _job([INLINE])
    inline = len(wtns_bytes([1, 2, 3]))
    assert CIRCOM.admit(raw, InputLimits(len(raw), inline)).partitions == 1
    with pytest.raises(CircomJobError, match="exceeds max_input_bytes"):
        CIRCOM.parse(raw, InputLimits(len(raw) - 1, inline))
    with pytest.raises(CircomJobError, match="exceeds max_inline_witness_bytes"):
        CIRCOM.admit(raw, InputLimits(len(raw), inline - 1))


def test_a_witness_of_another_curve_is_refused_at_check(tmp_path):
    bad = bytearray(wtns_bytes([1, 2]))
    bad[28:60] = BN128_R.to_bytes(32, "little")  # the header's prime, after n8
    job = CIRCOM.parse(_job([INLINE, {"wtns": base64.b64encode(bytes(bad)).decode()}]), LIMITS)
    with pytest.raises(SnarkjsFormatError, match=r"witnesses\[1\]: header prime: .* bn128"):
        worker_half(CIRCOM, Storage(tmp_path)).check(job)


# -- a batch through the worker runtime, with circom circuits ------------------------------

@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    return snarkjs_fixtures(tmp_path_factory)


@pytest.fixture()
def shared(tmp_path):
    """A params dir and a witness dir, as a worker's settings name them."""
    (tmp_path / "shared").mkdir()
    return tmp_path


@pytest.fixture()
def worker(shared):
    return worker_half(CIRCOM, Storage(shared / "params", shared / "shared"))


@pytest.fixture()
def runtime(redis_url, shared):
    settings = load_settings(backend="cpu", params_dir=shared / "params",
                             witness_dir=shared / "shared")
    runtime = WorkerRuntime(client=redis.Redis.from_url(redis_url), settings=settings,
                            worker_name="g16", binding=bind_cpu(0), backend=_cpu())
    yield runtime
    runtime.close()


def _cpu():
    from snark.cpu_backend import CpuBackend

    return CpuBackend()


def _witnesses(circuit, base, count: int, rng: random.Random) -> list:
    return [circuit.witness(rng.randrange(1, 1 << 60), rng.randrange(1, 1 << 60),
                            base / f"w{i}.wtns") for i in range(count)]


@pytest.mark.parametrize("name", ["chain-20", "secret-100"])
def test_a_batch_through_the_runtime_passes_snarkjs_verify(fixtures, shared, worker, runtime,
                                                           name):
    tools, circuits = fixtures
    circuit = circuits[name]
    rng = random.Random(SEED)
    key = import_zkey(circuit.zkey, shared / "params")
    files = _witnesses(circuit, shared / "shared", 3, rng)
    job = CIRCOM.parse({"key": key.circuit_id, "witnesses": [
        {"wtns": base64.b64encode(files[0].read_bytes()).decode()},
        *({"path": f.name} for f in files[1:])]}, LIMITS)
    assert [w.path for w in job.witnesses] == [None, "w1.wtns", "w2.wtns"]
    assert worker.has_key(job) and len(job.witnesses) == 3
    parts = [runtime.prove_partition(job_id="g16", partition=i, proof_type=CIRCOM,
                                     job_input=job) for i in range(3)]
    result = worker.assemble(job, parts)
    assert worker.verify(job, result)
    entries = json.loads(result)["proofs"]
    for i, entry in enumerate(entries):
        proof, public = shared / f"proof{i}.json", shared / f"public{i}.json"
        proof.write_text(json.dumps(entry["proof"]))
        public.write_text(json.dumps(entry["public"]))
        assert tools.groth16_verify(circuit.vk, public, proof), f"witness {i}"
    if entries[0]["public"]:  # a proof does not prove another witness's public signals
        swapped = json.loads(result)
        swapped["proofs"][0]["public"] = entries[1]["public"]
        assert not worker.verify(job, json.dumps(swapped).encode())
        public = shared / "public0.json"
        public.write_text(json.dumps(entries[1]["public"]))
        assert not tools.groth16_verify(circuit.vk, public, shared / "proof0.json")


def test_a_witness_of_another_circuit_fails_in_synthesize(fixtures, shared, runtime):
    circuits = fixtures[1]
    key = import_zkey(circuits["chain-20"].zkey, shared / "params")
    other = circuits["chain-200"].witness(3, 5, shared / "other.wtns")
    job = CIRCOM.parse(job_from_files(key.circuit_id, [other], max_inline=1 << 30,
                                      witness_dir=None), InputLimits(1 << 30, 1 << 30))
    with pytest.raises(PartitionFailed) as caught:
        runtime.prove_partition(job_id="g16-bad", partition=0, proof_type=CIRCOM,
                                job_input=job)
    assert (caught.value.phase, caught.value.transient) == ("synthesize", False)
    assert caught.value.reason.startswith("SnarkjsFormatError: witnesses[0]: ")


def test_a_key_that_was_never_imported_is_named_with_the_fix(worker):
    job = CIRCOM.parse(_job([INLINE]), LIMITS)
    assert not worker.has_key(job)
    with pytest.raises(KeyFileError, match=f"key {KEY}: not in .*proofq keys add"):
        worker.load_key(job)
