"""client/cuzk's generated modules (and their type stubs, for mypy) are what grpcio-tools
makes of client/cuzk/proving.proto today, and that file keeps cuzk's wire: package, service,
methods and field numbers as curio:extern/cuzk/cuzk-proto/proto/cuzk/v1/proving.proto
(curio@e0294b0f) has them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ("proving_pb2.py", "proving_pb2.pyi", "proving_pb2_grpc.py")
#: The generators' own version stamps: a grpcio-tools release changes them, not the wire.
_STAMPS = re.compile(r"^# Protobuf Python Version: .*$|^GRPC_GENERATED_VERSION = .*$"
                     r"|_runtime_version\.ValidateProtobufRuntimeVersion\([^)]*\)",
                     re.MULTILINE)


def _unstamped(text: str) -> str:
    return _STAMPS.sub("<version>", text)


def test_generated_modules_match_the_proto(tmp_path):
    protoc = pytest.importorskip("grpc_tools.protoc", reason="grpcio-tools is in the test extra")
    (tmp_path / "client" / "cuzk").mkdir(parents=True)
    shutil.copy(ROOT / "client" / "cuzk" / "proving.proto", tmp_path / "client" / "cuzk")
    assert protoc.main(["protoc", f"-I{tmp_path}", f"--python_out={tmp_path}",
                        f"--pyi_out={tmp_path}", f"--grpc_python_out={tmp_path}",
                        str(tmp_path / "client" / "cuzk" / "proving.proto")]) == 0
    for name in GENERATED:
        made = (tmp_path / "client" / "cuzk" / name).read_text()
        assert _unstamped(made) == _unstamped((ROOT / "client" / "cuzk" / name).read_text()), (
            f"client/cuzk/{name} is stale: python -m grpc_tools.protoc -I. --python_out=. "
            f"--pyi_out=. --grpc_python_out=. client/cuzk/proving.proto")


def test_the_wire_is_cuzks():
    from client.cuzk import proving_pb2 as pb

    file = pb.DESCRIPTOR
    assert file.package == "cuzk.v1"
    service = file.services_by_name["ProvingEngine"]
    assert [m.name for m in service.methods] == [
        "SubmitProof", "AwaitProof", "Prove", "CancelProof", "GetStatus", "GetMetrics",
        "PreloadSRS", "EvictSRS"]
    fields = {(m.name, f.name): f.number for m in file.message_types_by_name.values()
              for f in m.fields}
    assert {k: fields[k] for k in [
        ("SubmitProofRequest", "request_id"), ("SubmitProofRequest", "registered_proof"),
        ("SubmitProofRequest", "vanilla_proof"), ("SubmitProofRequest", "vanilla_proofs"),
        ("SubmitProofRequest", "sector_number"), ("SubmitProofRequest", "miner_id"),
        ("SubmitProofRequest", "partition_index"), ("SubmitProofRequest", "comm_d_new"),
        ("AwaitProofResponse", "proof"), ("AwaitProofResponse", "total_ms"),
        ("GetStatusResponse", "pinned_memory_limit_bytes"), ("GPUStatus", "current_proof_kind"),
        ("ProveRequest", "submit"), ("ProveResponse", "result")]} == {
        ("SubmitProofRequest", "request_id"): 1, ("SubmitProofRequest", "registered_proof"): 4,
        ("SubmitProofRequest", "vanilla_proof"): 10, ("SubmitProofRequest", "vanilla_proofs"): 11,
        ("SubmitProofRequest", "sector_number"): 20, ("SubmitProofRequest", "miner_id"): 21,
        ("SubmitProofRequest", "partition_index"): 23, ("SubmitProofRequest", "comm_d_new"): 32,
        ("AwaitProofResponse", "proof"): 3, ("AwaitProofResponse", "total_ms"): 14,
        ("GetStatusResponse", "pinned_memory_limit_bytes"): 8,
        ("GPUStatus", "current_proof_kind"): 6,
        ("ProveRequest", "submit"): 1, ("ProveResponse", "result"): 1}
    assert [(v.name, v.number) for v in pb.Priority.DESCRIPTOR.values] == [
        ("PRIORITY_UNSPECIFIED", 0), ("LOW", 1), ("NORMAL", 2), ("HIGH", 3), ("CRITICAL", 4)]
    assert [v.number for v in pb.AwaitProofResponse.Status.DESCRIPTOR.values] == [0, 1, 2, 3, 4]
