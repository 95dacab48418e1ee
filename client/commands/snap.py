"""Commands for SnapDeals updates (``snark.filecoin.snap``):

    proofq snap update --sector-size 2KiB -o update.json   (a TEST update, 2KiB to 64GiB)
    proofq snap check update.json
    proofq prove --update update.json -o proof.bin [--key development]
    proofq verify --update update.json --proof proof.bin [--key development]
    proofq filecoin circuit-info --update 32GiB

An update file is the JSON form of Curio's request (``snark.filecoin.snap.update``). Bad
input is one line naming the field, exit code 2; nothing is written unless the command
succeeds.
"""

from __future__ import annotations

import sys
import time

import click
import numpy as np

from client.commands.common import JSON_OPTION, BadInput, output_path, plural, read_job_file
from client.commands.filecoin import (FILECOIN_KEY_OPTION, filecoin_verifying_key,
                                      prove_here)
from client.commands.filecoin import reports_bad_input as filecoin_reports
from client.commands.forms import CommandForm
from client.commands.output import emit
from config.settings import get_settings
from snark.files import write_atomic
from snark.filecoin.errors import FilecoinError
from snark.porep.c1 import parse_size, size_name
from snark.proof import PROOF_BYTES, ProofFormatError

reports_bad_input = filecoin_reports


def read_update(path: str, key: str | None = None):
    """An update file as a ``snap`` job (errors name the file)."""
    from snark.filecoin.snap.job import SnapJob
    from snark.filecoin.snap.update import parse_update

    try:
        update = parse_update(read_job_file(path),
                              max_bytes=get_settings().max_input_bytes)
    except FilecoinError as exc:
        raise FilecoinError(f"{path}: {exc}") from None
    return SnapJob(key, update, update.to_json())


@click.group("snap")
def snap() -> None:
    """SnapDeals (EmptySectorUpdate): test updates and their checks."""


@snap.command("update")
@click.option("--sector-size", default="2KiB", show_default=True,
              help="2KiB, 8MiB or 512MiB (a whole sector; minutes at 512MiB, on many "
                   "cores), 32GiB or 64GiB (sparse: runs of equal nodes, seconds)")
@click.option("-o", "--output", required=True, type=click.Path(), help="the update's JSON")
@JSON_OPTION
@reports_bad_input
def update_command(sector_size: str, output: str, as_json: bool) -> None:
    """Encode random data into a TEST sector (a random sector key: comm_c and the old
    replica) as rust-fil-proofs does, and write the update as Curio sends it: a fixture for
    tests and benchmarks, not a production update. Sectors above 512MiB are sparse: the old
    replica and the data are runs of 2^18 equal nodes, so their trees cost their runs."""
    from snark.filecoin.snap.generate import generate_any_update, is_sparse, run_starts
    from snark.filecoin.snap.shape import UPDATE_PROOF_SIZES, SnapShape

    size = parse_size(sector_size)
    if size not in UPDATE_PROOF_SIZES.values():
        raise BadInput(f"--sector-size: {size_name(size)} is not a SnapDeals sector size "
                       "(2KiB, 8MiB, 512MiB, 32GiB or 64GiB)")
    shape = SnapShape.of_size(size)
    target = output_path(output)
    started = time.perf_counter()
    update = generate_any_update(shape, np.random.default_rng())
    write_atomic(target, update.to_json().encode())
    seconds = time.perf_counter() - started
    sparse = is_sparse(shape)
    kind = f"sparse, {len(run_starts(shape)):,} runs of equal nodes" if sparse else "whole"
    emit(as_json, {"update": output, "sector_size": size,
                   "registered_proof": update.registered_proof,
                   "partitions": shape.partitions, "sparse": sparse,
                   "comm_r_new": update.comm_r_new.hex(), "seconds": round(seconds, 3)},
         [f"encoded a {size_name(size)} TEST update ({kind}; {shape.partitions} "
          f"partitions) in {seconds:.2f}s → {output}",
          f"comm_r_new {update.comm_r_new.hex()}"])


@snap.command("check")
@click.argument("update_path", metavar="UPDATE", type=click.Path(dir_okay=False))
@JSON_OPTION
@reports_bad_input
def check_command(update_path: str, as_json: bool) -> None:
    """Decode an update and make every check rust-fil-proofs makes before proving it."""
    from snark.filecoin.snap.checks import check_update

    job = read_update(update_path)
    try:
        check_update(job.update)
    except FilecoinError as exc:
        raise FilecoinError(f"{update_path}: {exc}") from None
    shape = job.update.shape
    emit(as_json, {"valid": True, "sector_size": shape.sector_size,
                         "partitions": shape.partitions, "challenges": shape.challenges},
               [f"{update_path}: a valid {shape.size_name} update "
                f"({plural(shape.partitions, 'partition')} × {shape.challenges} challenges)"])


UPDATE_OPTION = click.option("--update", "update_path", required=True,
                             type=click.Path(dir_okay=False),
                             help="a SnapDeals update's JSON (proofq snap update)")


@click.command("prove")
@UPDATE_OPTION
@click.option("-o", "--output", required=True, type=click.Path(),
              help="where to write the proofs (192 bytes per partition)")
@click.option("--backend", "backend_name", type=click.Choice(["auto", "cpu", "gpu"]),
              default=None, help="prover backend [default: the backend setting, auto]")
@FILECOIN_KEY_OPTION
@JSON_OPTION
@reports_bad_input
def prove_update_file(update_path: str, output: str, backend_name: str | None,
                      key_kind: str, as_json: bool) -> None:
    """Prove every partition of a SnapDeals update, each verified, and write the
    concatenated proofs."""
    from snark.filecoin.snap.prove import prove_update
    from snark.filecoin.snap.worker import SnapWorker

    target = output_path(output)
    job = read_update(update_path, key_kind)
    shape = job.update.shape
    proof, backend, seconds = prove_here(
        SnapWorker, job, backend_name, as_json, shape.name, shape.partitions,
        lambda worker, key, backend: prove_update(job.update, key, backend))
    write_atomic(target, proof)
    emit(as_json, {"proof": str(target), "bytes": len(proof),
                   "partitions": shape.partitions, "backend": backend,
                   "key": key_kind, "seconds": round(seconds, 3)},
         [f"proved {plural(shape.partitions, 'partition')} of the {shape.size_name} "
          f"update on {backend} under the {key_kind} key in {seconds:.2f}s → {target} "
          f"({len(proof)} bytes)"])


@click.command("verify")
@UPDATE_OPTION
@click.option("--proof", "proof_path", required=True, type=click.Path(),
              help="proof file (from proofq prove --update)")
@FILECOIN_KEY_OPTION
@JSON_OPTION
@reports_bad_input
def verify_update_file(update_path: str, proof_path: str, key_kind: str,
                       as_json: bool) -> None:
    """Check a SnapDeals update's proofs (exit 0 valid, 1 invalid, 2 bad input)."""
    from snark.filecoin.snap.prove import verify_update
    from client.commands.common import read_input

    job = read_update(update_path, key_kind)
    shape = job.update.shape
    vk = filecoin_verifying_key(shape, key_kind)
    proof = read_input(proof_path, shape.partitions * PROOF_BYTES,
                       f"{shape.partitions} proofs of {PROOF_BYTES} bytes")
    try:
        valid = verify_update(job.update, vk, proof)
    except ProofFormatError as exc:
        raise ProofFormatError(f"{proof_path}: {exc}") from None
    emit(as_json, {"valid": valid, "proof": proof_path, "partitions": shape.partitions,
                         "key": key_kind},
               [f"{proof_path}: {'valid' if valid else 'INVALID'} ({shape.partitions} "
                f"partitions of the {shape.size_name} update, {key_kind} key)"])
    if not valid:
        sys.exit(1)


COMMANDS: list[click.Command | CommandForm] = [
    snap, CommandForm(prove_update_file, ("--update",), "a SnapDeals update (--update)"),
    CommandForm(verify_update_file, ("--update",), "an update's proofs (--update)")]
