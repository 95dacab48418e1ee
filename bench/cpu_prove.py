"""Where CPU proving time goes, for porep circuits of about 2^12 … 2^16 constraints.

For each size: a fresh 2KiB sector whose K is the largest that fits the target, a fresh
development setup (timed), then one partition: the witness (``partition_witness``, as the
workers compute it), the backend's steps one by one (prepare, A·w/B·w/C·w, H, each MSM),
blinding, and verification. Prints a table and writes ``bench/results/cpu-<date>.json``.

The witness section times one partition's witness both ways, up to 2^20 constraints: the
reference ``synthesize(c1, p).witness()`` (builds every constraint) and the vectorised
``partition_witness`` (checked identical), plus the one-off layout derivation per sector size.

    python bench/cpu_prove.py                  # proving 2^12, 2^14, 2^16; witness 2^14 … 2^20
    python bench/cpu_prove.py --log2 12 --log2 14
    python bench/cpu_prove.py --skip-prove     # witness section only: cpu-witness-<date>.json

The smallest porep circuit (K = 1 at 2KiB) already has ~3.1k constraints, so 2^12 is the
first size; a 2^10 porep circuit does not exist.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import click
import numpy as np
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.provenance import commit  # noqa: E402
from snark import groth16  # noqa: E402
from snark.cpu_backend import CpuBackend
from snark.porep.circuit import challenges_for, constraints_estimate, public_inputs, synthesize
from snark.porep.prove import load_or_setup_key
from snark.porep.seal import seal
from snark.porep.witness import challenge_layout, partition_witness
from snark.proof import Proof

SECTOR_SIZE = 2048
RESULTS = Path(__file__).resolve().parent / "results"


class Stopwatch:
    """Accumulates wall seconds per named step."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def time(self, step: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[step] += time.perf_counter() - started


class TimedBackend:
    """A backend that forwards to another and times each call (MSMs by basis)."""

    def __init__(self, inner, watch: Stopwatch) -> None:
        self.inner, self.watch, self.name = inner, watch, inner.name

    def prepare(self, key):
        with self.watch.time("prepare"):
            return self.inner.prepare(key)

    def load_witness(self, key, witness):
        with self.watch.time("load witness"):
            return self.inner.load_witness(key, witness)

    def evaluate_abc(self, key, witness):
        with self.watch.time("A·w, B·w, C·w"):
            return self.inner.evaluate_abc(key, witness)

    def quotient(self, key, abc):
        with self.watch.time("H (NTTs)"):
            return self.inner.quotient(key, abc)

    def msm_g1(self, key, basis, scalars):
        with self.watch.time(f"MSM {basis}"):
            return self.inner.msm_g1(key, basis, scalars)

    def msm_g2(self, key, basis, scalars):
        with self.watch.time(f"MSM {basis}"):
            return self.inner.msm_g2(key, basis, scalars)

    def release(self, *handles):
        return self.inner.release(*handles)


PROVE_STEPS = ("witness", "load witness", "A·w, B·w, C·w", "H (NTTs)", "MSM a_g1", "MSM b_g1",
               "MSM b_g2", "MSM l_g1", "MSM h_g1", "finalize")


def bench_size(log2: int, params_dir: Path) -> dict[str, Any]:
    challenges = challenges_for(SECTOR_SIZE, 1 << log2)
    c1 = seal(SECTOR_SIZE, 1, challenges)
    watch = Stopwatch()
    with watch.time("setup"):
        key = load_or_setup_key(c1, params_dir)
    backend = TimedBackend(CpuBackend(), watch)
    backend.prepare(key)
    challenge_layout(SECTOR_SIZE)  # once per process (the witness section times it)
    with watch.time("witness"):
        witness = partition_witness(c1, 0)
    staged = groth16.stage(key, witness, backend)
    parts = groth16.compute(key, staged, backend)
    with watch.time("finalize"):
        proof = groth16.finalize(key, parts).to_bytes()
    with watch.time("verify"):
        valid = groth16.verify(key.vk, public_inputs(c1, 0), Proof.from_bytes(proof))
    if not valid:
        raise SystemExit(f"2^{log2}: the proof does not verify")
    seconds = dict(watch.seconds)
    return {"target_log2": log2, "circuit": c1.circuit_name, "challenges": challenges,
            "constraints": key.r1cs.num_constraints, "variables": key.r1cs.num_variables,
            "domain_size": key.domain_size,
            "estimate_matches": constraints_estimate(SECTOR_SIZE, challenges)
            == key.r1cs.num_constraints,
            "seconds": {k: round(v, 4) for k, v in seconds.items()},
            "prove_seconds": round(sum(seconds[s] for s in PROVE_STEPS), 4)}


def bench_witness(log2: int, reference: bool) -> dict[str, Any]:
    """One partition's witness: the reference synthesis (if asked) and the fast path."""
    challenges = challenges_for(SECTOR_SIZE, 1 << log2)
    c1 = seal(SECTOR_SIZE, 1, challenges)
    watch = Stopwatch()
    challenge_layout.cache_clear()
    with watch.time("layout (once per sector size)"):
        challenge_layout(SECTOR_SIZE)
    with watch.time("partition_witness"):
        fast = partition_witness(c1, 0)
    row = {"target_log2": log2, "circuit": c1.circuit_name, "challenges": challenges,
           "constraints": constraints_estimate(SECTOR_SIZE, challenges),
           "variables": fast.shape[0]}
    if reference:
        with watch.time("synthesize().witness()"):
            slow = synthesize(c1, 0).witness()
        if not np.array_equal(fast, slow):
            raise SystemExit(f"2^{log2}: partition_witness differs from synthesize().witness()")
        row["speedup"] = round(watch.seconds["synthesize().witness()"]
                               / watch.seconds["partition_witness"], 1)
    row["seconds"] = {k: round(v, 4) for k, v in watch.seconds.items()}
    return row


def machine() -> dict[str, Any]:
    cpu = platform.processor()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in
                   Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"host": platform.node(), "cpu": cpu, "cores": os.cpu_count(),
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(), "platform": platform.platform()}


def table(rows: list[dict[str, Any]]) -> Table:
    out = Table(title="CPU Groth16 proving, one porep partition (seconds)")
    out.add_column("step")
    for row in rows:
        out.add_column(f"2^{row['target_log2']}\n{row['circuit']}\n{row['constraints']} c",
                       justify="right")
    steps = ["setup", "prepare", *PROVE_STEPS, "verify"]
    for step in steps:
        out.add_row(step, *(f"{row['seconds'].get(step, 0.0):.3f}" for row in rows))
    out.add_row("[bold]prove (witness → proof)", *(f"[bold]{row['prove_seconds']:.3f}"
                                                     for row in rows))
    return out


def witness_table(rows: list[dict[str, Any]]) -> Table:
    out = Table(title="One partition's witness (seconds): reference = synthesize().witness(), "
                      "fast = partition_witness")
    for column in ("size", "circuit", "constraints", "reference", "fast", "speedup"):
        out.add_column(column, justify="right")
    for row in rows:
        seconds = row["seconds"]
        reference = seconds.get("synthesize().witness()")
        out.add_row(f"2^{row['target_log2']}", row["circuit"], str(row["constraints"]),
                    "-" if reference is None else f"{reference:.3f}",
                    f"{seconds['partition_witness']:.3f}",
                    "-" if reference is None else f"{row['speedup']}x")
    return out


@click.command()
@click.option("--log2", "sizes", type=click.IntRange(12, 20), multiple=True,
              default=(12, 14, 16), show_default=True, help="target constraints, as log2")
@click.option("--params-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="reuse keys from here (default: a fresh temp dir, so setup is timed)")
@click.option("--witness-log2", "witness_sizes", type=click.IntRange(12, 22), multiple=True,
              default=(14, 16, 18, 20), show_default=True,
              help="witness section: target constraints, as log2")
@click.option("--reference-max-log2", type=int, default=20, show_default=True,
              help="time the reference synthesis only up to this size (~10 s at 2^20)")
@click.option("--skip-prove", is_flag=True, help="run only the witness section")
def main(sizes: tuple[int, ...], params_dir: Path | None, witness_sizes: tuple[int, ...],
         reference_max_log2: int, skip_prove: bool) -> None:
    console = Console()
    host = machine()  # before the run: the load average says how shared the cores were
    rows = []
    with tempfile.TemporaryDirectory(prefix="proofq-bench-") as scratch:
        for log2 in () if skip_prove else sizes:
            with console.status(f"2^{log2}: setup and one proof"):
                rows.append(bench_size(log2, params_dir or Path(scratch)))
            row = rows[-1]
            console.log(f"2^{log2}: {row['circuit']} proved in {row['prove_seconds']:.2f}s")
    witness_rows = []
    for log2 in witness_sizes:
        with console.status(f"2^{log2}: one partition's witness"):
            witness_rows.append(bench_witness(log2, reference=log2 <= reference_max_log2))
    if rows:
        console.print(table(rows))
    if witness_rows:
        console.print(witness_table(witness_rows))
    now = dt.datetime.now(dt.timezone.utc)
    result = {"date": now.isoformat(timespec="seconds"), "machine": host, "commit": commit(),
              "command": " ".join([Path(sys.executable).name, *sys.argv]),
              "sector_size": SECTOR_SIZE,
              "rows": rows, "witness": witness_rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"cpu-{'witness-' if skip_prove else ''}{now:%Y-%m-%d}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    console.print(f"wrote {path}")


if __name__ == "__main__":
    main()
