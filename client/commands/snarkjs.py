"""Local commands for circom/snarkjs Groth16 circuits (BLS12-381).

    proofq keys add circuit.zkey                      import (check, store), print the key id
    proofq prove --zkey Z --wtns W -o proof.json --public public.json
    proofq verify --vk verification_key.json --public public.json --proof proof.json

``prove`` and ``verify`` share their names with the other types' (``--c1``, ``--post`` …):
these are circom's forms of them (``client.commands.forms``), chosen by their options.
Files are snarkjs's own, so ``snarkjs groth16 verify`` accepts what ``prove`` writes. Exit
codes as in ``local``: 0 valid, 1 invalid, 2 bad input.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from client.commands.common import JSON_OPTION, output_path, reports
from client.commands.forms import CommandForm
from client.commands.output import emit, progress_bar
from config.settings import SettingsError, get_settings
from snark import groth16
from snark.backend import BackendUnavailable
from snark.files import write_atomic
from snark.keys import KeyFileError, ProvingKey
from snark.qap import ODD
from snark.snarkjs.binfile import SnarkjsFormatError
from snark.snarkjs.json_formats import (proof_from_json, proof_to_json, public_from_json,
                                        public_to_json, vk_from_json)
from snark.snarkjs.keystore import import_zkey
from snark.snarkjs.witness import check_witness, public_inputs
from snark.snarkjs.wtns import read_wtns
from workers.backend_choice import make_backend

reports_bad_input = reports(SnarkjsFormatError, KeyFileError, SettingsError,
                            BackendUnavailable, OSError)


def read_json(path: str, what: str) -> Any:
    """A JSON file; an unreadable or invalid one is one line naming it."""
    text = Path(path).read_text()
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SnarkjsFormatError(f"{path}: not valid JSON for {what} ({exc.msg}, line "
                                 f"{exc.lineno})") from None


def _import(zkey_path: str, as_json: bool) -> ProvingKey:
    with progress_bar(not as_json) as progress:
        progress.add_task(f"importing {zkey_path}", total=None)
        return import_zkey(zkey_path, get_settings().params_dir)


# -- keys ---------------------------------------------------------------------------------
@click.group()
def keys() -> None:
    """Proving keys in the params directory."""


@keys.command("add")
@click.argument("zkey_path", metavar="ZKEY", type=click.Path(dir_okay=False))
@JSON_OPTION
@reports_bad_input
def keys_add(zkey_path: str, as_json: bool) -> None:
    """Import a snarkjs Groth16 zkey (BLS12-381): check its points, store it under its
    content hash, print the key id."""
    started = time.perf_counter()
    key = _import(zkey_path, as_json)
    seconds = time.perf_counter() - started
    params = Path(get_settings().params_dir) / key.circuit_id
    emit(as_json, {"key_id": key.circuit_id, "params": str(params),
                         "variables": key.r1cs.num_variables,
                         "public": key.r1cs.num_inputs - 1, "domain_size": key.domain_size,
                         "seconds": round(seconds, 3)},
               [key.circuit_id])


@keys.command("list")
@JSON_OPTION
@reports_bad_input
def keys_list(as_json: bool) -> None:
    """List the proving keys in the params directory (PROOFQ_PARAMS_DIR): id, where it came
    from, constraints, domain, size on disk."""
    params = Path(get_settings().params_dir)
    found = [entry for entry in sorted(params.glob("*/manifest.json"))]
    rows = [_key_row(manifest) for manifest in found]
    lines = [f"{len(rows)} key{'' if len(rows) == 1 else 's'} in {params}"] + [
        f"{r['key_id']}  {r['kind']:<14} {r['constraints']:>10} constraints  2^{r['log_domain']}"
        f"  {r['bytes'] / 2**20:8.1f} MiB" for r in rows]
    emit(as_json, {"params": str(params), "keys": rows}, lines)


def _key_row(manifest_path: Path) -> dict:
    """A key's line from its manifest alone (nothing loaded, nothing hashed)."""
    manifest = json.loads(manifest_path.read_text())
    directory = manifest_path.parent
    size = sum(f.stat().st_size for f in directory.iterdir() if f.is_file())
    return {"key_id": directory.name,
            "kind": "snarkjs import" if manifest.get("h_form") == ODD.name else "proofq setup",
            "constraints": manifest.get("num_constraints"),
            "log_domain": int(manifest.get("domain_size", 1)).bit_length() - 1,
            "bytes": size}


# -- prove --------------------------------------------------------------------------------
@click.command("prove")
@click.option("--zkey", "zkey_path", required=True, type=click.Path(dir_okay=False),
              help="snarkjs Groth16 proving key (imported on first use)")
@click.option("--wtns", "wtns_path", required=True, type=click.Path(dir_okay=False),
              help="circom witness (.wtns)")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="where to write proof.json")
@click.option("--public", "public_path", required=True, type=click.Path(dir_okay=False),
              help="where to write public.json")
@click.option("--backend", "backend_name", type=click.Choice(["auto", "cpu", "gpu"]),
              default=None, help="prover backend [default: the backend setting, auto]")
@JSON_OPTION
@reports_bad_input
def prove_snarkjs(zkey_path: str, wtns_path: str, output: str, public_path: str,
                  backend_name: str | None, as_json: bool) -> None:
    """Prove a circom witness with a snarkjs zkey; write snarkjs's proof.json and public.json."""
    targets = output_path(output), output_path(public_path)
    backend = make_backend(backend_name or get_settings().backend)
    started = time.perf_counter()
    key = _import(zkey_path, as_json)
    witness = read_wtns(wtns_path)
    check_witness(key, witness, wtns_path)
    public = public_inputs(key, witness)
    with progress_bar(not as_json) as progress:
        progress.add_task(f"proving on {backend.name}", total=None)
        proof = groth16.prove(key, witness, backend)
        if not groth16.verify(key.vk, public, proof):
            raise SnarkjsFormatError(f"{wtns_path}: the proof does not verify: the witness "
                                     f"does not satisfy the circuit of {zkey_path}")
    for target, data in zip(targets, (proof_to_json(proof), public_to_json(public))):
        write_atomic(target, (json.dumps(data, indent=1) + "\n").encode())
    seconds = time.perf_counter() - started
    emit(as_json, {"proof": output, "public": public_path, "key_id": key.circuit_id,
                         "backend": backend.name, "seconds": round(seconds, 3)},
               [f"proved {wtns_path} on {backend.name} in {seconds:.2f}s → {output}, "
                f"{public_path} ({len(public)} public signals)"])


# -- verify -------------------------------------------------------------------------------
@click.command("verify")
@click.option("--vk", "vk_path", required=True, type=click.Path(dir_okay=False),
              help="snarkjs verification_key.json")
@click.option("--public", "public_path", required=True, type=click.Path(dir_okay=False),
              help="public.json")
@click.option("--proof", "proof_path", required=True, type=click.Path(dir_okay=False),
              help="proof.json")
@JSON_OPTION
@reports_bad_input
def verify_snarkjs(vk_path: str, public_path: str, proof_path: str, as_json: bool) -> None:
    """Check a snarkjs proof.json (exit 0 valid, 1 invalid, 2 bad input)."""
    vk = vk_from_json(read_json(vk_path, "a verification key"), vk_path)
    public = public_from_json(read_json(public_path, "public signals"), public_path)
    proof = proof_from_json(read_json(proof_path, "a proof"), proof_path)
    if len(public) != vk.num_public:
        raise SnarkjsFormatError(f"{public_path}: {len(public)} public signals, {vk_path} "
                                 f"expects {vk.num_public}")
    valid = groth16.verify(vk, public, proof)
    emit(as_json, {"valid": valid, "proof": proof_path, "public": public_path},
               [f"{proof_path}: {'valid' if valid else 'INVALID'}"])
    if not valid:
        sys.exit(1)


COMMANDS: list[click.Command | CommandForm] = [
    keys, CommandForm(prove_snarkjs, ("--zkey", "--wtns"), "a circom witness (--zkey --wtns)"),
    CommandForm(verify_snarkjs, ("--vk",), "a snarkjs proof (--vk)")]
