"""snarkjs against proofq on the same circom circuits, in one run on one machine.

For each size 2^k: a chain circuit of 2^k − 8 multiplications (domain 2^k), compiled with
circom2 (``--prime bls12381``), set up by snarkjs (groth16 setup, one zkey contribution) from
a prepared powers of tau of power max(k) written by ``bench/ptau.py`` (a known τ: benchmark
keys only; snarkjs's own ``prepare phase2`` takes hours at power 16 on 2 cores), and a
witness of random inputs. Then:

- ``snarkjs groth16 prove`` (the CLI, wall time, ``--reps`` times);
- proofq's import of the zkey (parse, check every point, store; once);
- ``proofq prove --zkey --wtns`` (the CLI in a fresh process: key load with its sha256
  checks, bases to arkworks points, proof, pairing check, JSON; wall time);
- proofq in-process with the key resident (a worker's steady state), per backend: CPU
  always, GPU when one is usable; per-step times on the CPU (``bench/cpu_prove.py``'s
  timed backend). GPU and CPU proofs are compared byte for byte for the same r, s.

Every proofq proof is checked by ``snarkjs groth16 verify``. Fixtures (ptau, circuits,
zkeys, witnesses) are cached under ``.cache/snarkjs-bench`` (``--work``). Without node,
the snarkjs columns are skipped and the fixtures must already be there: a GPU machine needs
only ``chain-<k>/{done,setup.json,circuit.zkey,witness.wtns}`` per size (no ptau).

    python bench/snarkjs_compare.py                     # 2^12 and 2^16
    python bench/snarkjs_compare.py --log2 12 --reps 5
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cpu_prove import Stopwatch, TimedBackend, machine  # noqa: E402
from bench.provenance import commit  # noqa: E402
from bench.ptau import write_ptau  # noqa: E402
from snark import groth16  # noqa: E402
from snark.cpu_backend import CpuBackend  # noqa: E402
from snark.fields import FR_MODULUS  # noqa: E402
from snark.snarkjs.json_formats import proof_to_json, public_to_json  # noqa: E402
from snark.snarkjs.keystore import import_zkey  # noqa: E402
from snark.snarkjs.witness import public_inputs  # noqa: E402
from snark.snarkjs.wtns import read_wtns  # noqa: E402

RESULTS = ROOT / "bench" / "results"
CIRCUIT = """pragma circom 2.0.0;
template Chain(N) {
    signal input a;
    signal input b;
    signal output c;
    signal x[N];
    x[0] <== a * b;
    for (var i = 1; i < N; i++) {
        x[i] <== x[i - 1] * (x[i - 1] + b);
    }
    c <== x[N - 1] * a;
}
component main {public [a]} = Chain(%d);
"""


class Tools:
    """snarkjs and circom2 from .ci/npm-tools.sh (pinned), or None without node."""

    def __init__(self) -> None:
        self.bin: Path | None = None
        if shutil.which("node"):
            out = subprocess.run(["bash", str(ROOT / ".ci" / "npm-tools.sh")],
                                 capture_output=True, text=True, check=True)
            self.bin = Path(out.stdout.strip())

    def __call__(self, tool: str, *args, cwd: Path | None = None) -> float:
        return timed_run([str(self.bin / tool), *args], cwd=cwd)[0]

    def verify(self, vk: Path, public: Path, proof: Path) -> bool:
        done = subprocess.run([str(self.bin / "snarkjs"), "groth16", "verify", str(vk),
                               str(public), str(proof)], capture_output=True, text=True)
        return done.returncode == 0 and "OK!" in done.stdout


def timed_run(command: list, cwd: Path | None = None, env: dict | None = None
              ) -> tuple[float, float]:
    """Run a command to completion: (wall seconds, CPU seconds of it and its threads). On a
    shared machine the CPU seconds say what the work cost when the wall clock cannot."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True,
                          text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, command))}: {done.stdout[-2000:]}"
                         f"{done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return round(wall, 3), round(cpu, 3)


def cpu_seconds() -> float:
    """User + sys seconds of this process and its reaped children (the ptau writer's pool)."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                         resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def ptau(work: Path, power: int, log) -> Path:
    """A prepared powers of tau of ``power``, made once by ``bench/ptau.py``: its τ is known
    (seed in ``pot<power>.json``), which is fine for timing provers and never for real keys."""
    path = work / f"pot{power}.ptau"
    if not path.exists():
        seed = random.randrange(2**63)
        log(f"powers of tau 2^{power} (bench/ptau.py, known τ, seed {seed}): minutes")
        started, started_cpu = time.perf_counter(), cpu_seconds()
        jobs = os.cpu_count() or 1
        write_ptau(work / "p.tmp", power, seed, jobs=jobs, log=log)
        made = {"power": power, "seed": seed, "writer": "bench/ptau.py", "jobs": jobs,
                "seconds": round(time.perf_counter() - started, 1),
                "cpu_seconds": round(cpu_seconds() - started_cpu, 1)}
        os.replace(work / "p.tmp", path)
        path.with_suffix(".json").write_text(json.dumps(made))
    return path


def circuit(tools: Tools, work: Path, log2: int, power: int, log) -> Path:
    """Compiled, set up and with one witness: ``work/chain-<log2>/``."""
    folder = work / f"chain-{log2}"
    if (folder / "done").exists():
        return folder
    if tools.bin is None:
        raise SystemExit(f"{folder}: no fixtures and no node to make them")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    log(f"2^{log2}: compiling and setting up")
    (folder / "circuit.circom").write_text(CIRCUIT % ((1 << log2) - 8))
    setup = {"compile": tools("circom2", "circuit.circom", "--r1cs", "--wasm", "--prime",
                              "bls12381", "-o", ".", cwd=folder)}
    pot = ptau(work, power, log)
    setup["groth16 setup"] = tools("snarkjs", "groth16", "setup", folder / "circuit.r1cs", pot,
                                   folder / "c0.zkey")
    setup["zkey contribute"] = tools("snarkjs", "zkey", "contribute", folder / "c0.zkey",
                                     folder / "circuit.zkey", "-e=proofq bench")
    (folder / "c0.zkey").unlink()
    tools("snarkjs", "zkey", "export", "verificationkey", folder / "circuit.zkey",
          folder / "vk.json")
    rng = random.Random()
    (folder / "input.json").write_text(json.dumps({"a": str(rng.randrange(FR_MODULUS)),
                                                   "b": str(rng.randrange(FR_MODULUS))}))
    started = time.perf_counter()
    done = subprocess.run(["node", str(folder / "circuit_js" / "generate_witness.js"),
                           str(folder / "circuit_js" / "circuit.wasm"), str(folder / "input.json"),
                           str(folder / "witness.wtns")], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    setup["witness"] = time.perf_counter() - started
    (folder / "setup.json").write_text(json.dumps({k: round(v, 3) for k, v in setup.items()}))
    (folder / "done").touch()
    return folder


def gpu_backend():
    try:
        import gpu

        ok, why = gpu.available()
        return gpu.get_backend() if ok else why
    except ImportError as exc:
        return f"gpu backend not installed ({exc})"


def bench_size(tools: Tools, folder: Path, reps: int, scratch: Path, log) -> dict[str, Any]:
    zkey, wtns, vk = folder / "circuit.zkey", folder / "witness.wtns", folder / "vk.json"
    row: dict[str, Any] = {"setup": json.loads((folder / "setup.json").read_text())}
    out = scratch / folder.name
    out.mkdir()
    if tools.bin:
        log(f"{folder.name}: snarkjs groth16 prove ×{reps}")
        runs = [timed_run([tools.bin / "snarkjs", "groth16", "prove", zkey, wtns,
                           out / "sj-proof.json", out / "sj-public.json"]) for _ in range(reps)]
        row["snarkjs_prove"], row["snarkjs_prove_cpu"] = map(list, zip(*runs))
    params = scratch / "params"
    started = time.perf_counter()
    key = import_zkey(zkey, params)
    row["proofq_import"] = round(time.perf_counter() - started, 3)
    row.update(constraints_domain=key.domain_size, variables=key.r1cs.num_variables)

    log(f"{folder.name}: proofq prove (CLI, cpu) ×{reps}")
    env = {**os.environ, "PROOFQ_PARAMS_DIR": str(params)}
    runs = [timed_run([sys.executable, "-m", "client", "prove", "--zkey", zkey, "--wtns", wtns,
                       "-o", out / "proof.json", "--public", out / "public.json",
                       "--backend", "cpu", "--json"], cwd=ROOT, env=env) for _ in range(reps)]
    cli, row["proofq_cli_cpu_cpu"] = map(list, zip(*runs))
    row["proofq_cli_cpu"] = cli
    if tools.bin and not tools.verify(vk, out / "public.json", out / "proof.json"):
        raise SystemExit(f"{folder.name}: snarkjs rejects proofq's proof (CLI)")

    witness = read_wtns(wtns)
    public = public_inputs(key, witness)
    r, s = random.randrange(1, FR_MODULUS), random.randrange(1, FR_MODULUS)
    backends: list[tuple[str, Any]] = [("cpu", CpuBackend())]
    gpu = gpu_backend()
    if isinstance(gpu, str):
        row["gpu_skipped"] = gpu
    else:
        backends.append(("gpu", gpu))
    proofs = {}
    for name, backend in backends:
        log(f"{folder.name}: proofq in-process ({name}, key resident) ×{reps}")
        watch = Stopwatch()
        timed = TimedBackend(backend, watch)
        started = time.perf_counter()
        timed.prepare(key)
        row[f"proofq_{name}_prepare"] = round(time.perf_counter() - started, 3)
        runs, cpu = [], []
        for _ in range(reps):
            started, started_cpu = time.perf_counter(), time.process_time()
            proof = groth16.prove(key, witness, timed, r=r, s=s)
            runs.append(round(time.perf_counter() - started, 4))
            cpu.append(round(time.process_time() - started_cpu, 4))
        row[f"proofq_{name}_warm_cpu"] = cpu
        if not groth16.verify(key.vk, public, proof):
            raise SystemExit(f"{folder.name}: {name} proof does not verify")
        proofs[name] = proof.to_bytes()
        row[f"proofq_{name}_warm"] = runs
        row[f"proofq_{name}_steps"] = {k: round(v / reps, 4) for k, v in watch.seconds.items()
                                       if k != "prepare"}
        (out / f"{name}.json").write_text(json.dumps(proof_to_json(proof)))
        (out / "public.json").write_text(json.dumps(public_to_json(public)))
        if tools.bin and not tools.verify(vk, out / "public.json", out / f"{name}.json"):
            raise SystemExit(f"{folder.name}: snarkjs rejects proofq's {name} proof")
    if "gpu" in proofs and proofs["gpu"] != proofs["cpu"]:
        raise SystemExit(f"{folder.name}: GPU and CPU proofs differ for the same r, s")
    if tools.bin:
        best = min(row["snarkjs_prove"])
        row["ratio_snarkjs_over_cpu_cli"] = round(best / min(cli), 2)
        row["ratio_snarkjs_over_cpu_warm"] = round(best / min(row["proofq_cpu_warm"]), 2)
        row["cpu_seconds_ratio_snarkjs_over_cpu_cli"] = round(
            min(row["snarkjs_prove_cpu"]) / min(row["proofq_cli_cpu_cpu"]), 2)
        if "gpu" in proofs:
            row["ratio_snarkjs_over_gpu_warm"] = round(best / min(row["proofq_gpu_warm"]), 2)
    return row


def table(rows: dict[str, dict[str, Any]]) -> Table:
    out = Table(title="Groth16 prove, same circuit and witness (seconds, best of reps)")
    for column in ("circuit", "domain", "snarkjs CLI", "proofq CLI cpu", "proofq cpu warm",
                   "proofq gpu warm", "snarkjs / proofq cpu (CLI, warm)",
                   "CPU s: snarkjs / proofq CLI"):
        out.add_column(column, justify="right")
    for name, row in rows.items():
        def best(key: str, row: dict[str, Any] = row) -> str:
            return f"{min(row[key]):.3f}" if key in row else "-"
        ratios = (f"{row['ratio_snarkjs_over_cpu_cli']}x, {row['ratio_snarkjs_over_cpu_warm']}x"
                  if "ratio_snarkjs_over_cpu_cli" in row else "-")
        cpu_seconds = (f"{best('snarkjs_prove_cpu')} / {best('proofq_cli_cpu_cpu')}"
                       if "snarkjs_prove_cpu" in row else "-")
        out.add_row(name, str(row["constraints_domain"]), best("snarkjs_prove"),
                    best("proofq_cli_cpu"), best("proofq_cpu_warm"), best("proofq_gpu_warm"),
                    ratios, cpu_seconds)
    return out


@click.command()
@click.option("--log2", "sizes", type=click.IntRange(6, 22), multiple=True, default=(12, 16),
              show_default=True, help="domain sizes, as log2")
@click.option("--reps", type=click.IntRange(1), default=3, show_default=True)
@click.option("--work", type=click.Path(file_okay=False, path_type=Path),
              default=ROOT / ".cache" / "snarkjs-bench", show_default=True,
              help="fixture cache (ptau, circuits, zkeys, witnesses)")
def main(sizes: tuple[int, ...], reps: int, work: Path) -> None:
    console = Console()
    host, head = machine(), commit()  # the code this process loaded, not a later HEAD
    tools = Tools()
    work.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="proofq-snarkjs-") as scratch:
        for log2 in sizes:
            folder = circuit(tools, work, log2, max(sizes), console.log)
            rows[folder.name] = bench_size(tools, folder, reps, Path(scratch), console.log)
            console.log(f"{folder.name}: {json.dumps(rows[folder.name])}")
    console.print(table(rows))
    now = dt.datetime.now(dt.timezone.utc)
    versions = {}
    if tools.bin:
        for name in ("snarkjs", "circom2"):
            package = tools.bin.parent / name / "package.json"
            versions[name] = json.loads(package.read_text())["version"]
    result = {"date": now.isoformat(timespec="seconds"), "machine": host, "commit": head,
              "command": " ".join([Path(sys.executable).name, *sys.argv]), "tools": versions,
              "rows": rows}
    made = work / f"pot{max(sizes)}.json"
    if made.exists():  # how the fixtures' ptau was made (absent on a machine given only keys)
        result["ptau"] = json.loads(made.read_text())
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"snarkjs-compare-{now:%Y-%m-%d-%H%M}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    console.print(f"wrote {path}")


if __name__ == "__main__":
    main()
