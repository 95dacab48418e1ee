"""A phase-2-prepared powers of tau (``.ptau``, BLS12-381) whose τ is KNOWN: benchmarks and
tests only, NEVER real keys.

τ, α and β come from a seeded RNG and the seed is printed: anyone who has it can forge
proofs for every key set up from the file. It stands in for snarkjs's own ceremony
(``powersoftau new``, ``contribute``, ``prepare phase2``), whose last step runs for hours
at power 16 on two cores: here every point is one fixed-base multiplication of a known
scalar (``snark.groth16.CpuFixedBase``, or any ``FixedBaseMul``), minutes at power 16.

Layout as snarkjs 0.7.6 writes it and ``zkey new`` (groth16 setup) reads it; container
``snark.snarkjs.binfile`` (magic "ptau", version 1), points ``snark.snarkjs.points``
(Montgomery, little-endian, uncompressed), N = 2^power:

  1  header: u32 n8q (48), q, u32 power, u32 ceremony power (= power)
  2  τ^i·G1, i < 2N − 1         3  τ^i·G2, i < N
  4  α·τ^i·G1, i < N            5  β·τ^i·G1, i < N            6  β·G2
  7  contributions: none (u32 0, as ``powersoftau new`` leaves it; nothing reads them
     for a groth16 setup, and the file has no ceremony to verify)
  12 for p = 0 … power + 1: L_j(τ)·G1, j < 2^p    13 for p = 0 … power: L_j(τ)·G2
  14 for p = 0 … power: α·L_j(τ)·G1               15 the same with β

L_j is the Lagrange basis of the 2^p-domain in snarkjs's order (point w^j, w its root of
unity from 5, ``snark.snarkjs.roots``). ``zkey new`` takes a circuit's A/B/C/IC bases from
the blocks of its domain size n in 12–15 and its H basis from the odd points of block 2n of
section 12 — the reason section 12 alone goes one power further. snarkjs makes that block
from a section 2 that lacks τ^(2N−1) (zero-padded), so it holds L_j(τ) − w^j·τ^(2N−1)/(2N);
written the same here. (The difference cancels in every honest proof: Σ_j h_j·w^(2j+1) is
the x^(2N−1) coefficient of A·B − C, zero since its degree is below 2N − 1.)

    python bench/ptau.py --power 16 -o .cache/snarkjs-bench/pot16.ptau [--seed S]
"""

from __future__ import annotations

import functools
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from pathlib import Path

import click
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from snark import native  # noqa: E402
from snark.domain import Domain, powers  # noqa: E402
from snark.fields import (FQ_BYTES, FQ_MODULUS, FR_MODULUS, fr_to_limbs,  # noqa: E402
                          limbs_to_object)
from snark.groth16 import CpuFixedBase, FixedBaseMul  # noqa: E402
from snark.snarkjs.binfile import write_sections  # noqa: E402
from snark.snarkjs.points import encode_points  # noqa: E402
from snark.snarkjs.roots import constraint_positions  # noqa: E402

#: Points per fixed-base call: what one written chunk holds.
CHUNK = 1 << 14


def snarkjs_lagrange(log_n: int, tau: int, *, without_top_power: bool = False) -> np.ndarray:
    """L_j(τ) for the 2^log_n-domain in snarkjs's order (object array); with
    ``without_top_power``, the inverse DFT of (τ^i) with τ^(n−1) replaced by 0, as
    ``prepare phase2`` computes its last block of section 12."""
    n = 1 << log_n
    if n == 1:
        return np.array([1], dtype=object)
    domain = Domain(n)
    ours = limbs_to_object(native.lagrange_at(n, tau))  # this project's order: point ω^i
    if without_top_power:
        ours = (ours - pow(tau, n - 1, FR_MODULUS) * domain.n_inv * domain.elements()) % FR_MODULUS
    return ours[constraint_positions(np.arange(n, dtype=np.int64), n)]


def _encoded(fixed_base: FixedBaseMul, group: int, scalars: np.ndarray) -> bytes:
    """One chunk of points in snarkjs's bytes (a pool worker's job)."""
    mul = fixed_base.mul_g1 if group == 1 else fixed_base.mul_g2
    return encode_points(mul(scalars))


def write_ptau(path: Path, power: int, seed: int, *, fixed_base: FixedBaseMul | None = None,
               jobs: int = 1, log: Callable[[str], None] = print) -> None:
    """The prepared ptau of ``power`` for τ, α, β drawn from ``random.Random(seed)``; with
    ``jobs`` > 1 the chunks of points are computed by that many processes (CPU fixed base)."""
    fixed_base = fixed_base or CpuFixedBase()
    rng = random.Random(seed)
    tau, alpha, beta = (rng.randrange(1, FR_MODULUS) for _ in range(3))
    while any(pow(tau, 1 << p, FR_MODULUS) == 1 for p in range(power + 2)):
        tau = rng.randrange(1, FR_MODULUS)  # τ in a domain: its Lagrange form has no value
    n = 1 << power
    tau_powers = powers(tau, 2 * n - 1)
    header = (np.array([FQ_BYTES], dtype="<u4").tobytes() + FQ_MODULUS.to_bytes(FQ_BYTES, "little")
              + np.array([power, power], dtype="<u4").tobytes())
    started = time.perf_counter()
    with ProcessPoolExecutor(jobs) if jobs > 1 else nullcontext() as pool:
        each = pool.map if pool else map  # in order, chunk by chunk

        def section(name: str, group: int, blocks: Iterator[np.ndarray]) -> Iterator[bytes]:
            count = 0
            for scalars in blocks:
                count += len(scalars)
                yield from each(functools.partial(_encoded, fixed_base, group),
                                [fr_to_limbs(scalars[i:i + CHUNK])
                                 for i in range(0, len(scalars), CHUNK)])
            log(f"{name}: {count} G{group} points, {time.perf_counter() - started:.1f} s")

        def lagrange(factor: int, top: int) -> Iterator[np.ndarray]:
            for p in range(top + 1):
                scalars = snarkjs_lagrange(p, tau, without_top_power=p == power + 1)
                yield scalars * factor % FR_MODULUS

        write_sections(path, b"ptau", 1, [
            (1, [header]),
            (2, section("tauG1", 1, iter([tau_powers]))),
            (3, section("tauG2", 2, iter([tau_powers[:n]]))),
            (4, section("alphaTauG1", 1, iter([tau_powers[:n] * alpha % FR_MODULUS]))),
            (5, section("betaTauG1", 1, iter([tau_powers[:n] * beta % FR_MODULUS]))),
            (6, section("betaG2", 2, iter([np.array([beta], dtype=object)]))),
            (7, [bytes(4)]),
            (12, section("Lagrange tauG1", 1, lagrange(1, power + 1))),
            (13, section("Lagrange tauG2", 2, lagrange(1, power))),
            (14, section("Lagrange alphaTauG1", 1, lagrange(alpha, power))),
            (15, section("Lagrange betaTauG1", 1, lagrange(beta, power))),
        ])


@click.command()
@click.option("--power", type=click.IntRange(1, 28), required=True,
              help="log2 of the largest domain the file serves")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--seed", type=int, default=None, help="RNG seed of τ, α, β (default: fresh)")
@click.option("--jobs", type=click.IntRange(1), default=os.cpu_count() or 1, show_default=True,
              help="processes computing points")
def main(power: int, output: Path, seed: int | None, jobs: int) -> None:
    seed = random.randrange(2**63) if seed is None else seed
    print(f"ptau power {power}, seed {seed}: τ is known, for benchmarks and tests only")
    write_ptau(output, power, seed, jobs=jobs)
    print(f"wrote {output} ({output.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
