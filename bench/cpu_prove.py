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
    python bench/cpu_prove.py --native         # native kernels, the 2 KiB-shaped partition:
                                               # cpu-native-<date>.json

The native section times the native library's NTTs, MSMs (dense and 90%-bits scalars) and
fixed-base multiplication, then setup (density form) and one proof of a random satisfied
R1CS shaped like Filecoin's 2 KiB PoRep partition (``bench/partition_shape.py``: 2^22
domain, ~2.7 M constraints), and the object-array backend of ``--legacy-ref`` on the same
shape at 2^16 (``bench/legacy_cpu.py``, an extracted copy of that commit's ``snark/``),
extrapolated step by step to the full size.

The smallest porep circuit (K = 1 at 2KiB) already has ~3.1k constraints, so 2^12 is the
first size; a 2^10 porep circuit does not exist.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
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

from bench.legacy_cpu import write_case  # noqa: E402
from bench.partition_shape import synthetic_partition  # noqa: E402
from bench.provenance import commit  # noqa: E402
from snark import groth16, native  # noqa: E402
from snark.cpu_backend import CpuBackend
from snark.fields import random_fr
from snark.porep.circuit import challenges_for, constraints_estimate, public_inputs, synthesize
from snark.porep.prove import load_or_setup_key
from snark.porep.seal import seal
from snark.porep.witness import challenge_layout, partition_witness
from snark.proof import Proof

SECTOR_SIZE = 2048
RESULTS = Path(__file__).resolve().parent / "results"
DEVICE = "dev machine (2 cores)"


class Stopwatch:
    """Accumulates wall seconds per named step (``seconds``), and the process's CPU
    seconds, all threads together (``cpu_seconds``): on a shared machine the wall time
    says what was waited, the CPU time what was worked."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def time(self, step: str) -> Iterator[None]:
        started, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.seconds[step] += time.perf_counter() - started
            self.cpu_seconds[step] += time.process_time() - cpu


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


def _timed(fn, *args) -> tuple[Any, dict[str, float]]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, {"wall": round(time.perf_counter() - wall, 4),
                 "cpu": round(time.process_time() - cpu, 4)}


def _bits_mostly(scalars: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """90% of the entries replaced by random bits (a Filecoin witness's mix)."""
    out = scalars.copy()
    bits = rng.random(len(out)) < 0.9
    out[bits] = 0
    out[bits, 0] = rng.integers(0, 2, int(bits.sum()), dtype=np.uint64)
    return out


def bench_kernels(ntt_sizes, msm_sizes, rng: np.random.Generator) -> list[dict[str, Any]]:
    rows = []
    for log2 in ntt_sizes:
        values = random_fr(1 << log2, rng)
        _, seconds = _timed(native.ntt, values)
        rows.append({"kernel": "NTT", "log2": log2, "scalars": "-", **seconds})
    for group in (1, 2):
        for log2 in msm_sizes:
            scalars = random_fr(1 << log2, rng)
            points, seconds = _timed(native.fixed_base_mul, group, scalars)
            rows.append({"kernel": f"fixed base G{group}", "log2": log2, "scalars": "dense",
                         **seconds})
            bases = native.Bases.from_points(points)
            for label, values in (("dense", scalars), ("90% bits", _bits_mostly(scalars, rng))):
                _, seconds = _timed(native.msm, bases, values)
                rows.append({"kernel": f"MSM G{group}", "log2": log2, "scalars": label,
                             **seconds})
    return rows


class TimedFixedBase:
    """groth16.CpuFixedBase, its time summed per group."""

    def __init__(self, watch: Stopwatch) -> None:
        self.inner, self.watch = groth16.CpuFixedBase(), watch

    def mul_g1(self, scalars):
        with self.watch.time("fixed base G1"):
            return self.inner.mul_g1(scalars)

    def mul_g2(self, scalars):
        with self.watch.time("fixed base G2"):
            return self.inner.mul_g2(scalars)


def bench_shape(log2: int, rng: np.random.Generator) -> dict[str, Any]:
    """Setup (density form) and one proof of the partition-shaped R1CS, step by step."""
    watch = Stopwatch()
    with watch.time("make R1CS and witness"):
        shape = synthetic_partition(log2, rng)
    r1cs = shape.r1cs
    with watch.time("setup"):
        key = groth16.setup(r1cs, density=True, fixed_base=TimedFixedBase(watch))
    backend = TimedBackend(CpuBackend(), watch)
    with watch.time("prove"):
        parts = groth16.compute(key, groth16.stage(key, shape.witness, backend), backend)
        with watch.time("finalize"):
            proof = groth16.finalize(key, parts)
    with watch.time("verify"):
        valid = groth16.verify(key.vk, shape.public_inputs, proof)
    if not valid:
        raise SystemExit(f"2^{log2} shape: the proof does not verify")
    a_density, b_density = r1cs.density()
    aux = slice(r1cs.num_inputs, None)
    return {"log2": log2, "constraints": r1cs.num_constraints, "variables": r1cs.num_variables,
            "domain_size": r1cs.domain_size, "nnz": [m.nnz for m in (r1cs.a, r1cs.b, r1cs.c)],
            "a_density_aux": round(float(a_density[aux].mean()), 4),
            "b_density_aux": round(float(b_density[aux].mean()), 4),
            "points": {name: len(getattr(key, name)) for name in
                       ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1")},
            "wall": {k: round(v, 3) for k, v in watch.seconds.items()},
            "cpu": {k: round(v, 3) for k, v in watch.cpu_seconds.items()}}


def bench_legacy(ref: str, log2: int, target: dict[str, Any],
                 rng: np.random.Generator) -> dict[str, Any]:
    """The object-array backend of ``ref`` on the shape at ``log2`` (measured), and each
    step scaled to the ``target`` row's sizes (extrapolated): setup and MSMs by points,
    H by n·log n, the rest by rows."""
    shape = synthetic_partition(log2, rng)
    with tempfile.TemporaryDirectory(prefix="proofq-legacy-") as scratch:
        tree, case = Path(scratch) / "tree", Path(scratch) / "case"
        tree.mkdir()
        archive = subprocess.run(["git", "archive", ref, "snark"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        write_case(case, shape.r1cs, shape.witness, shape.public_inputs)
        run = subprocess.run([sys.executable, str(Path(__file__).parent / "legacy_cpu.py"),
                              str(case)], env={**os.environ, "PYTHONPATH": str(tree)},
                             capture_output=True, text=True, check=True)
    measured = json.loads(run.stdout.strip().splitlines()[-1])
    if not measured["valid"]:
        raise SystemExit(f"legacy 2^{log2}: the proof does not verify")
    r1cs = shape.r1cs
    dense_points = r1cs.num_variables
    points = {"a_g1": dense_points, "b_g1": dense_points, "b_g2": dense_points,
              "l_g1": r1cs.num_aux, "h_g1": r1cs.domain_size - 1}
    small_setup_points = 3 * dense_points + 2 * r1cs.num_variables + r1cs.domain_size
    big = target["points"]
    big_setup = sum(target["variables"] if k != "l_g1" and k != "h_g1" else v
                    for k, v in big.items())
    n_small, n_big = r1cs.domain_size, target["domain_size"]
    scale = {"setup": big_setup / small_setup_points,
             "H (NTTs)": n_big * n_big.bit_length() / (n_small * n_small.bit_length())}
    for basis, count in points.items():
        scale[f"MSM {basis}"] = (target["variables"] if basis in ("a_g1", "b_g1", "b_g2")
                                 else big[basis]) / count
    rows_ratio = target["constraints"] / r1cs.num_constraints
    extrapolated = {step: round(t["wall"] * scale.get(step, rows_ratio), 1)
                    for step, t in measured["seconds"].items()}
    return {"ref": ref, "log2": log2, "constraints": r1cs.num_constraints,
            "measured": measured["seconds"], "extrapolated_wall": extrapolated,
            "note": "extrapolated linearly in points for setup (one scalar multiplication "
                    "a point: exact) and the MSMs (the old backend keeps a point per "
                    "variable; Pippenger's cost a point falls slowly with n, so this "
                    "overstates the old MSMs by up to ~20%), by n·log n for H and by rows "
                    "for the rest"}


def native_tables(kernels, shape, legacy) -> list[Table]:
    out = Table(title=f"Native kernels on the {DEVICE} (seconds)")
    for column in ("kernel", "size", "scalars", "wall", "CPU"):
        out.add_column(column, justify="right")
    for row in kernels:
        out.add_row(row["kernel"], f"2^{row['log2']}", row["scalars"], f"{row['wall']:.3f}",
                    f"{row['cpu']:.3f}")
    steps = Table(title=f"2 KiB-shaped partition (2^{shape['log2']} domain, "
                        f"{shape['constraints']} constraints): native vs object-array (s)")
    for column in ("step", "native wall", "native CPU", "object-array (extrapolated)"):
        steps.add_column(column, justify="right")
    old = legacy["extrapolated_wall"] if legacy else {}
    for step, wall in shape["wall"].items():
        steps.add_row(step, f"{wall:.2f}", f"{shape['cpu'][step]:.2f}",
                      f"{old[step]:.0f}" if step in old else "-")
    both = shape["wall"]["setup"] + shape["wall"]["prove"]
    both_cpu = shape["cpu"]["setup"] + shape["cpu"]["prove"]
    steps.add_row("[bold]setup + prove", f"[bold]{both:.2f}", f"[bold]{both_cpu:.2f}",
                  f"[bold]{sum(old.values()):.0f}" if old else "-")
    return [out, steps]


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
@click.option("--native", "native_only", is_flag=True,
              help="run only the native section (kernels, the 2 KiB-shaped partition)")
@click.option("--shape-log2", type=click.IntRange(10, 24), default=22, show_default=True,
              help="native section: the partition shape's domain, as log2")
@click.option("--ntt-log2", "ntt_sizes", type=click.IntRange(1, 27), multiple=True,
              default=(16, 20, 22), show_default=True)
@click.option("--msm-log2", "msm_sizes", type=click.IntRange(1, 24), multiple=True,
              default=(16, 20), show_default=True)
@click.option("--legacy-ref", default="58de0c4", show_default=True,
              help="the commit whose object-array backend is timed ('' to skip)")
@click.option("--legacy-log2", type=click.IntRange(10, 18), default=16, show_default=True)
def main(sizes: tuple[int, ...], params_dir: Path | None, witness_sizes: tuple[int, ...],
         reference_max_log2: int, skip_prove: bool, native_only: bool, shape_log2: int,
         ntt_sizes: tuple[int, ...], msm_sizes: tuple[int, ...], legacy_ref: str,
         legacy_log2: int) -> None:
    console = Console()
    host = machine()  # before the run: the load average says how shared the cores were
    if native_only:
        run_native(console, host, shape_log2, ntt_sizes, msm_sizes, legacy_ref, legacy_log2)
        return
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


def run_native(console: Console, host: dict[str, Any], shape_log2: int, ntt_sizes, msm_sizes,
               legacy_ref: str, legacy_log2: int) -> None:
    rng = np.random.default_rng()
    host["threads"] = native.threads()
    with console.status("native kernels"):
        kernels = bench_kernels(ntt_sizes, msm_sizes, rng)
    with console.status(f"2^{shape_log2} partition shape: setup and one proof"):
        shape = bench_shape(shape_log2, rng)
    legacy = None
    if legacy_ref:
        with console.status(f"object-array backend of {legacy_ref} at 2^{legacy_log2}"):
            legacy = bench_legacy(legacy_ref, legacy_log2, shape, rng)
    for table_ in native_tables(kernels, shape, legacy):
        console.print(table_)
    now = dt.datetime.now(dt.timezone.utc)
    host["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result = {"date": now.isoformat(timespec="seconds"), "device": DEVICE, "machine": host,
              "commit": commit(), "command": " ".join([Path(sys.executable).name, *sys.argv]),
              "kernels": kernels, "shape": shape, "legacy": legacy}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"cpu-native-{now:%Y-%m-%d-%H%M}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    console.print(f"wrote {path}")


if __name__ == "__main__":
    main()
