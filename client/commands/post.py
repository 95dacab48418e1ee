"""Commands for Filecoin's WindowPoSt and WinningPoSt (``snark.filecoin.post``).

    proofq post check --kind window --registered-proof 13 --randomness HEX --miner-id M
                      [--partition-index K] VPROOF…
    proofq post make --kind window --registered-proof 10 --sectors 2 -o DIR [--sparse]
    proofq prove --post JOB.json -o proof.bin [--key development]
    proofq verify --post JOB.json --proof proof.bin [--key development]

VPROOF files hold one bincode ``FallbackPoStSectorProof`` each, as Curio sends them;
``--registered-proof`` is Go's number, as the gRPC request carries it (10–14: WindowPoSt
V1_1, proved as the api's V1_2). ``post make`` writes test vanilla proofs and the job
(``job.json``, the form ``window-post`` / ``winning-post`` jobs take). Bad input is one line
naming the field, exit code 2.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import click
import numpy as np

from client.commands.common import JSON_OPTION, BadInput, read_input, reports
from client.commands.filecoin import (FILECOIN_KEY_OPTION, filecoin_settings,
                                      filecoin_verifying_key, prove_here)
from client.commands.forms import CommandForm
from client.commands.output import emit
from config.settings import SettingsError, get_settings
from snark.backend import BackendUnavailable
from snark.filecoin.errors import FilecoinError
from snark.files import write_atomic
from snark.keys import KeyFileError
from snark.proof import PROOF_BYTES, ProofFormatError

reports_bad_input = reports(FilecoinError, SettingsError, BackendUnavailable, KeyFileError,
                            ProofFormatError, OSError)
KIND_OPTION = click.option("--kind", required=True, type=click.Choice(["window", "winning"]),
                           help="WindowPoSt or WinningPoSt")
PROOF_OPTION = click.option("--registered-proof", "go_id", required=True, type=int,
                            help="Go's RegisteredPoStProof number (0-4 Winning, 5-9 Window "
                                 "V1, 10-14 Window V1_1)")
PARTITION_OPTION = click.option("--partition-index", type=click.IntRange(min=0), default=0,
                                show_default=True, help="which partition of the PoSt")
#: A 32 GiB sector's element is 24,960 bytes, WinningPoSt's 164 KB; this bounds a file read.
MAX_VPROOF_BYTES = 1 << 20


def _hex32(text: str, name: str) -> bytes:
    try:
        value = bytes.fromhex(text)
    except ValueError:
        raise BadInput(f"{name}: expected 64 hex digits") from None
    if len(value) != 32:
        raise BadInput(f"{name}: expected 32 bytes (64 hex digits), got {len(value)}")
    return value


@click.group("post")
def post() -> None:
    """Filecoin WindowPoSt and WinningPoSt: vanilla proof checks, test vanilla proofs."""


@post.command("check")
@KIND_OPTION
@PROOF_OPTION
@click.option("--randomness", required=True, help="32 bytes hex, masked as Curio sends it")
@click.option("--miner-id", type=click.IntRange(min=0), required=True,
              help="the proving miner (actor id): its prover_id is derived from it")
@PARTITION_OPTION
@click.argument("vproofs", metavar="VPROOF…", nargs=-1, required=True,
                type=click.Path(dir_okay=False))
@JSON_OPTION
@reports_bad_input
def check(kind, go_id, randomness, miner_id, partition_index, vproofs, as_json) -> None:
    """Decode vanilla proofs as Curio sends them and make every check the api makes before
    proving (exit 0; 2 naming the failing field)."""
    from snark.filecoin.post.job import post_job
    from snark.filecoin.post.prove import Partition

    elements = [read_input(path, MAX_VPROOF_BYTES, "a vanilla proof's size") for path in vproofs]
    started = time.perf_counter()
    job = post_job(kind, go_id, elements, _hex32(randomness, "--randomness"), miner_id,
                   partition_index)
    sectors = job.load_sectors(None)  # inline: decoded by post_job
    Partition(sectors, job.randomness, partition_index).check()
    seconds = time.perf_counter() - started
    emit(as_json, {"registered_proof": job.proof.name, "api": job.proof.api_name,
                         "sectors": sectors.sector_ids, "partition_index": partition_index,
                         "seconds": round(seconds, 3)},
               [f"{len(vproofs)} {job.proof.name} vanilla proofs (as {job.proof.api_name}) of "
                f"partition {partition_index} pass every check ({seconds:.2f}s)"])


@post.command("make")
@KIND_OPTION
@PROOF_OPTION
@click.option("--sectors", type=click.IntRange(min=1), default=1, show_default=True,
              help="sectors in the partition (WinningPoSt: 1)")
@PARTITION_OPTION
@click.option("--randomness", help="32 bytes hex (default: random, masked)")
@click.option("--miner-id", type=click.IntRange(min=0), default=1000, show_default=True,
              help="the made-up miner (actor id) the test sectors belong to")
@click.option("--sparse", is_flag=True, help="sparse trees: any size, 32 GiB and 64 GiB "
                                             "included (2 KiB and 8 MiB are whole by default)")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
              help="directory for vanilla-<i>.bin and job.json")
@JSON_OPTION
@reports_bad_input
def make(kind, go_id, sectors, partition_index, randomness, miner_id, sparse, out_dir,
         as_json) -> None:
    """Write TEST vanilla proofs (fixtures: random sectors, never production ones) and the
    job that proves them."""
    from snark.filecoin.post import generate
    from snark.filecoin.post.job import post_job
    from snark.filecoin.post.registered_proofs import post_proof
    from snark.filecoin.post.vanilla import encode
    from snark.filecoin.seal import random_fields

    proof = post_proof(go_id, kind)
    if not sparse and proof.sector_size > 8 << 20:
        raise BadInput(f"--registered-proof: a whole {proof.size_name} tree takes hours "
                       "here; use --sparse")
    rng = np.random.default_rng()
    value = (_hex32(randomness, "--randomness") if randomness
             else random_fields(rng, 1)[0].tobytes())
    ids = list(range(1, sectors + 1))
    if sparse:
        made = generate.sparse_proofs(proof, rng, ids, value, partition_index)
    else:
        whole = [generate.whole_sector(proof, rng, i) for i in ids]
        made = generate.vanilla_proofs(proof, whole, value, partition_index)
    elements = encode(made)
    job = post_job(kind, go_id, elements, value, miner_id, partition_index)
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    files = []
    for i, element in enumerate(elements):
        files.append(directory / f"vanilla-{i}.bin")
        write_atomic(files[-1], element)
    write_atomic(directory / "job.json", job.to_json().encode())
    emit(as_json, {"vanilla_proofs": [str(f) for f in files], "job":
                         str(directory / "job.json"), "randomness": value.hex(),
                         "registered_proof": proof.name},
               [f"{len(files)} {proof.name} test vanilla proofs → {directory} (job.json; "
                f"randomness {value.hex()})"])


def _post_job(path: str, key_kind: str):
    from snark.filecoin.post.job import parse_post_job

    limit = get_settings().max_input_bytes
    raw = read_input(path, limit, "max_input_bytes, PROOFQ_MAX_INPUT_BYTES")
    try:
        return dataclasses.replace(parse_post_job(raw, None, max_bytes=limit), key=key_kind)
    except FilecoinError as exc:
        raise FilecoinError(f"{path}: {exc}") from None


POST_JOB_OPTION = click.option("--post", "job_path", required=True,
                               type=click.Path(dir_okay=False),
                               help="a PoSt job's JSON (proofq post make's job.json)")


@click.command("prove")
@POST_JOB_OPTION
@click.option("-o", "--output", required=True, type=click.Path(), help="the 192-byte proof")
@click.option("--backend", "backend_name", type=click.Choice(["auto", "cpu", "gpu"]),
              default=None, help="prover backend [default: the backend setting, auto]")
@FILECOIN_KEY_OPTION
@JSON_OPTION
@reports_bad_input
def prove_post(job_path, output, backend_name, key_kind, as_json) -> None:
    """Prove one WindowPoSt / WinningPoSt partition."""
    from client.commands.common import output_path
    from snark.filecoin.post.prove import prove_partition
    from snark.filecoin.post.worker import PostWorker

    target = output_path(output)
    job = _post_job(job_path, key_kind)
    proof, backend, seconds = prove_here(
        PostWorker, job, backend_name, as_json, job.proof.name, 1,
        lambda worker, key, backend: prove_partition(worker.partition(job), key, backend))
    write_atomic(target, proof)
    emit(as_json, {"proof": str(target), "bytes": len(proof), "backend": backend,
                   "key": key_kind, "seconds": round(seconds, 3)},
         [f"proved a {job.proof.name} partition on {backend} under the {key_kind} key in "
          f"{seconds:.2f}s → {target}"])


@click.command("verify")
@POST_JOB_OPTION
@click.option("--proof", "proof_path", required=True, type=click.Path(dir_okay=False),
              help="the 192-byte proof (from proofq prove --post)")
@FILECOIN_KEY_OPTION
@JSON_OPTION
@reports_bad_input
def verify_post(job_path, proof_path, key_kind, as_json) -> None:
    """Check a PoSt partition's proof (exit 0 valid, 1 invalid, 2 bad input)."""
    from snark.filecoin.post.prove import verify_partition
    from snark.filecoin.post.worker import PostWorker
    from snark.proof_types import Storage

    job = _post_job(job_path, key_kind)
    vk = filecoin_verifying_key(job.proof, key_kind)
    proof = read_input(proof_path, PROOF_BYTES, f"one proof of {PROOF_BYTES} bytes")
    worker = PostWorker(Storage.of(get_settings()), filecoin_settings())
    valid = verify_partition(worker.partition(job), vk, proof)
    emit(as_json, {"valid": valid, "proof": proof_path, "key": key_kind},
               [f"{proof_path}: {'valid' if valid else 'INVALID'} ({job.proof.name}, "
                f"{key_kind} key)"])
    if not valid:
        sys.exit(1)


COMMANDS: list[click.Command | CommandForm] = [
    post, CommandForm(prove_post, ("--post",), "a PoSt partition (--post)"),
    CommandForm(verify_post, ("--post",), "a PoSt partition's proof (--post)")]
