"""Times setup and one proof with an older checkout's CPU backend, for comparisons.

Run by ``bench/native_cpu.py`` with ``PYTHONPATH`` set to an extracted older tree (the
object-array backend of commit 58de0c4 and before): it reads a circuit written by
``write_case`` (plain ``.npy`` files: three CSR matrices with a coefficient per non-zero,
the witness, the public inputs) and prints one JSON line of seconds, wall and CPU, per step.
Only names that existed in those trees are used.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np


def write_case(directory: Path, r1cs, witness: np.ndarray, public_inputs: list[int]) -> None:
    """The circuit as ``.npy`` files an older tree can read (coded matrices expanded)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("a", "b", "c"):
        m = getattr(r1cs, name)
        m = m.to_sparse() if hasattr(m, "to_sparse") else m
        for part in ("indptr", "indices", "data"):
            np.save(directory / f"{name}_{part}.npy", np.asarray(getattr(m, part)))
    np.save(directory / "witness.npy", witness)
    (directory / "shape.json").write_text(json.dumps({
        "num_inputs": r1cs.num_inputs, "num_aux": r1cs.num_aux,
        "public_inputs": [str(x) for x in public_inputs]}))


class _Steps:
    def __init__(self) -> None:
        self.seconds: dict[str, dict[str, float]] = {}

    def time(self, name: str, fn, *args):
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn(*args)
        self.seconds[name] = {"wall": round(time.perf_counter() - wall, 4),
                              "cpu": round(time.process_time() - cpu, 4)}
        return out


def main(directory: Path) -> None:
    from snark import groth16
    from snark.cpu_backend import CpuBackend
    from snark.r1cs import R1CS, SparseMatrix

    shape = json.loads((directory / "shape.json").read_text())
    mats = [SparseMatrix(*(np.load(directory / f"{name}_{part}.npy")
                           for part in ("indptr", "indices", "data"))) for name in "abc"]
    r1cs = R1CS(shape["num_inputs"], shape["num_aux"], *mats)
    witness = np.load(directory / "witness.npy")
    steps = _Steps()
    key = steps.time("setup", groth16.setup, r1cs)
    backend = CpuBackend()
    steps.time("prepare", backend.prepare, key)
    handle = steps.time("load witness", backend.load_witness, key, witness)
    abc = steps.time("A·w, B·w, C·w", backend.evaluate_abc, key, handle)
    h = steps.time("H (NTTs)", backend.quotient, key, abc)
    ni = r1cs.num_inputs
    parts = {}
    for basis, scalars in (("a_g1", handle), ("b_g1", handle), ("l_g1", handle[ni:]),
                           ("h_g1", h)):
        parts[basis] = steps.time(f"MSM {basis}", backend.msm_g1, key, basis, scalars)
    parts["b_g2"] = steps.time("MSM b_g2", backend.msm_g2, key, "b_g2", handle)
    proof = groth16.finalize(key, groth16.MsmParts(**parts))
    valid = groth16.verify(key.vk, [int(x) for x in shape["public_inputs"]], proof)
    print(json.dumps({"valid": valid, "seconds": steps.seconds}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
