"""Filecoin partitions on one GPU: a real development-key proof, and 32 GiB timing.

Two stages, each optional:

* ``--prove SIZE`` (e.g. 512MiB): a development key for the partition circuit made with the
  GPU's fixed-base kernel, written in bellperson's formats and read back; a sparse
  (or, for 2 KiB / 8 MiB, whole) test sector's partition proved on the GPU and verified.
* ``--time SPEC`` (``32GiB``: PoRep; ``snap:32GiB``, ``window:32GiB``, ``winning:32GiB``):
  the partition's R1CS resident (coded), a *timing key* —
  bases of the right counts, drawn from 2^20 random points and repeated, so proofs under it
  do not verify and say so — and the witness computed on the device from the C1's
  challenged data (``gpu.witness``; a PoSt partition's from sparse test sectors, padded
  as rust-fil-proofs pads a short one; an update's from a sparse test update), then
  A·w, B·w, C·w, the quotient and the five MSMs;
  ``--repeat`` partitions, each timed from the data's upload to the MSMs' results; with
  ``--budget 16GiB,24GiB`` the same partitions again under each VRAM budget (the bases that
  do not fit it streamed from the host, ``gpu.streamed_bases``), after the unlimited,
  resident run (``--streamed-only``: without it): one record per budget.

Prints a table and writes ``bench/results/filecoin-gpu-<date>.json``, and a 32 GiB run's
goal records (issue 24: device, commit, command, mode, budget_bytes, partition_gpu_s, …) to
``filecoin-32gib-<date>.json``, both rewritten after each target (a call cut short keeps
what it measured).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from provenance import commit  # noqa: E402
from sector_goals import goal_record  # noqa: E402

import gpu  # noqa: E402
from snark import groth16  # noqa: E402
from snark.curve import PointArray  # noqa: E402
from snark.filecoin import registered_proof, seal, seal_sparse  # noqa: E402
from snark.filecoin.circuit import StackedShape, circuit_r1cs, witness_plan  # noqa: E402
from snark.filecoin.circuit.inputs import partition_data  # noqa: E402
from snark.fields import FR_MODULUS, montgomery_reduce, random_fr  # noqa: E402
from snark.keys import ProvingKey, VerifyingKey  # noqa: E402
from snark.qap import COSET  # noqa: E402
from workers.ledger import key_bytes  # noqa: E402
from full_size_check import KnownLogs, check_partition  # noqa: E402
from pool_peak import PoolPeak  # noqa: E402

DISTINCT = 1 << 20


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def sector(size: str, rng: np.random.Generator):
    proof = registered_proof(f"StackedDrg{size}V1_1")
    return (seal if size in ("2KiB", "8MiB") else seal_sparse)(proof, rng)


def prove_stage(size: str, rng: np.random.Generator, backend) -> dict:
    from gpu.fixed_base import GpuFixedBase
    from snark.filecoin.params import load_proving_key, load_verifying_key, make_development_key
    from snark.filecoin.prove import prove_c1, verify_c1

    c1 = sector(size, rng)
    with tempfile.TemporaryDirectory() as directory:
        (params, vk_path), setup_s = timed(lambda: make_development_key(
            c1.proof, directory, fixed_base=GpuFixedBase()))
        key, load_s = timed(lambda: load_proving_key(c1.proof, params))
        proof, prove_s = timed(lambda: prove_c1(c1, key, backend))
        ok, verify_s = timed(lambda: verify_c1(c1, load_verifying_key(vk_path), proof))
    return {"stage": "prove", "registered_proof": c1.proof.name, "key": "development",
            "setup_s": round(setup_s, 1), "key_load_s": round(load_s, 1),
            "prove_s": round(prove_s, 2), "verify_s": round(verify_s, 2), "verified": ok}


def timing_key(r1cs, rng: np.random.Generator, fixed, distinct: int = DISTINCT,
               circuit_id: str = "timing-key") -> tuple[ProvingKey, KnownLogs]:
    """A key of the circuit's counts whose bases repeat ``distinct`` random points (made by
    the fixed-base multiplier ``fixed``), and their discrete logs: for timing (its proofs do
    not verify) and for full-size checks of each step (``full_size_check``). Each group's
    bases are prefixes of one tile, so the host holds the longest basis per group (~20 GB
    at 32 GiB, not 47)."""
    logs = KnownLogs(random_fr(distinct, rng), random_fr(max(1, distinct // 8), rng))
    g1 = fixed.mul_g1(logs.g1)
    g2 = fixed.mul_g2(logs.g2)
    a_density, b_density = r1cs.density()
    counts = {"a_g1": int(a_density.sum()), "b_g1": int(b_density.sum()),
              "l_g1": r1cs.num_aux, "h_g1": r1cs.domain_size - 1}
    tiles = {1: tiled(g1, max(counts.values())), 2: tiled(g2, counts["b_g1"])}
    bases = {name: tiles[1][:count] for name, count in counts.items()}
    one = g1[:1].g1_points()[0]
    beta, gamma, delta = g2[:3].g2_points()
    vk = VerifyingKey(circuit_id, one, beta, gamma, delta, g1[:r1cs.num_inputs].g1_points())
    return ProvingKey(r1cs, vk, one, one, b_g2=tiles[2], **bases, qap=COSET,
                      a_density=a_density, b_density=b_density), logs


def tiled(points: PointArray, count: int) -> PointArray:
    """``points`` repeated to ``count`` points."""
    reps = -(-count // len(points))
    return PointArray(points.group, np.tile(points.xy, (reps,) + (1,) * (points.xy.ndim - 1))
                      [:count], np.zeros(count, dtype=bool))


def step_times(key: ProvingKey, logs: KnownLogs, assignment, backend,
               rng: np.random.Generator, satisfied: bool = True,
               check: bool = True) -> tuple[dict, dict, dict]:
    """One partition's compute step by step (A·w, B·w, C·w; the quotient; each MSM alone),
    each ended by its stream: where a partition's GPU time and scratch go (``{step: s}``,
    ``{step: scratch bytes}``); and each step checked at full size against the key's known
    logs (``full_size_check``, on host copies made outside the timed windows). Without
    ``check`` the checks and their host copies are skipped (``{}``): beside a WindowPoSt
    key's host tiles and its streamed rows they overran an H100 host's 125 GiB."""
    scratch: dict[str, int] = {}

    def timed_on_stream(fn, name):
        start = time.perf_counter()
        with PoolPeak() as peak:
            out = fn()
            backend.stream.synchronize()
        scratch[name] = peak.scratch_bytes
        return out, round(time.perf_counter() - start, 4)

    abc, abc_s = timed_on_stream(lambda: backend.evaluate_abc(key, assignment), "abc")
    abc_host = abc_on_host(abc, backend) if check else None  # the quotient works in place
    h, quotient_s = timed_on_stream(lambda: backend.quotient(key, abc), "quotient")
    backend.release(abc)
    times = {"abc": abc_s, "quotient": quotient_s}
    aux = assignment[key.r1cs.num_inputs:]
    points = {}
    for basis, scalars in (("a_g1", assignment), ("b_g1", assignment), ("l_g1", aux),
                           ("h_g1", h)):
        points[basis], times[basis] = timed_on_stream(
            lambda b=basis, s=scalars: backend.msm_g1(key, b, s), basis)
    points["b_g2"], times["b_g2"] = timed_on_stream(
        lambda: backend.msm_g2(key, "b_g2", assignment), "b_g2")
    checks = check_partition(key, logs, host(assignment), abc_host if satisfied else None,
                             host(h), points, rng) if check else {}
    backend.release(assignment, h)
    return times, scratch, checks


def abc_on_host(abc, backend) -> tuple[np.ndarray, ...]:
    """Host copies of A·w, B·w, C·w in standard form, as the checks read them: the GPU
    backend leaves them in Montgomery form for its quotient (``GpuBackend.evaluate_abc``)."""
    values = tuple(host(v) for v in abc)
    if backend.name != "gpu":
        return values
    return tuple(montgomery_reduce(v, FR_MODULUS) for v in values)


def host(values) -> np.ndarray:
    """A device (or host) array of limbs on the host."""
    return values.get() if hasattr(values, "get") else np.asarray(values)


_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def parse_bytes(text: str) -> int | None:
    """``24GiB`` → bytes; ``unset`` → None (no budget: every basis resident)."""
    if text == "unset":
        return None
    for unit, scale in _UNITS.items():
        if text.endswith(unit):
            return int(float(text[:-len(unit)]) * scale)
    return int(text)


@dataclass(frozen=True)
class Target:
    """What ``--time`` times: a partition circuit of one kind and size, and its partitions'
    flat private values (``values(p)``, what the device's tapes read). ``satisfied``: whether
    those values satisfy the circuit (the quotient's full-size check needs it)."""

    name: str
    partitions: int
    r1cs: Callable[[], object]
    plan: Callable[[], object]
    values: Callable[[int], np.ndarray]
    satisfied: bool


def porep_target(size: str, rng: np.random.Generator) -> Target:
    """A (sparse above 8 MiB) test sector's C1."""
    proof = registered_proof(f"StackedDrg{size}V1_1")
    shape = StackedShape.of(proof)
    c1 = sector(size, rng)
    return Target(proof.name, proof.partitions, lambda: circuit_r1cs(shape),
                  lambda: witness_plan(shape), lambda p: partition_data(c1, p).flatten(), True)


def snap_target(size: str, rng: np.random.Generator) -> Target:
    """A sparse test update (``generate_sparse_update``: runs of equal nodes, so its trees,
    and the challenges comm_r_new gives, are made in seconds at 32 GiB): the witness
    satisfies the circuit."""
    from snark.filecoin.snap.circuit import circuit_r1cs as snap_r1cs
    from snark.filecoin.snap.circuit import witness_plan as snap_plan
    from snark.filecoin.snap.generate import generate_sparse_update
    from snark.filecoin.snap.inputs import partition_data as snap_data
    from snark.filecoin.snap.shape import SnapShape

    shape = SnapShape.of_size(parse_bytes(size))
    update = generate_sparse_update(shape, rng)
    return Target(f"EmptySectorUpdate{size}", shape.partitions, lambda: snap_r1cs(shape),
                  lambda: snap_plan(shape), lambda p: snap_data(update, p).flatten(), True)


def post_target(kind: str, size: str, rng: np.random.Generator,
                sectors: int = 32) -> Target:
    """A PoSt partition over ``sectors`` sparse test sectors, padded to the circuit's count
    as rust-fil-proofs pads a short partition (the last sector repeated): the witness
    satisfies the circuit at any size."""
    from snark.filecoin.post.checks import circuit_sectors
    from snark.filecoin.post.circuit import FALLBACK_POST, PostData, PostShape
    from snark.filecoin.post.generate import sparse_proofs
    from snark.filecoin.post.registered_proofs import post_proof_named

    version = "V1_1" if kind == "window" else "V1"  # Go's names: WindowPoSt's V1_1
    proof = post_proof_named(f"StackedDrg{kind.capitalize()}{size}{version}")
    shape = PostShape.of(proof)
    randomness = bytearray(rng.bytes(32))
    randomness[31] &= 0x3F
    ids = [int(i) for i in rng.integers(1, 1 << 40, min(sectors, proof.sector_count))]
    data = PostData.of(circuit_sectors(sparse_proofs(proof, rng, ids, bytes(randomness))))
    return Target(proof.name, 1, lambda: FALLBACK_POST.r1cs(shape),
                  lambda: FALLBACK_POST.witness_plan(shape), lambda p: data.flatten(), True)


def target(spec: str, rng: np.random.Generator) -> Target:
    """``32GiB`` (PoRep), ``snap:32GiB``, ``window:32GiB`` or ``winning:32GiB``."""
    kind, _, size = spec.rpartition(":")
    if kind in ("", "porep"):
        return porep_target(size, rng)
    if kind == "snap":
        return snap_target(size, rng)
    if kind in ("window", "winning"):
        return post_target(kind, size, rng)
    raise SystemExit(f"--time: {spec!r}: the kind is one of porep, snap, window, winning")


def time_stage(spec: str, repeat: int, rng: np.random.Generator, backend,
               budgets: list[int | None], check: bool = True) -> list[dict]:
    """The partition set up once, then timed on a backend per budget (None: resident)."""
    from gpu.witness import DevicePlan

    def step(name, fn):
        out, seconds = timed(fn)
        print(f"{spec}: {name} {seconds:.1f} s", flush=True)
        return out, seconds

    what, inputs_s = step("inputs", lambda: target(spec, rng))
    r1cs, r1cs_s = step("R1CS", what.r1cs)
    plan, plan_s = step("witness plan", what.plan)
    from gpu.fixed_base import GpuFixedBase

    (key, logs), key_s = step("timing key", lambda: timing_key(r1cs, rng, GpuFixedBase()))
    device_witness, tapes_s = step("tapes resident", lambda: DevicePlan(
        plan, backend.device_id, backend.stream))
    setup = {"constraints": r1cs.num_constraints, "inputs_s": round(inputs_s, 1),
             "r1cs_s": round(r1cs_s, 1), "plan_s": round(plan_s, 1), "key_s": round(key_s, 1),
             "tapes_s": round(tapes_s, 1)}
    rows = []
    for budget in budgets:
        under = gpu.get_backend(backend.device_id, vram_budget_bytes=budget)
        rows.append(dict(setup, **time_budget(what, key, logs, device_witness, backend,
                                               under, budget, repeat, step, rng, check)))
        under.evict(key)  # its device memory back before the next budget's
    return rows


def time_budget(what: Target, key: ProvingKey, logs: KnownLogs, device_witness, backend, under,
                budget, repeat: int, step, rng: np.random.Generator,
                check: bool = True) -> dict:
    """Partitions of ``what`` proved on ``under`` (the witness on ``backend``'s tapes)."""
    import cupy

    label = "unset" if budget is None else f"{budget / 2**30:g} GiB"
    _, prepare_s = step(f"key resident (budget {label})", lambda: under.prepare(key))
    streamed = sorted(under.streamed_bases(key))
    print(f"budget {label}: streamed {', '.join(streamed) or 'none'}", flush=True)
    runs = []
    for p in range(min(repeat, what.partitions)):
        values = what.values(p)
        _, host_s = timed(lambda values=values: device_witness.data_limbs(values))
        with PoolPeak() as peak:
            start = time.perf_counter()
            assignment = device_witness.run(device_witness.upload(values))
            backend.stream.synchronize()
            witness_s = time.perf_counter() - start
            groth16.compute(key, assignment, under)
            total_s = time.perf_counter() - start
        runs.append({"partition": p, "host_data_s": round(host_s, 4),
                     "witness_gpu_s": round(witness_s, 4), "partition_gpu_s": round(total_s, 3),
                     "scratch_bytes": peak.scratch_bytes})
        print(f"partition {p}: witness {witness_s * 1e3:.1f} ms, whole {total_s:.3f} s, "
              f"scratch {peak.scratch_bytes / 1e9:.1f} GB", flush=True)
    witness = device_witness.run(device_witness.upload(values))
    backend.stream.synchronize()
    (steps, step_scratch, checks), check_s = timed(lambda: step_times(
        key, logs, witness, under, rng, what.satisfied, check))
    print("steps (s): " + ", ".join(f"{k} {v:.3f}" for k, v in steps.items()), flush=True)
    print("steps' scratch (GB): " + ", ".join(f"{k} {v / 1e9:.1f}"
                                              for k, v in step_scratch.items()), flush=True)
    print(f"full-size checks ({check_s:.0f} s with the steps): "
          + ", ".join(f"{k} {'ok' if ok else 'WRONG'}" for k, ok in checks.items()), flush=True)
    pool_bytes = cupy.get_default_memory_pool().total_bytes()  # this process's, after the runs
    return {"stage": "time", "registered_proof": what.name, "key": "timing key (random bases)",
            "mode": "streamed" if streamed else "resident", "budget_bytes": budget,
            "streamed_bases": streamed, "ledger_key_bytes": key_bytes(key)
            + under.extra_resident_bytes(key), "workers": 1,
            # the key's own arrays, and the pinned host segment of its streamed bases (one a
            # host, whatever the number of workers)
            "host_key_copies": 2 if streamed else 1, "gpu_key_copies": 1, "sector_wall_s": None,
            "prepare_s": round(prepare_s, 1), "pool_gib": round(pool_bytes / 2**30, 1),
            "runs": runs, "steps_s": steps, "steps_scratch_bytes": step_scratch,
            "scratch_bytes": max(r["scratch_bytes"] for r in runs),
            "full_size_checks": checks,
            "full_size_checked": bool(checks) and all(checks.values()),
            "witness": "satisfies the circuit" if what.satisfied else "random values (does not "
                       "satisfy the circuit: the quotient unchecked)",
            "partition_gpu_s": min(r["partition_gpu_s"] for r in runs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prove", default="", help="sizes to prove under a development key")
    parser.add_argument("--time", default="",
                        help="partitions to time with a timing key: 32GiB (PoRep), snap:32GiB, "
                             "window:32GiB, winning:32GiB (a comma list)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", action="append", default=[],
                        help="VRAM budgets to time beside the resident run (repeatable or a "
                             "comma list: 16GiB,24GiB); bases beyond one stream from the host")
    parser.add_argument("--streamed-only", action="store_true",
                        help="time under the --budget values alone, without the resident run "
                             "first (a key that does not fit the card beside its scratch)")
    parser.add_argument("--no-checks", action="store_true",
                        help="time the steps without the full-size checks (their host copies)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    backend = gpu.get_backend()
    import cupy

    device = cupy.cuda.runtime.getDeviceProperties(backend.device_id)["name"].decode()
    record = {"date": time.strftime("%Y-%m-%d-%H%M", time.gmtime()), "device": device,
              "commit": commit(), "command": " ".join(sys.argv), "runs": []}
    budgets = [] if args.streamed_only else [None]  # the resident run first
    budgets += [parse_bytes(b) for arg in args.budget for b in arg.split(",") if b]
    budgets = list(dict.fromkeys(budgets))  # each budget once
    if not budgets:
        raise SystemExit("--streamed-only: name the budgets to time (--budget 24GiB)")
    for size in filter(None, args.prove.split(",")):
        write_records(record, [prove_stage(size, rng, backend)], Path(args.out))
    for size in filter(None, args.time.split(",")):
        write_records(record, time_stage(size, args.repeat, rng, backend, budgets,
                                         not args.no_checks), Path(args.out))


def write_records(record: dict, rows: list[dict], out: Path) -> None:
    """``rows`` printed and added to ``record``, whose files are written again."""
    for row in rows:
        print(json.dumps({k: v for k, v in row.items() if k != "runs"}), flush=True)
    record["runs"] += rows
    path = out / f"filecoin-gpu-{record['date']}.json"
    path.write_text(json.dumps(record, indent=1))
    print(f"→ {path}", flush=True)
    goals = [goal_record(dict(row, device=record["device"], commit=record["commit"],
                              command=record["command"]))
             for row in record["runs"] if row.get("registered_proof") == "StackedDrg32GiBV1_1"]
    if goals:  # issue 24's record of the 32 GiB goals
        path = out / f"filecoin-32gib-{record['date']}.json"
        path.write_text(json.dumps(goals, indent=1))
        print(f"→ {path}", flush=True)


if __name__ == "__main__":
    main()
