"""The real circom2 and snarkjs for tests: compile circuits, run their setup, make witnesses.

The tools come from ``PROOFQ_NPM_TOOLS`` (set by ``.ci/run``) or, when that is unset, from
``.ci/npm-tools.sh`` (the same pinned versions, installed once into ``.cache/npm-tools``).
Tests skip only when node itself is missing. Setup runs once per session for all circuits:
one powers-of-tau file (bls12-381, one contribution, phase 2 prepared) and per circuit
``groth16 setup`` plus one zkey contribution, so the keys are not the degenerate τ = 1 ones.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PTAU_POWER = 8  # domains up to 2^8 (prepare phase2, most of the setup time, grows with it)


def tools_bin() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the snarkjs/circom tests need Node 20 and npm")
    named = os.environ.get("PROOFQ_NPM_TOOLS")
    if named:
        return Path(named)
    done = subprocess.run(["bash", str(REPO / ".ci" / "npm-tools.sh")], capture_output=True,
                          text=True)
    assert done.returncode == 0, f".ci/npm-tools.sh failed:\n{done.stderr[-3000:]}"
    return Path(done.stdout.strip())


@dataclass(frozen=True)
class Tools:
    bin: Path

    def run(self, tool: str, *args: str | Path, cwd: Path | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([str(self.bin / tool), *map(str, args)], cwd=cwd,
                              capture_output=True, text=True, timeout=600)
        if check and done.returncode != 0:
            raise AssertionError(f"{tool} {' '.join(map(str, args))} failed "
                                 f"({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return done

    def snarkjs(self, *args: str | Path, check: bool = True) -> subprocess.CompletedProcess:
        return self.run("snarkjs", *args, check=check)

    def groth16_verify(self, vk: Path, public: Path, proof: Path) -> bool:
        """snarkjs's verdict: True for "OK!", False for an invalid proof."""
        done = self.snarkjs("groth16", "verify", vk, public, proof, check=False)
        output = done.stdout + done.stderr
        if done.returncode == 0 and "OK!" in output:
            return True
        assert "Invalid proof" in output, f"snarkjs verify neither accepted nor rejected:\n{output}"
        return False


def circuit_source(template: str, size: int, public: list[str]) -> str:
    main = f"component main {{public [{', '.join(public)}]}}" if public else "component main"
    return f"pragma circom 2.0.0;\n{template}\n{main} = Circuit({size});\n"


#: A chain of products with two outputs; inputs a, b (public as chosen per circuit).
CHAIN = """
template Circuit(N) {
    signal input a;
    signal input b;
    signal output c;
    signal output d;
    signal x[N];
    x[0] <== a * b;
    for (var i = 1; i < N; i++) {
        x[i] <== x[i - 1] * (x[i - 1] + i);
    }
    c <== x[N - 1] * b;
    d <== x[N - 2] * a;
}
"""

#: No outputs and no public inputs: nPublic = 0, public.json is [].
SECRET = """
template Circuit(N) {
    signal input a;
    signal input b;
    signal x[N];
    x[0] <== a * b;
    for (var i = 1; i < N; i++) {
        x[i] <== x[i - 1] * b + i;
    }
}
"""

#: name -> (template, size, public inputs); domains 2^5, 2^7, 2^8.
CIRCUITS = {
    "chain-20": (CHAIN, 20, ["a"]),
    "secret-100": (SECRET, 100, []),
    "chain-200": (CHAIN, 200, ["a", "b"]),
}


@dataclass(frozen=True)
class Circuit:
    name: str
    dir: Path
    tools: Tools

    @property
    def zkey(self) -> Path:
        return self.dir / "circuit.zkey"

    @property
    def vk(self) -> Path:
        return self.dir / "verification_key.json"

    def witness(self, a: int, b: int, out: Path) -> Path:
        """A .wtns for inputs a, b (node runs circom's witness generator)."""
        inputs = out.with_suffix(".input.json")
        inputs.write_text(json.dumps({"a": str(a), "b": str(b)}))
        done = subprocess.run(["node", str(self.dir / "circuit_js" / "generate_witness.js"),
                               str(self.dir / "circuit_js" / "circuit.wasm"), str(inputs),
                               str(out)], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        return out


def build_circuit(tools: Tools, base: Path, name: str, ptau: Path) -> Circuit:
    """Circuit ``name`` of ``CIRCUITS`` compiled and set up from ``ptau`` in ``base/name``."""
    template, size, public = CIRCUITS[name]
    work = base / name
    work.mkdir(exist_ok=True)
    (work / "circuit.circom").write_text(circuit_source(template, size, public))
    tools.run("circom2", "circuit.circom", "--r1cs", "--wasm", "--prime", "bls12381",
              "-o", ".", cwd=work)
    tools.snarkjs("groth16", "setup", work / "circuit.r1cs", ptau, work / "c0.zkey")
    tools.snarkjs("zkey", "contribute", work / "c0.zkey", work / "circuit.zkey",
                  "-e=proofq test contribution")
    tools.snarkjs("zkey", "export", "verificationkey", work / "circuit.zkey",
                  work / "verification_key.json")
    return Circuit(name, work, tools)


@functools.cache
def _fixtures(base: Path) -> tuple[Tools, dict[str, Circuit]]:
    tools = Tools(tools_bin())
    base.mkdir(exist_ok=True)
    ptau0, ptau1, ptau = (base / f"pot{i}.ptau" for i in range(3))
    tools.snarkjs("powersoftau", "new", "bls12-381", str(PTAU_POWER), ptau0)
    tools.snarkjs("powersoftau", "contribute", ptau0, ptau1, "-e=proofq test entropy")
    tools.snarkjs("powersoftau", "prepare", "phase2", ptau1, ptau)
    return tools, {name: build_circuit(tools, base, name, ptau) for name in CIRCUITS}


def snarkjs_fixtures(tmp_path_factory) -> tuple[Tools, dict[str, Circuit]]:
    """The tools and every compiled, set-up circuit: built once per test session."""
    return _fixtures(tmp_path_factory.getbasetemp() / "snarkjs-circuits")
