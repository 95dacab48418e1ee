"""Filecoin's partition circuit on one machine: structure, witness, rows, proof.

For each registered proof asked for: the circuit's structure pass and fingerprint, a C1
(sealed whole for 2 KiB / 8 MiB, sparse otherwise), one partition's witness by the tapes,
the check of every row, and with ``--prove`` a development-key setup, CPU proof and
verification. Prints a table and writes ``bench/results/filecoin-circuit-<date>.json``
(date, device, commit, command).

    python bench/filecoin_circuit.py --proofs 2KiB,512MiB,32GiB [--prove 2KiB]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from provenance import commit  # noqa: E402

from snark.filecoin import registered_proof, seal, seal_sparse  # noqa: E402
from snark.filecoin.circuit import (StackedShape, circuit_fingerprint, structure,  # noqa: E402
                                    witness)
from snark.filecoin.circuit.inputs import partition_data, public_inputs  # noqa: E402
from snark.gadgets.assembly import check_rows  # noqa: E402

WHOLE = ("2KiB", "8MiB")


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def measure(size: str, prove: bool, rng: np.random.Generator) -> dict:
    proof = registered_proof(f"StackedDrg{size}V1_1")
    shape = StackedShape.of(proof)
    _, structure_s = timed(lambda: structure(shape))
    fp, fingerprint_s = timed(lambda: circuit_fingerprint(shape))
    c1, seal_s = timed(lambda: (seal if size in WHOLE else seal_sparse)(proof, rng))
    data = partition_data(c1, 0)
    assignment, witness_s = timed(lambda: witness(shape, data))
    full = assignment.assignment()
    bad, check_s = timed(lambda: check_rows(structure(shape), full))
    row = {"registered_proof": proof.name, "sealing": "whole" if size in WHOLE else "sparse",
           "constraints": fp.constraints, "aux": fp.aux, "structure_s": round(structure_s, 2),
           "fingerprint_s": round(fingerprint_s, 2), "seal_s": round(seal_s, 2),
           "witness_s": round(witness_s, 2), "check_s": round(check_s, 2),
           "unsatisfied_rows": int(bad.size),
           "public_inputs_match": assignment.public_inputs() == public_inputs(c1, 0)}
    if prove:
        row.update(_prove(c1))
    return row


def _prove(c1) -> dict:
    from snark.filecoin.params import load_proving_key, load_verifying_key, make_development_key
    from snark.filecoin.prove import prove_c1, verify_c1

    with tempfile.TemporaryDirectory() as directory:
        (params, vk_path), setup_s = timed(lambda: make_development_key(c1.proof, directory))
        key, load_s = timed(lambda: load_proving_key(c1.proof, params))
        proof, prove_s = timed(lambda: prove_c1(c1, key))
        ok, verify_s = timed(lambda: verify_c1(c1, load_verifying_key(vk_path), proof))
    return {"setup_s": round(setup_s, 1), "key_load_s": round(load_s, 1),
            "prove_s": round(prove_s, 1), "verify_s": round(verify_s, 2), "verified": ok}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proofs", default="2KiB,512MiB", help="sizes, comma-separated")
    parser.add_argument("--prove", default="", help="sizes to set up, prove and verify too")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    proving = set(filter(None, args.prove.split(",")))
    rows = [measure(size, size in proving, rng) for size in args.proofs.split(",")]
    keys = ["registered_proof", "constraints", "structure_s", "witness_s", "check_s",
            "unsatisfied_rows", "prove_s"]
    print(" | ".join(keys))
    for row in rows:
        print(" | ".join(str(row.get(k, "")) for k in keys))
    stamp = time.strftime("%Y-%m-%d-%H%M", time.gmtime())
    record = {"date": stamp, "device": f"dev machine ({platform.machine()}, "
              f"{len(os.sched_getaffinity(0))} cores)",
              "commit": commit(), "command": " ".join(sys.argv), "runs": rows}
    out = Path(args.out) / f"filecoin-circuit-{stamp}.json"
    out.write_text(json.dumps(record, indent=1))
    print(f"→ {out}")


if __name__ == "__main__":
    main()
