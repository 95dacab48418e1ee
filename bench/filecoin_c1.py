"""Reading and checking Filecoin C1s (issue 21): parse and check times by sector shape.

Each case is a test C1 in Curio's encoding (``{"SectorNum", "Phase1Out": base64, …}``): a
sealed 2 KiB sector, and sparse C1s shaped as 512 MiB and 32 GiB (``seal_sparse``: the
real counts of partitions, challenges, layers and path lengths, so the real ~50 MB for
32 GiB). On one core (the process pins itself to one CPU; ``--no-pin`` lets the scheduler
choose, which on a shared machine measures the code rather than the neighbours), it times
parsing the wrapper and
the raw form (best and median of ``--repeat``), the parts of a parse (base64, lifting the
field elements out of the text, reading the skeleton by template), and the pre-proving
checks once. Generated C1s are kept in ``--cache`` for later runs. ``--seal CASE`` also
times sealing a fresh C1 of that case, phase by phase (8MiB seals a whole sector: minutes),
and ``--update SIZE`` a test SnapDeals update's parse and checks (its partitions checked in
threads: pass ``--no-pin``). Prints a table and writes
``bench/results/filecoin-c1-<date>.json``; the load average is recorded with it, since the
development machine is shared.

    python bench/filecoin_c1.py
    python bench/filecoin_c1.py --case 32GiB --repeat 5
    python bench/filecoin_c1.py --case 2KiB --seal 2KiB --seal 8MiB --seal 32GiB
    python bench/filecoin_c1.py --case 2KiB --update 32GiB --no-pin
"""

from __future__ import annotations

import binascii
import datetime as dt
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import click
import numpy as np
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.provenance import commit
from snark.filecoin import check_c1, curio_json, parse_c1, phase1_json, registered_proof
from snark.filecoin.c1_base64 import decode_base64
from snark.filecoin.c1_canonical import read_canonical
from snark.filecoin.c1_lift import lift_domains
from snark.filecoin.seal import seal, seal_sparse
from snark.filecoin.snap.checks import check_update
from snark.filecoin.snap.generate import generate_any_update
from snark.filecoin.snap.shape import SnapShape
from snark.filecoin.snap.update import parse_update
from snark.porep.c1 import parse_size
from snark.poseidon.neptune import neptune_constants

# $OUT on the device
RESULTS = Path(os.environ.get("OUT") or Path(__file__).resolve().parent / "results")
CASES = {"2KiB": ("StackedDrg2KiBV1_1", seal), "512MiB": ("StackedDrg512MiBV1_1", seal_sparse),
         "32GiB": ("StackedDrg32GiBV1_1", seal_sparse)}
SEALS = CASES | {"8MiB": ("StackedDrg8MiBV1_1", seal)}


def best_and_median(fn, repeat: int) -> dict[str, float]:
    """Wall seconds (best, median) and this process's CPU seconds (best): on a shared
    machine the CPU time is what the code costs, the wall time what it got."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return {"best": min(wall), "median": statistics.median(wall), "cpu_best": min(cpu)}


def c1_file(case: str, cache: Path, seed: int) -> tuple[Path, float | None]:
    """The case's C1 (Curio's encoding), generated once per seed."""
    path = cache / f"{case}-{seed}.json"
    if path.exists():
        return path, None
    name, sealer = CASES[case]
    start = time.perf_counter()
    c1 = sealer(registered_proof(name), np.random.default_rng(seed))
    seconds = time.perf_counter() - start
    path.write_bytes(curio_json(c1, 1))
    return path, seconds


def measure(case: str, cache: Path, seed: int, repeat: int) -> dict:
    path, sealed = c1_file(case, cache, seed)
    wrapper = path.read_bytes()
    c1 = parse_c1(wrapper)  # warm: the template
    for arity in (2, 8, 11):  # and the Poseidon constants the checks use
        neptune_constants(arity)
    raw = phase1_json(c1)
    payload = json.loads(wrapper)["Phase1Out"].encode()
    skeleton, table = lift_domains(raw)
    row = {"case": case, "registered_proof": c1.proof.name, "curio_bytes": len(wrapper),
           "raw_bytes": len(raw), "field_elements": len(table), "seal_seconds": sealed}
    row["parse_curio"] = best_and_median(lambda: parse_c1(wrapper), repeat)
    row["parse_raw"] = best_and_median(lambda: parse_c1(raw), repeat)
    row["base64"] = best_and_median(lambda: decode_base64(payload), repeat)
    row["base64_one_thread"] = best_and_median(
        lambda: binascii.a2b_base64(payload, strict_mode=True), repeat)
    row["lift"] = best_and_median(lambda: lift_domains(raw), repeat)
    row["template_read"] = best_and_median(lambda: read_canonical(skeleton, table), repeat)
    row["check"] = best_and_median(lambda: check_c1(c1), 1)
    return row


def measure_update(size: str, seed: int, repeat: int) -> dict:
    """A test SnapDeals update of ``size`` (sparse above 512 MiB): its JSON's parse and its
    checks (``check_update``, the partitions in threads), as a worker runs them."""
    shape = SnapShape.of_size(parse_size(size))
    raw = generate_any_update(shape, np.random.default_rng(seed)).to_json().encode()
    update = parse_update(raw, max_bytes=len(raw))
    return {"case": f"snap:{size}", "json_bytes": len(raw), "partitions": shape.partitions,
            "parse": best_and_median(lambda: parse_update(raw, max_bytes=len(raw)), repeat),
            "check": best_and_median(lambda: check_update(update), repeat)}


def timed_seal(case: str, seed: int) -> dict:
    """Seconds of each sealing phase of a fresh C1 (``on_phase`` marks where each starts)."""
    name, sealer = SEALS[case]
    marks: list[tuple[str, float]] = [("start", time.perf_counter())]
    sealer(registered_proof(name), np.random.default_rng(seed),
           on_phase=lambda phase: marks.append((phase, time.perf_counter())))
    marks.append(("end", time.perf_counter()))
    phases = {phase: later - at for (phase, at), (_, later) in zip(marks[1:-1], marks[2:])}
    return {"case": case, "registered_proof": name, "phases": phases,
            "seconds": marks[-1][1] - marks[0][1]}


@click.command()
@click.option("--case", "cases", multiple=True, type=click.Choice(list(CASES)),
              help="default: all")
@click.option("--repeat", default=5, show_default=True, help="runs per timed parse")
@click.option("--seed", default=21, show_default=True, help="of the generated C1s")
@click.option("--cache", type=click.Path(file_okay=False), default=None,
              help="where generated C1s are kept [default: <tmp>/proofq-bench-c1]")
@click.option("--pin/--no-pin", default=True, show_default=True,
              help="run on one CPU (else the parse's lift and the check use every CPU they "
                   "may)")
@click.option("--seal", "seals", multiple=True, type=click.Choice(list(SEALS)),
              help="also time sealing a fresh C1 of this case, by phase")
@click.option("--update", "updates", multiple=True, metavar="SIZE",
              help="also time a test SnapDeals update of this size: parse and checks")
def main(cases: tuple[str, ...], repeat: int, seed: int, cache: str | None, pin: bool,
         seals: tuple[str, ...], updates: tuple[str, ...]) -> None:
    pin = pin and hasattr(os, "sched_setaffinity")
    if pin:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    cache_dir = Path(cache or Path(tempfile.gettempdir()) / "proofq-bench-c1")
    cache_dir.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    rows = [measure(case, cache_dir, seed, repeat) for case in cases or CASES]
    table = Table(title="Filecoin C1: parse (its lift threaded) and check (threaded) seconds: "
                        "wall best / median (CPU best)")
    for column in ("case", "Curio c1.json", "parse Curio", "parse raw", "base64", "lift",
                   "template", "check"):
        table.add_column(column, justify="right")
    for r in rows:
        times = [f"{r[key]['best']:.3f} / {r[key]['median']:.3f} ({r[key]['cpu_best']:.3f})"
                 for key in ("parse_curio", "parse_raw", "base64", "lift", "template_read")]
        table.add_row(r["case"], f"{r['curio_bytes'] / 1e6:.1f} MB", *times,
                      f"{r['check']['best']:.2f} ({r['check']['cpu_best']:.2f})")
    Console().print(table)
    snap = [measure_update(size, seed, repeat) for size in updates]
    for r in snap:
        Console().print(f"{r['case']} ({r['json_bytes'] / 1e6:.1f} MB, {r['partitions']} "
                        f"partitions): parse {r['parse']['best']:.3f} s, checks "
                        f"{r['check']['best']:.3f} s ({r['check']['cpu_best']:.3f} s CPU)")
    sealed = [timed_seal(case, seed + 1) for case in seals]
    for run in sealed:
        steps = ", ".join(f"{phase} {seconds:.1f}" for phase, seconds in run["phases"].items())
        Console().print(f"sealed {run['registered_proof']} in {run['seconds']:.1f} s: {steps}")
    now = dt.datetime.now()
    record = {"date": now.isoformat(timespec="seconds"),
              "device": f"{platform.node()} ({os.cpu_count()} CPUs)",
              "commit": commit(), "command": " ".join(["python", *sys.argv]),
              "load_average_before": load_before, "load_average_after": os.getloadavg(),
              "pinned_to_one_cpu": pin, "repeat": repeat, "cases": rows, "updates": snap,
              "seals": sealed}
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"filecoin-c1-{now:%Y-%m-%d-%H%M}.json"
    out.write_text(json.dumps(record, indent=1) + "\n")
    Console().print(f"→ {out}")


if __name__ == "__main__":
    main()
