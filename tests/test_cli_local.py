"""The local CLI: seal → setup → prove → verify, and every bad input as one line, exit 2."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from client.cli import main
from config.settings import get_settings
from snark.fields import FR_MODULUS
from snark.keys import KeyFileError
from snark.porep.c1 import fr_hex, parse_c1
from snark.porep.circuit import circuit_r1cs
from snark.proof_types import Storage
from snark.registry import proof_type, worker_half


@pytest.fixture(scope="module")
def params_dir(tmp_path_factory):
    """Shared with test_porep through the session's base temp dir: one setup per shape."""
    path = tmp_path_factory.getbasetemp() / "porep-params"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PROOFQ_PARAMS_DIR", str(path))
        get_settings.cache_clear()
        yield path
    get_settings.cache_clear()


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == code, (result.exit_code, result.output)
    if code == 2:
        assert "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
    return result.output


@pytest.fixture(scope="module")
def workdir(params_dir, tmp_path_factory):
    """A sealed 2KiB sector (2 partitions x 2 challenges), its params and its proof."""
    work = tmp_path_factory.mktemp("cli")
    c1, proof = work / "c1.json", work / "proof.bin"
    run("seal", "--sector-size", "2KiB", "--partitions", "2", "--challenges", "2",
        "-o", str(c1))
    setup = json.loads(run("setup", "--c1", str(c1), "--json"))
    assert Path(setup["params"]).parent == params_dir
    proved = json.loads(run("prove", "--c1", str(c1), "-o", str(proof), "--backend", "cpu",
                            "--json"))
    assert proved["bytes"] == 384 and proof.stat().st_size == 384
    return work


def test_round_trip(workdir):
    out = json.loads(run("verify", "--c1", str(workdir / "c1.json"),
                         "--proof", str(workdir / "proof.bin"), "--json"))
    assert out == {"valid": True, "proof": str(workdir / "proof.bin"), "partitions": 2}
    assert "valid" in run("verify", "--c1", str(workdir / "c1.json"),
                          "--proof", str(workdir / "proof.bin"))


def test_a_proof_of_another_sector_exits_1(workdir, tmp_path):
    other = tmp_path / "other.json"
    run("seal", "--partitions", "2", "--challenges", "2", "-o", str(other))
    out = run("verify", "--c1", str(other), "--proof", str(workdir / "proof.bin"), code=1)
    assert "INVALID" in out


def test_seal_with_data_file(tmp_path, rng):
    data = tmp_path / "sector.bin"
    data.write_bytes(rng.randbytes(4096))
    out = json.loads(run("seal", "--sector-size", "4KiB", "--data", str(data), "--challenges",
                         "1", "-o", str(tmp_path / "c1.json"), "--json"))
    again = json.loads(run("seal", "--sector-size", "4096", "--data", str(data), "--challenges",
                           "1", "-o", str(tmp_path / "c2.json"), "--json"))
    assert out["comm_d"] == again["comm_d"] and out["circuit"] == "porep-4KiB-k1"


def _bump(value: str) -> str:
    return fr_hex((int(value, 16) + 1) % FR_MODULUS)


def _ch(doc):
    return doc["vanilla_proofs"][1]["challenges"][0]


C1_DEFECTS = {
    "missing field": (lambda d: d.pop("comm_d"), "comm_d: required field is missing"),
    "wrong type": (lambda d: d.update(partitions="2"), "partitions: input should be"),
    "non-canonical hex": (lambda d: d.update(seed=fr_hex(FR_MODULUS + 5)), "seed: non-canonical"),
    "malformed hex": (lambda d: _ch(d).update(data_leaf="0xzz"),
                      "vanilla_proofs[1].challenges[0].data_leaf: malformed hex"),
    "wrong path length": (lambda d: _ch(d)["r_path"].pop(),
                          "vanilla_proofs[1].challenges[0].r_path: expected 6 siblings, got 5"),
    "index out of range": (lambda d: _ch(d).update(index=99),
                           "vanilla_proofs[1].challenges[0].index: 99 is out of range"),
    "index not from seed": (lambda d: _ch(d).update(index=(_ch(d)["index"] + 1) % 64),
                            "vanilla_proofs[1].challenges[0].index: "),
    "tampered leaf": (lambda d: _ch(d).update(data_leaf=_bump(_ch(d)["data_leaf"])),
                      "vanilla_proofs[1].challenges[0]: data_leaf with d_path"),
    "tampered sibling": (lambda d: _ch(d)["r_path"].__setitem__(4, _bump(_ch(d)["r_path"][4])),
                         "vanilla_proofs[1].challenges[0]: replica_leaf with r_path"),
    "wrong comm_r": (lambda d: d.update(comm_r=_bump(d["comm_r"])),
                     "comm_r: none of the 4 r_paths hashes to it (wrong comm_r)"),
    "partition count": (lambda d: d.update(partitions=3),
                        "vanilla_proofs: expected 3 partitions"),
}


@pytest.mark.parametrize("defect, message", C1_DEFECTS.values(), ids=C1_DEFECTS.keys())
@pytest.mark.parametrize("command", ["prove", "verify", "setup"])
def test_bad_c1_exits_2_naming_the_field(workdir, tmp_path, defect, message, command):
    doc = json.loads((workdir / "c1.json").read_text())
    defect(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out_file = tmp_path / "proof.bin"
    args = {"prove": ["-o", str(out_file)], "verify": ["--proof", str(workdir / "proof.bin")],
            "setup": []}[command]
    output = run(command, "--c1", str(bad), *args, code=2)
    assert f"Error: {bad}: {message}" in output, output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]  # nothing written


@pytest.mark.parametrize("size", [0, 191, 383])
def test_truncated_proof_file(workdir, tmp_path, size):
    proof = tmp_path / "short.bin"
    proof.write_bytes((workdir / "proof.bin").read_bytes()[:size].ljust(size, b"\0"))
    output = run("verify", "--c1", str(workdir / "c1.json"), "--proof", str(proof), code=2)
    assert f"{proof}: proof: expected 2 proofs = 384 bytes, got {size}" in output


def test_an_overlong_proof_file_is_refused(workdir, tmp_path):
    proof = tmp_path / "long.bin"
    proof.write_bytes((workdir / "proof.bin").read_bytes() + b"\0")
    output = run("verify", "--c1", str(workdir / "c1.json"), "--proof", str(proof), code=2)
    assert f"{proof}: more than 384 bytes (2 proofs of 192 bytes)" in output


def _proofq_in_2gib(*args: str, **env: str) -> subprocess.CompletedProcess:
    """``proofq`` in a subprocess limited to 2 GiB of address space: a reader that does not
    stop at its limit fails there (MemoryError) instead of exhausting the machine."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run([str(Path(sys.executable).with_name("proofq")), *args],
                          capture_output=True, text=True, env={**os.environ, **env},
                          preexec_fn=limit, timeout=600)


@pytest.mark.slow
def test_endless_inputs_are_read_no_further_than_their_limit(workdir, params_dir, tmp_path):
    """``/dev/zero`` as the C1 (max_input_bytes, set here by its 0.1 name) or as the proof
    (the C1's proof size)."""
    for args, message in [
        (["prove", "--c1", "/dev/zero", "-o", str(tmp_path / "p.bin")],
         "Error: /dev/zero: more than 100000 bytes (max_input_bytes, PROOFQ_MAX_INPUT_BYTES)"),
        (["verify", "--c1", str(workdir / "c1.json"), "--proof", "/dev/zero"],
         "Error: /dev/zero: more than 384 bytes (2 proofs of 192 bytes)")]:
        done = _proofq_in_2gib(*args, PROOFQ_MAX_C1_BYTES="100000",
                               PROOFQ_PARAMS_DIR=str(params_dir))
        assert (done.returncode, done.stderr.strip()) == (2, message)


def test_a_proof_of_all_ones_is_malformed_not_invalid(workdir, tmp_path):
    proof = tmp_path / "ones.bin"
    proof.write_bytes(b"\xff" * 384)
    output = run("verify", "--c1", str(workdir / "c1.json"), "--proof", str(proof), code=2)
    assert f"{proof}: proof[0].a: not canonical: an infinity flag with other bits set" in output


def test_a_corrupt_verifying_key_is_a_key_error_not_an_invalid_proof(workdir, params_dir):
    """vk.json with two points swapped is still a well-formed key, of another circuit."""
    key_id = json.loads(run("setup", "--c1", str(workdir / "c1.json"), "--json"))["circuit_id"]
    vk_path = params_dir / key_id / "vk.json"
    original = vk_path.read_text()
    vk = json.loads(original)
    vk["ic"][0], vk["ic"][1] = vk["ic"][1], vk["ic"][0]
    try:
        vk_path.write_text(json.dumps(vk, indent=1))
        output = run("verify", "--c1", str(workdir / "c1.json"),
                     "--proof", str(workdir / "proof.bin"), code=2)
        assert f"{vk_path}: sha256 does not match the manifest" in output
        c1 = parse_c1((workdir / "c1.json").read_bytes())  # the job path's final check
        with pytest.raises(KeyFileError, match="vk.json: sha256 does not match"):
            worker_half(proof_type("porep-demo"), Storage(params_dir)).verify(
                c1, (workdir / "proof.bin").read_bytes())
    finally:
        vk_path.write_text(original)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_outputs_honour_the_umask(workdir, tmp_path, umask):
    previous = os.umask(umask)
    try:
        run("seal", "-o", str(tmp_path / "c1.json"))
        run("prove", "--c1", str(workdir / "c1.json"), "-o", str(tmp_path / "proof.bin"))
    finally:
        os.umask(previous)
    for name in ("c1.json", "proof.bin"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask, name


def test_every_option_has_help():
    from click import Group

    def commands(group):
        for command in group.commands.values():
            yield from commands(command) if isinstance(command, Group) else [command]

    main.list_commands(None)  # loads the subcommands
    missing = [f"{command.name} {param.opts[0]}" for command in commands(main)
               for param in command.params if param.param_type_name == "option" and not param.help]
    assert missing == []


@pytest.mark.parametrize("command, markers", [
    ("seal", ["--sector-size", "--registered-proof"]),
    ("prove", ["--c1", "--update", "--zkey", "--post"]),
    ("verify", ["--c1", "--update", "--vk", "--post"]),
])
def test_a_command_of_several_input_forms_has_one_usage_block(command, markers):
    """Before: one whole help per form, each with its own Usage line."""
    text = run(command, "--help")
    assert text.count("Usage:") == 1 and text.startswith("Usage:"), text
    assert all(marker in text for marker in markers), text


def test_counts_of_one_are_singular(tmp_path):
    """Before: 'sealed porep-2KiB-k2 (1 partitions)', the quickstart's first line."""
    from client.commands.common import plural

    out = run("seal", "-o", str(tmp_path / "c1.json"))
    assert out.startswith("sealed porep-2KiB-k2 (1 partition) in "), out
    out = run("seal", "--partitions", "2", "-o", str(tmp_path / "c2.json"))
    assert out.startswith("sealed porep-2KiB-k2 (2 partitions) in "), out
    assert [plural(n, "proof") for n in (0, 1, 2)] == ["0 proofs", "1 proof", "2 proofs"]


@pytest.mark.parametrize("command", [["status", "some-job"], ["jobs"], ["cancel", "some-job"]])
def test_an_unreachable_redis_is_named_by_its_setting(command):
    """Before: 'Error 111 connecting to 127.0.0.1:N. Connection refused.', no setting named."""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROOFQ_")}
    done = subprocess.run([sys.executable, "-m", "client", *command], capture_output=True,
                          text=True, timeout=120,
                          env={**env, "PROOFQ_REDIS_URL": f"redis://127.0.0.1:{port}/0"})
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert f"127.0.0.1:{port}" in line and line.endswith(
        "(the Redis that PROOFQ_REDIS_URL names: is it running, and reachable from here?)"), line


@pytest.mark.parametrize("command", ["submit", "status", "result", "cancel", "intake"])
def test_cluster_commands_say_they_use_proofq_redis_url(command):
    assert "PROOFQ_REDIS_URL" in run(command, "--help")


@pytest.mark.slow
def test_stderr_is_silent_outside_a_terminal(tmp_path, params_dir):
    proofq = Path(sys.executable).with_name("proofq")
    done = subprocess.run([str(proofq), "seal", "-o", str(tmp_path / "c1.json")],
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""


def test_params_for_another_circuit(workdir, params_dir, tmp_path):
    """A key directory holding another circuit's params, under this circuit's id."""
    c1 = tmp_path / "k1.json"
    run("seal", "--challenges", "1", "--partitions", "2", "-o", str(c1))
    k2_id = json.loads(run("setup", "--c1", str(workdir / "c1.json"), "--json"))["circuit_id"]
    k1_dir = params_dir / circuit_r1cs(2048, 1).circuit_id()
    if k1_dir.exists():
        shutil.rmtree(k1_dir)
    shutil.copytree(params_dir / k2_id, k1_dir)
    try:
        output = run("verify", "--c1", str(c1), "--proof", str(workdir / "proof.bin"), code=2)
        assert f"params {k2_id}: made for another circuit; porep-2KiB-k1 needs" in output
        output = run("prove", "--c1", str(c1), "-o", str(tmp_path / "p.bin"), code=2)
        assert f"{k1_dir}: circuit id in manifest, vk.json and directory differ" in output
        assert not (tmp_path / "p.bin").exists()
    finally:
        shutil.rmtree(k1_dir)


def test_verify_without_params(tmp_path):
    c1 = tmp_path / "big.json"
    run("seal", "--sector-size", "8KiB", "--challenges", "3", "-o", str(c1))
    output = run("verify", "--c1", str(c1), "--proof", str(c1), code=2)
    assert "no params for porep-8KiB-k3" in output


@pytest.mark.parametrize("args, message", [
    (["seal", "--sector-size", "3KiB"], "sector_size: 3072 is not a power of two"),
    (["seal", "--sector-size", "2 KB"], "sector_size: cannot read"),
    (["seal", "--data", "{missing}"], "{missing}: No such file or directory"),
    (["seal", "--data", "{c1}"], "{c1}: more than 2048 bytes (the sector size)"),
    (["seal", "--data", "{proof}"], "{proof}: expected 2048 bytes (the sector size), got 384"),
    (["seal", "--sector-size", "2TiB"],
     "sector_size: 2199023255552 (2TiB) is outside 2KiB to 1TiB"),
    (["prove", "--c1", "{tmp}"], "{tmp}: Is a directory"),
    (["verify", "--c1", "{c1}", "--proof", "{tmp}"], "{tmp}: Is a directory"),
    (["prove", "--c1", "{c1}", "-o", ""], "output path is empty"),
    (["prove", "--c1", "{c1}", "-o", "{tmp}"], "{tmp}: is a directory"),
    (["prove", "--c1", "{c1}", "-o", "/proc/self/p.bin"], "/proc/self/p.bin: cannot write in"),
    (["prove", "--c1", "{missing}"], "{missing}: No such file or directory"),
    (["prove", "--c1", "{proof}"], "{proof}: c1: not valid JSON"),
    (["prove", "--c1", "{c1}", "-o", "{tmp}/no/such/dir/p.bin"], "does not exist"),
])
def test_bad_arguments(workdir, tmp_path, args, message):
    names = {"missing": str(tmp_path / "missing"), "c1": str(workdir / "c1.json"),
             "proof": str(workdir / "proof.bin"), "tmp": str(tmp_path)}
    args = [a.format(**names) for a in args]
    if args[0] == "seal":
        args += ["-o", str(tmp_path / "out.json")]
    if args[0] == "prove" and "-o" not in args:
        args += ["-o", str(tmp_path / "out.bin")]
    output = run(*args, code=2)
    assert message.format(**names) in output, output
    assert not any(p.name.startswith("out") for p in tmp_path.iterdir())


def test_info_reports_backends(params_dir):
    info = json.loads(run("info", "--json"))
    assert info["backends"]["cpu"]["available"] is True
    assert set(info["backends"]["gpu"]) == {"available", "reason"}
    assert info["params_dir"] == str(params_dir)
    assert info["versions"]["proofq"]


@pytest.mark.slow
def test_real_subprocess_reports_one_line(workdir, params_dir, tmp_path):
    """The installed ``proofq`` entry point: exit codes and stderr without a traceback."""
    proofq = Path(sys.executable).with_name("proofq")
    env = os.environ | {"PROOFQ_PARAMS_DIR": str(params_dir)}
    good = subprocess.run([str(proofq), "verify", "--c1", str(workdir / "c1.json"), "--proof",
                           str(workdir / "proof.bin")], capture_output=True, text=True, env=env)
    assert good.returncode == 0 and "valid" in good.stdout, good.stderr
    doc = json.loads((workdir / "c1.json").read_text())
    doc["vanilla_proofs"][0]["challenges"][1]["d_path"].pop()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    failed = subprocess.run([str(proofq), "prove", "--c1", str(bad), "-o", str(tmp_path / "p")],
                            capture_output=True, text=True, env=env)
    assert failed.returncode == 2
    assert failed.stderr.strip() == (f"Error: {bad}: vanilla_proofs[0].challenges[1].d_path: "
                                     "expected 6 siblings, got 5")
    assert not (tmp_path / "p").exists()


@pytest.mark.slow
def test_invalid_setting_is_one_line_with_exit_2():
    env = {**os.environ, "PROOFQ_BACKEND": "bogus"}
    run = subprocess.run([sys.executable, "-m", "client", "info"], capture_output=True,
                         text=True, env=env)
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "Error: PROOFQ_BACKEND: Input should be 'auto', 'cpu' or 'gpu'"]


@pytest.mark.parametrize("command, forms", [
    ("seal", ("--sector-size", "--registered-proof")),
    ("prove", ("--c1", "--update", "--zkey", "--post")),
    ("verify", ("--c1", "--update", "--vk", "--post")),
])
def test_a_command_asked_for_alone_has_every_input_form(command, forms):
    """In a fresh process the CLI loads only what a command needs: a proving command still
    gets the forms that later modules add (``proofq seal --registered-proof`` once answered
    "No such option", the job commands having been loaded alone)."""
    run = subprocess.run([sys.executable, "-m", "client", command, "--help"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    missing = [form for form in forms if form not in run.stdout]
    assert missing == [], run.stdout
