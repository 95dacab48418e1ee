"""Local commands of ``proofq``: seal a sector, set up params, prove and verify a C1 here.

Bad input never ends in a traceback: it is one line naming the file and field, exit code 2
(click's own usage errors use 2 as well). ``verify`` exits 1 for a well-formed proof that
does not verify. Output paths are checked before the work, and outputs are written to a
temporary file and renamed into place (``snark.files``), so a failed command leaves nothing
behind. Input files are read up to their largest valid size. Progress bars go to stderr, in
a terminal only, and ``--json`` results to stdout.
"""

from __future__ import annotations

import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import click

from client.commands.common import (JSON_OPTION, BadInput, output_path, plural, read_input,
                                    read_job_file, reports)
from client.commands.filecoin import FILECOIN_KEY_OPTION, MINER_ID_OPTION
from client.commands.forms import CommandForm
from client.commands.output import emit, progress_bar, setup_bars
from config.settings import SettingsError, get_settings
from snark.backend import BackendUnavailable
from snark.filecoin.errors import FilecoinError
from snark.keys import KeyFileError, ParamsDirError, ProvingKey, check_params_dir
from snark.files import write_atomic
from snark.porep.c1 import C1, C1Error, parse_c1, parse_size
from snark.porep.plugin import demo_c1
from snark.porep.prove import load_or_setup_key, load_verifying_key, prove_c1, verify_c1
from snark.porep.seal import seal as seal_sector
from snark.porep.vanilla import verify_vanilla
from snark.proof import PROOF_BYTES, ProofFormatError
from workers.backend_choice import fixed_base_for, make_backend

#: Errors that mean "the input is wrong", reported as one line with exit code 2.
BAD_INPUT_ERRORS = (C1Error, FilecoinError, ProofFormatError, KeyFileError, SettingsError,
                    BackendUnavailable, ParamsDirError, OSError)

C1_HELP = ("C1 JSON file: Filecoin's (Curio's c1.json, proofq seal --registered-proof) or "
           "the porep stand-in's (proofq seal); - reads stdin")
C1_OPTION = click.option("--c1", "c1_path", required=True, type=click.Path(), help=C1_HELP)

reports_bad_input = reports(*BAD_INPUT_ERRORS)


# -- files --------------------------------------------------------------------------------

def read_c1(path: str, raw: bytes | None = None) -> C1:
    """Parse and check a C1 file (shape and vanilla proofs), read unless ``raw`` is its
    bytes already; errors name the file."""
    raw = read_job_file(path) if raw is None else raw
    try:
        c1 = parse_c1(raw)
        verify_vanilla(c1)
    except C1Error as exc:
        raise C1Error(f"{path}: {exc}") from None
    return c1


# -- output -------------------------------------------------------------------------------

def gpu_status() -> tuple[bool, str]:
    """Whether a GPU backend could be made here, and why (without making one)."""
    try:
        from gpu import available
    except ImportError as exc:
        return False, f"gpu backend is not installed ({exc})"
    return available()


# -- commands -----------------------------------------------------------------------------

@click.command()
@click.option("--sector-size", default="2KiB", show_default=True,
              help="sector size: a power of two from 2KiB to 1TiB (2KiB, 8MiB, 2048, ...)")
@click.option("--partitions", type=click.IntRange(min=1), default=1, show_default=True,
              help="partitions: one Groth16 proof each")
@click.option("--challenges", type=click.IntRange(min=1), default=2, show_default=True,
              help="challenges per partition (K)")
@click.option("-o", "--output", required=True, type=click.Path(),
              help="where to write the C1 JSON")
@click.option("--data", "data_path", type=click.Path(),
              help="sector data file of exactly sector-size bytes (default: random data)")
@JSON_OPTION
@reports_bad_input
def seal(sector_size: str, partitions: int, challenges: int, output: str,
         data_path: str | None, as_json: bool) -> None:
    """Seal a sector and write its C1 (commitments and vanilla proofs)."""
    size = parse_size(sector_size)
    target = output_path(output)
    data = read_input(data_path, size, "the sector size") if data_path else None
    if data is not None and len(data) != size:
        raise BadInput(f"{data_path}: expected {size} bytes (the sector size), got {len(data)}")
    started = time.perf_counter()
    with progress_bar(not as_json) as progress:
        task = progress.add_task(f"sealing {sector_size} sector", total=None)
        c1 = seal_sector(size, partitions, challenges, data, on_phase=lambda phase: progress.update(
            task, description=f"sealing {sector_size} sector: {phase}"))
    write_atomic(target, c1.to_json().encode())
    seconds = time.perf_counter() - started
    emit(as_json, {"c1": output, "circuit": c1.circuit_name, "sector_size": c1.sector_size,
                   "partitions": c1.partitions, "challenges": c1.challenges,
                   "comm_d": f"0x{c1.comm_d:064x}", "comm_r": f"0x{c1.comm_r:064x}",
                   "seconds": round(seconds, 3)},
         [f"sealed {c1.circuit_name} ({plural(c1.partitions, 'partition')}) in "
          f"{seconds:.2f}s → {output}",
          f"comm_r 0x{c1.comm_r:064x}"])


@click.command()
@C1_OPTION
@JSON_OPTION
@reports_bad_input
def setup(c1_path: str, as_json: bool) -> None:
    """Create (or find cached) Groth16 params for the C1's circuit (development setup)."""
    c1 = read_c1(c1_path)
    settings = get_settings()
    params_dir = settings.params_dir
    check_params_dir(params_dir)  # before minutes of setup, not after
    started = time.perf_counter()
    with progress_bar(not as_json) as progress:
        progress.add_task(f"setup {c1.circuit_name}: starting the prover backend", total=None)
        fixed_base = fixed_base_for(make_backend(settings.backend))
        key = load_or_setup_key(c1, params_dir, fixed_base=fixed_base,
                                progress=setup_bars(progress))
    seconds = time.perf_counter() - started
    emit(as_json, _key_summary(key, params_dir) | {"seconds": round(seconds, 3)},
         [f"params for {c1.circuit_name}: {key.r1cs.num_constraints} constraints, "
          f"domain {key.domain_size} ({seconds:.2f}s)",
          f"{Path(params_dir) / key.circuit_id}"])


def _key_summary(key: ProvingKey, params_dir: Path) -> dict[str, Any]:
    return {"circuit_id": key.circuit_id, "constraints": key.r1cs.num_constraints,
            "domain_size": key.domain_size, "params": str(Path(params_dir) / key.circuit_id)}


@click.command()
@C1_OPTION
@click.option("-o", "--output", required=True, type=click.Path(),
              help="where to write the proofs (192 bytes per partition)")
@click.option("--backend", "backend_name", type=click.Choice(["auto", "cpu", "gpu"]),
              default=None, help="prover backend [default: the backend setting, auto]")
@click.option("--no-check", is_flag=True,
              help="prove a Filecoin C1 without the checks the service makes first "
                   "(seal_commit_phase2's refusals, the vanilla proofs): for tests only")
@MINER_ID_OPTION
@JSON_OPTION
@reports_bad_input
@FILECOIN_KEY_OPTION
def prove(c1_path: str, output: str, backend_name: str | None, no_check: bool,
          miner_id: int | None, as_json: bool, key_kind: str) -> None:
    """Prove every partition of a C1 and write the concatenated proofs (a Filecoin C1 is
    checked first, as the service checks it)."""
    target = output_path(output)
    raw = read_job_file(c1_path)
    if not demo_c1(raw):
        from client.commands.filecoin import prove_c1_file

        prove_c1_file(c1_path, raw, target, backend_name, as_json, key_kind,
                      check=not no_check, miner_id=miner_id)
        return
    if no_check or miner_id is not None:
        raise BadInput("--no-check, --miner-id: for Filecoin C1s only")
    c1 = read_c1(c1_path, raw)
    settings = get_settings()
    backend = make_backend(backend_name or settings.backend)
    started = time.perf_counter()
    with progress_bar(not as_json) as progress:
        task = progress.add_task("params", total=None)
        key = load_or_setup_key(c1, settings.params_dir, fixed_base=fixed_base_for(backend),
                                progress=setup_bars(progress))
        progress.update(task, description=f"proving on {backend.name}", total=c1.partitions,
                        completed=0)
        proof = prove_c1(c1, key, backend,
                         progress=lambda done: progress.update(task, completed=done))
    write_atomic(target, proof)
    seconds = time.perf_counter() - started
    emit(as_json, {"proof": output, "bytes": len(proof), "partitions": c1.partitions,
                   "backend": backend.name, "circuit_id": key.circuit_id,
                   "seconds": round(seconds, 3)},
         [f"proved {plural(c1.partitions, 'partition')} of {c1.circuit_name} on {backend.name} "
          f"in {seconds:.2f}s → {output} ({len(proof)} bytes)"])


@click.command()
@C1_OPTION
@click.option("--proof", "proof_path", required=True, type=click.Path(),
              help="proof file (from proofq prove)")
@MINER_ID_OPTION
@JSON_OPTION
@reports_bad_input
@FILECOIN_KEY_OPTION
def verify(c1_path: str, proof_path: str, miner_id: int | None, as_json: bool,
           key_kind: str) -> None:
    """Check a proof file against a C1 (exit 0 valid, 1 invalid, 2 bad input). A Filecoin
    proof is verified as verify_seal does: with the miner known (--miner-id, or the C1's
    MinerId), replica_id is derived from it, the sector and the ticket; the output says
    which statement was verified."""
    raw = read_job_file(c1_path)
    if not demo_c1(raw):
        from client.commands.filecoin import verify_c1_file

        verify_c1_file(c1_path, raw, proof_path, as_json, key_kind, miner_id)
        return
    if miner_id is not None:
        raise BadInput("--miner-id: for Filecoin C1s only")
    c1 = read_c1(c1_path, raw)
    params_dir = get_settings().params_dir
    vk = load_verifying_key(c1, params_dir)
    proof = read_input(proof_path, c1.partitions * PROOF_BYTES,
                       f"{c1.partitions} proofs of {PROOF_BYTES} bytes")
    with progress_bar(not as_json) as progress:
        progress.add_task(f"verifying {plural(c1.partitions, 'proof')}", total=None)
        try:
            valid = verify_c1(c1, vk, proof, params_dir)
        except ProofFormatError as exc:
            raise ProofFormatError(f"{proof_path}: {exc}") from None
    emit(as_json, {"valid": valid, "proof": proof_path, "partitions": c1.partitions},
         [f"{proof_path}: {'valid' if valid else 'INVALID'} "
          f"({plural(c1.partitions, 'partition')} of {c1.circuit_name})"])
    if not valid:
        sys.exit(1)


@click.command()
@JSON_OPTION
@reports_bad_input
def info(as_json: bool) -> None:
    """Versions, backend availability and the params directory."""
    settings = get_settings()
    versions = {name: _version(name) for name in
                ("proofq", "py-arkworks-bls12381", "numpy", "pydantic", "click", "cupy-cuda12x")}
    versions["python"] = platform.python_version()
    gpu_ok, gpu_reason = gpu_status()
    backends = {"cpu": {"available": True, "reason": "always"},
                "gpu": {"available": gpu_ok, "reason": gpu_reason}}
    params_dir = Path(settings.params_dir)
    cached = sorted(p.name for p in params_dir.iterdir() if (p / "manifest.json").exists()) \
        if params_dir.is_dir() else []
    result = {"versions": versions, "backends": backends, "backend_setting": settings.backend,
              "params_dir": str(params_dir), "cached_params": cached}
    lines = [f"{name} {version or '(not installed)'}" for name, version in versions.items()]
    lines += [f"backend {name}: {'available' if b['available'] else 'unavailable'} ({b['reason']})"
              for name, b in backends.items()]
    lines += [f"backend setting: {settings.backend}",
              f"params dir: {params_dir} ({len(cached)} cached circuits)"]
    emit(as_json, result, lines)


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


COMMANDS: list[click.Command | CommandForm] = [
    CommandForm(seal, (), "a stand-in sector (porep-demo's C1)"), setup,
    CommandForm(prove, ("--c1",), "a C1 (--c1)"),
    CommandForm(verify, ("--c1",), "a C1's proofs (--c1)"), info]
