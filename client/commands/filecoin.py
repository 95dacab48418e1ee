"""Commands for Filecoin's PoRep (``snark.filecoin``): parent caches, C1 checks, test sectors.

    proofq filecoin parent-cache --sector-size 2KiB --api-version 1.1 [--write DIR]
    proofq filecoin check c1.json [--miner-id N]
    proofq filecoin circuit-info --registered-proof P   (or a test shape: --nodes --tree …)
    proofq filecoin setup --registered-proof P -o DIR   (a development key, bellperson's)
    proofq seal --registered-proof StackedDrg2KiBV1_1 -o c1.json [--sparse]
        (synthetic PoRep: StackedDrg2KiBV1_1_Feat_SyntheticPoRep, whole sectors only)

``seal --registered-proof`` shares its name with the stand-in porep type's ``seal`` and is
told apart by that option. Bad input (a malformed C1, one failing a check, a wrong size) is
one line naming the field, exit code 2; nothing is written unless the command succeeds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np

from client.commands.common import (JSON_OPTION, BadInput, output_path, plural, read_input,
                                    reports)
from client.commands.forms import CommandForm
from client.commands.output import emit, progress_bar, setup_bars
from config.settings import SettingsError, get_settings
from snark.backend import BackendUnavailable
from snark.files import write_atomic
from snark.filecoin import (ApiVersion, FilecoinError, TreeShape, check_c1, curio_json,
                            for_sector,
                            parent_cache, parent_cache_name, parse_c1, prover_id_for_miner,
                            registered_proof, seal, seal_sparse)
from snark.keys import KeyFileError, ParamsDirError, ProvingKey
from snark.porep.c1 import C1Error, parse_size, size_name
from snark.proof import PROOF_BYTES, ProofFormatError

reports_bad_input = reports(FilecoinError, C1Error, ProofFormatError, KeyFileError, SettingsError,
                            BackendUnavailable, ParamsDirError, OSError)

#: Sizes whose whole-sector sealing finishes here in minutes (Python SHA-256 and Poseidon).
SEALABLE = (2 << 10, 8 << 20)


FILECOIN_KEY_OPTION = click.option(
    "--key", "key_kind", type=click.Choice(["official", "development"]), default="official",
    show_default=True, help="a Filecoin C1's key: the ceremony's (PROOFQ_FILECOIN_PARAMS_DIR) "
                            "or proofq's development key (set up once if missing)")
MINER_ID_OPTION = click.option(
    "--miner-id", type=click.IntRange(min=0),
    help="a Filecoin C1's sealing miner (actor id): replica_id is then derived from it and the "
         "C1's SectorNum (as verify_seal does), not taken from the C1")


@click.group("filecoin")
def filecoin() -> None:
    """Filecoin PoRep (StackedDrg): parent caches, C1 checks, circuit fingerprints,
    development keys."""


@filecoin.command("parent-cache")
@click.option("--sector-size", required=True, help="2KiB, 8MiB, 512MiB, 32GiB or 64GiB")
@click.option("--api-version", default="1.1", show_default=True, help="1.0 or 1.1")
@click.option("--write", "directory", type=click.Path(file_okay=False),
              help="also write the cache file <name>.cache into this directory")
@click.option("--name-only", is_flag=True,
              help="print the name only (instant; the digest needs every node's parents)")
@JSON_OPTION
@reports_bad_input
def parent_cache_command(sector_size: str, api_version: str, directory: str | None,
                         name_only: bool, as_json: bool) -> None:
    """The SDR parent cache's name and SHA-256 digest, as rust-fil-proofs' parent_cache.json
    lists them (computing the digest takes about a minute at 8 MiB, hours at 32 GiB)."""
    size = parse_size(sector_size)
    proof = for_sector(size, ApiVersion.parse(api_version))
    if directory is not None and not Path(directory).is_dir():
        raise BadInput(f"{directory}: is not a directory")
    if name_only:
        name, digest = parent_cache_name(proof), None
    else:
        started = time.perf_counter()
        with progress_bar(not as_json) as progress:
            task = progress.add_task(f"parents of {proof.nodes} nodes", total=proof.nodes)
            name, digest = parent_cache(size, proof.api_version,
                                        directory=None if directory is None else Path(directory),
                                        on_progress=lambda done: progress.update(
                                            task, completed=done))
        seconds = time.perf_counter() - started
    result = {"name": name, "digest": digest, "sector_size": size,
              "api_version": proof.api_version.value, "registered_proof": proof.name}
    lines = [name] + ([digest] if digest else [])
    if directory is not None and digest:
        result["file"] = str(Path(directory) / f"{name}.cache")
        lines.append(f"written to {result['file']} ({seconds:.1f}s)")
    emit(as_json, result, lines)


def _tree(text: str) -> TreeShape:
    try:
        base, sub, top = (int(x) for x in text.split("-"))
    except ValueError:
        raise BadInput(f"--tree: expected base-sub-top arities like 8-0-0, got {text!r}") \
            from None
    return TreeShape(base, sub, top)


@filecoin.command("circuit-info")
@click.option("--registered-proof", "proof_name", help="e.g. StackedDrg32GiBV1_1")
@click.option("--nodes", type=click.IntRange(min=2), help="a test shape: sector nodes")
@click.option("--layers", type=click.IntRange(min=1), default=2, show_default=True,
              help="a test shape: SDR layers")
@click.option("--challenges", type=click.IntRange(min=1), default=1, show_default=True,
              help="a test shape: challenges per partition")
@click.option("--tree", "tree_text", default="8-0-0", show_default=True,
              help="tree C / R_last arities base-sub-top")
@click.option("--update", "update_size",
              help="a SnapDeals update partition's circuit instead, by sector size (2KiB … "
                   "64GiB, or a 1KiB-32KiB test shape)")
@click.option("--post", "post_kind", type=click.Choice(["window", "winning"]),
              help="a PoSt partition's circuit (FallbackPoSt), with --sector-size")
@click.option("--sector-size", help="with --post: 2KiB, 8MiB, 512MiB, 32GiB or 64GiB")
@JSON_OPTION
@reports_bad_input
def circuit_info(proof_name, nodes, layers, challenges, tree_text, update_size, post_kind,
                 sector_size, as_json) -> None:
    """Constraints, inputs, aux, non-zeros and densities of one partition's R1CS,
    counted from the circuit's blocks (a 32 GiB partition in about a minute, 1 GB)."""
    from snark.filecoin.circuit import StackedShape, circuit_fingerprint

    if (post_kind is None) != (sector_size is None):
        raise BadInput("--post and --sector-size go together")
    if sum(x is not None for x in (proof_name, nodes, update_size, post_kind)) != 1:
        raise BadInput("give --registered-proof, --update SIZE, --post with --sector-size, or "
                       "--nodes (with --layers, --challenges, --tree) for a test shape")
    if update_size is not None:
        from snark.filecoin.snap.circuit import circuit_fingerprint as update_fingerprint
        from snark.filecoin.snap.shape import SnapShape

        snap = SnapShape.of_size(parse_size(update_size))
        circuit, fp = snap.name, update_fingerprint(snap)
    elif post_kind is not None:
        from snark.filecoin.post.circuit import PostShape
        from snark.filecoin.post.circuit import circuit_fingerprint as post_fingerprint
        from snark.filecoin.post.registered_proofs import for_size

        post = PostShape.of(for_size(post_kind, parse_size(sector_size)))
        circuit, fp = post.name, post_fingerprint(post)
    else:
        stacked = (StackedShape.of(registered_proof(proof_name)) if proof_name
                   else StackedShape(nodes, layers, challenges, _tree(tree_text)))
        circuit, fp = stacked.name, circuit_fingerprint(stacked)
    result = {"circuit": circuit, **fp.as_dict()}
    emit(as_json, result, [
        f"circuit        {circuit}",
        f"constraints    {fp.constraints - fp.input_constraints:,} "
        f"(+ {fp.input_constraints:,} input constraints = {fp.constraints:,})",
        f"public inputs  {fp.inputs:,} (with ONE)",
        f"aux variables  {fp.aux:,}",
        f"non-zeros      A {fp.nnz_a:,}  B {fp.nnz_b:,}  C {fp.nnz_c:,}",
        f"density        a_aux {fp.a_aux_density:,}  b_input {fp.b_input_density:,}  "
        f"b_aux {fp.b_aux_density:,}",
        f"domain         2^{fp.domain_log2}",
    ])


@filecoin.command("setup")
@click.option("--registered-proof", "proof_name", required=True, help="e.g. StackedDrg2KiBV1_1")
@click.option("-o", "--output", "out_dir", type=click.Path(file_okay=False),
              help="directory for the .params, .vk and the label  [default: "
                   "$PROOFQ_PARAMS_DIR/filecoin, where prove, verify and the workers look]")
@JSON_OPTION
@reports_bad_input
def setup(proof_name: str, out_dir: str | None, as_json: bool) -> None:
    """A DEVELOPMENT key for one partition (not Filecoin's ceremony: its proofs verify
    with this .vk only), in bellperson's .params/.vk formats."""
    from snark.filecoin.params import DEV_WARNING, development_dir, make_development_key
    from workers.backend_choice import fixed_base_for, make_backend

    proof = registered_proof(proof_name)
    target = Path(out_dir) if out_dir else development_dir(get_settings().params_dir)
    with progress_bar(not as_json) as progress:
        progress.add_task(f"setup {proof.name}: starting the prover backend", total=None)
        fixed_base = fixed_base_for(make_backend(get_settings().backend))
        params, vk = make_development_key(proof, target, fixed_base=fixed_base,
                                          progress=setup_bars(progress))
    emit(as_json, {"params": str(params), "vk": str(vk), "development": True,
                   "warning": DEV_WARNING},
         [f"params  {params}", f"vk      {vk}", f"[bold]{DEV_WARNING}[/bold]"])


@filecoin.command("check")
@click.argument("c1_path", metavar="C1", type=click.Path(dir_okay=False))
@MINER_ID_OPTION
@JSON_OPTION
@reports_bad_input
def check(c1_path: str, miner_id: int | None, as_json: bool) -> None:
    """Parse a C1 (Curio's c1.json or a raw SealCommitPhase1Output) and make every check a
    C2 prover makes before proving."""
    raw = read_input(c1_path, get_settings().max_input_bytes,
                     "max_input_bytes, PROOFQ_MAX_INPUT_BYTES")
    started = time.perf_counter()
    try:
        c1 = parse_c1(raw)
        parsed = time.perf_counter()
        ids = sector_ids(c1, miner_id)
        check_c1(c1, **ids)
    except FilecoinError as exc:
        raise FilecoinError(f"{c1_path}: {exc}") from None
    checked = time.perf_counter()
    proof = c1.proof
    emit(as_json, {
        "c1": c1_path, "registered_proof": proof.name, "encoding": c1.encoding,
        "partitions": proof.partitions, "challenges": proof.challenges,
        "replica_id_checked": bool(ids) or c1.prover_id is not None,
        "comm_r": c1.comm_r.hex(), "parse_seconds": round(parsed - started, 3),
        "check_seconds": round(checked - parsed, 3)},
        [f"{c1_path}: {proof.name} C1 ({c1.encoding} encoding, "
         f"{plural(proof.partitions, 'partition')} of {proof.challenges_per_partition} "
         f"challenges) passes every check "
         f"(parse {parsed - started:.2f}s, checks {checked - parsed:.2f}s)"])


@click.command("seal")
@click.option("--registered-proof", "proof_name", required=True,
              help="e.g. StackedDrg2KiBV1_1, or StackedDrg2KiBV1_1_Feat_SyntheticPoRep (2 KiB "
                   "and 8 MiB seal whole sectors)")
@click.option("-o", "--output", required=True, type=click.Path(),
              help="where to write the C1 (Curio's c1.json encoding)")
@click.option("--sparse", is_flag=True,
              help="build only what the challenges touch (any size: 512MiB, 32GiB, 64GiB)")
@click.option("--data", "data_path", type=click.Path(dir_okay=False),
              help="sector data, exactly the sector size, fr32 (default: random)")
@click.option("--sector-num", type=click.IntRange(min=0), default=1, show_default=True,
              help="the wrapper's SectorNum (the sector id replica_id is derived from)")
@click.option("--miner-id", type=click.IntRange(min=0), default=1000, show_default=True,
              help="the prover id the replica_id is derived from (not with --sparse)")
@JSON_OPTION
@reports_bad_input
def seal_filecoin(proof_name: str, output: str, sparse: bool, data_path: str | None,
                  sector_num: int, miner_id: int, as_json: bool) -> None:
    """Seal a Filecoin TEST sector and write its C1 as Curio does: a fixture for tests and
    benchmarks (random data, a made-up miner), not a production sector."""
    proof = registered_proof(proof_name)
    target = output_path(output)
    if not sparse and proof.sector_size not in SEALABLE:
        raise BadInput(f"--registered-proof: sealing a whole {size_name(proof.sector_size)} "
                       f"sector takes hours here; use --sparse")
    if sparse and data_path:
        raise BadInput("--data: a sparse sector has no data file")
    data = read_input(data_path, proof.sector_size, "the sector size") if data_path else None
    rng = np.random.default_rng()
    started = time.perf_counter()
    with progress_bar(not as_json) as progress:
        task = progress.add_task(f"sealing {proof.name}", total=None)

        def phase(name: str) -> None:
            progress.update(task, description=f"sealing {proof.name}: {name}")

        if sparse:
            c1 = seal_sparse(proof, rng, on_phase=phase)
        else:
            c1 = seal(proof, rng, data=data, prover_id=prover_id_for_miner(miner_id),
                      sector_id=sector_num, on_phase=phase)
    write_atomic(target, curio_json(c1, sector_num))
    seconds = time.perf_counter() - started
    kind = "sparse test C1" if sparse else "test sector"
    emit(as_json, {"c1": output, "registered_proof": proof.name, "sparse": sparse,
                         "sector_num": sector_num, "miner_id": None if sparse else miner_id,
                         "comm_d": c1.comm_d.hex(), "comm_r": c1.comm_r.hex(),
                         "seconds": round(seconds, 3)},
               [f"sealed a {proof.name} {kind} in {seconds:.2f}s → {output} (Curio's "
                f"encoding; a fixture for tests, not a production sector)",
                f"comm_r {c1.comm_r.hex()}"
                + ("" if sparse else f" (check with --miner-id {miner_id})")])


# -- proving a C1 here (proofq prove --c1 / verify --c1 of a Filecoin C1) ---------------

def sector_ids(c1, miner_id: int | None) -> dict:
    """``prover_id`` and ``sector_id`` of a Filecoin C1 from ``--miner-id`` and its sector
    number; ``{}`` without ``--miner-id`` (the ids the C1 names, if any, then apply)."""
    from snark.filecoin.challenges import prover_id_for_miner

    if miner_id is None:
        return {}
    if c1.sector_num is None and c1.sector_id is None:
        raise FilecoinError("--miner-id: the C1 names no sector (no SectorNum)")
    return {"prover_id": prover_id_for_miner(miner_id),
            "sector_id": c1.sector_num if c1.sector_id is None else c1.sector_id}


def c1_job(path: str, raw: bytes, key_kind: str):
    """A Filecoin C1 file as a job under ``key_kind`` (errors name the file)."""
    from snark.filecoin.job import filecoin_envelope
    from snark.filecoin.proof_type import FilecoinType
    from snark.job_input import InputLimits

    try:
        return FilecoinType().parse(filecoin_envelope(raw, key_kind),
                                    InputLimits.of(get_settings()))
    except FilecoinError as exc:
        raise FilecoinError(f"{path}: {exc}") from None


def prove_c1_file(c1_path: str, raw: bytes, target: Path, backend_name: str | None,
                  as_json: bool, key_kind: str, *, check: bool, miner_id: int | None) -> None:
    """``proofq prove --c1`` of a Filecoin C1: checked first (unless ``check`` is off),
    every partition proved under ``key_kind``, the proofs concatenated."""
    from snark.filecoin.checks import check_c1
    from snark.filecoin.prove import prove_c1 as prove_filecoin
    from snark.filecoin.worker import FilecoinWorker

    job = c1_job(c1_path, raw, key_kind)
    if check:
        try:
            check_c1(job.c1, **sector_ids(job.c1, miner_id))
        except FilecoinError as exc:
            raise FilecoinError(f"{c1_path}: {exc}") from None
    checks = ("checked first (every check the service makes)" if check else
              "NOT CHECKED (--no-check: the C1's checks were skipped)")
    proof, backend, seconds = prove_here(
        FilecoinWorker, job, backend_name, as_json, job.proof.name, job.proof.partitions,
        lambda worker, key, backend: prove_filecoin(job.c1, key, backend))
    write_atomic(target, proof)
    emit(as_json, {"proof": str(target), "bytes": len(proof),
                   "partitions": job.proof.partitions, "backend": backend,
                   "key": job.key, "checked": check, "seconds": round(seconds, 3)},
         [f"proved {plural(job.proof.partitions, 'partition')} of {job.proof.name} on "
          f"{backend} under the {job.key} key in {seconds:.2f}s → {target} "
          f"({len(proof)} bytes)",
          f"C1 {checks}"])


def prove_here(worker_class, job, backend_name: str | None, as_json: bool, name: str,
               partitions: int, prove: Callable[[Any, ProvingKey, Any], bytes]
               ) -> tuple[bytes, str, float]:
    """A Filecoin-family job proved in this process, as its worker half would: the key made
    if missing (a bar per step) and loaded, then ``prove(worker, key, backend)``. Returns
    the proof, the backend's name and the seconds taken."""
    from snark.proof_types import Storage
    from workers.backend_choice import fixed_base_for, make_backend

    settings = get_settings()
    backend = make_backend(backend_name or settings.backend)
    worker = worker_class(Storage.of(settings), filecoin_settings())
    started = time.perf_counter()
    with progress_bar(not as_json) as progress:
        task = progress.add_task(f"key of {name} ({worker.key_kind(job)})", total=None)
        worker.make_key(job, fixed_base=fixed_base_for(backend), progress=setup_bars(progress))
        key = worker.load_key(job)
        progress.update(task, description=f"proving {plural(partitions, 'partition')} on "
                                          f"{backend.name}")
        proof = prove(worker, key, backend)
    return proof, backend.name, time.perf_counter() - started


def verify_c1_file(c1_path: str, raw: bytes, proof_path: str, as_json: bool, key_kind: str,
                   miner_id: int | None) -> None:
    """``proofq verify --c1`` of a Filecoin C1's proofs (exit 0 valid, 1 invalid)."""
    from snark.filecoin.prove import statement
    from snark.filecoin.prove import verify_c1 as verify_filecoin

    job = c1_job(c1_path, raw, key_kind)
    try:
        c1, derived = statement(job.c1, **sector_ids(job.c1, miner_id))
    except FilecoinError as exc:
        raise FilecoinError(f"{c1_path}: {exc}") from None
    if derived and c1.prover_id is not None:  # derived: from the prover_id it now names
        said = (f"replica_id derived from prover_id {c1.prover_id.rstrip(bytes(1)).hex()}, "
                f"sector {c1.sector_id} and the ticket, as verify_seal does")
    else:
        said = ("replica_id as the C1 states it: no miner or sector ids, so the statement is "
                "the C1's replica_id, comm_d, comm_r and seed (give --miner-id to derive "
                "replica_id as verify_seal does)")
    vk = filecoin_verifying_key(job.proof, job.key)
    partitions = job.proof.partitions
    proof = read_input(proof_path, partitions * PROOF_BYTES,
                       f"{partitions} proofs of {PROOF_BYTES} bytes")
    try:
        valid = verify_filecoin(c1, vk, proof)
    except ProofFormatError as exc:
        raise ProofFormatError(f"{proof_path}: {exc}") from None
    emit(as_json, {"valid": valid, "proof": proof_path, "partitions": partitions,
                   "key": job.key, "replica_id_derived": derived,
                   "replica_id": c1.replica_id.hex(), "sector_id": c1.sector_id,
                   "statement": said},
         [f"{proof_path}: {'valid' if valid else 'INVALID'} ({plural(partitions, 'partition')} of "
          f"{job.proof.name}, {job.key} key)", f"statement: {said}"])
    if not valid:
        sys.exit(1)


def filecoin_settings():
    """Filecoin's settings (``PROOFQ_FILECOIN_…``) for the commands that prove or verify
    its proofs here."""
    from config.settings import load_model
    from snark.filecoin.settings import FilecoinSettings

    return load_model(FilecoinSettings)


def filecoin_verifying_key(proof, key_kind: str):
    """The verifying key of a Filecoin circuit under ``key_kind``; a missing official one
    says that a development-key proof is verified with ``--key development``."""
    from snark.filecoin.params import verifying_key_for

    try:
        return verifying_key_for(proof, key_kind, get_settings().params_dir,
                                 filecoin_settings().params_dir)
    except KeyFileError as exc:
        if key_kind != "official":
            raise
        raise KeyFileError(f"{exc} (a proof made with --key development is verified with "
                           "--key development)") from None


COMMANDS: list[click.Command | CommandForm] = [
    filecoin, CommandForm(seal_filecoin, ("--registered-proof",),
                        "a Filecoin test sector (--registered-proof)")]
