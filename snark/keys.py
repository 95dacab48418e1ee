"""Groth16 keys and their storage (DESIGN.md §3).

A proving key lives in ``params/<circuit_id>/``: one ``.npy`` per array (memory-mappable,
loadable straight to a GPU), ``manifest.json`` with every file's shape, dtype and sha256
(checked on load), and ``vk.json``. Keys are written to a temporary sibling directory and
renamed into place, so a crash never leaves half a key behind.

Verifying key JSON (``proofq-vk/1``)::

    {"format": "proofq-vk/1", "protocol": "groth16", "curve": "bls12381",
     "circuit_id": "<hex>", "num_public": k,           # public inputs, without ONE
     "alpha_g1": "<hex 48 B>", "beta_g2": "<hex 96 B>", "gamma_g2": "…", "delta_g2": "…",
     "ic": ["<hex 48 B>", … k + 1 entries]}

Points are zcash-compressed (the proof encoding of ``snark.proof``), hex without 0x.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from snark.curve import G1Point, G2Point, PointArray
from snark.r1cs import R1CS, SparseMatrix

PK_FORMAT = "proofq-groth16-pk/1"
VK_FORMAT = "proofq-vk/1"
#: How H is formed, stored in the manifest; backends pick their quotient by it.
#: coset: h = coefficients of (A·B − C)/Z via the coset g·⟨ω⟩, n − 1 of them, the H basis
#:        is τ^i·Z(τ)/δ (this project's setup).
#: odd:   h = A·B − C evaluated on the odd points ψ^(2i+1) of the 2n-domain (ψ² = ω), n of
#:        them, C = A∘B on the domain, no division by Z: the H basis (snarkjs keys) is the
#:        odd Lagrange basis already divided by Z and δ.
H_FORM_COSET = "coset"
H_FORM_ODD = "odd"
H_FORMS = (H_FORM_COSET, H_FORM_ODD)


class KeyFileError(ValueError):
    """A key file is missing, corrupt, or for another circuit; the message names the file."""


@dataclass
class VerifyingKey:
    circuit_id: str
    alpha_g1: G1Point
    beta_g2: G2Point
    gamma_g2: G2Point
    delta_g2: G2Point
    ic: list[G1Point]

    @property
    def num_public(self) -> int:
        return len(self.ic) - 1

    def to_json(self) -> dict[str, Any]:
        return {
            "format": VK_FORMAT, "protocol": "groth16", "curve": "bls12381",
            "circuit_id": self.circuit_id, "num_public": self.num_public,
            "alpha_g1": self.alpha_g1.to_compressed_bytes().hex(),
            "beta_g2": self.beta_g2.to_compressed_bytes().hex(),
            "gamma_g2": self.gamma_g2.to_compressed_bytes().hex(),
            "delta_g2": self.delta_g2.to_compressed_bytes().hex(),
            "ic": [p.to_compressed_bytes().hex() for p in self.ic],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "vk.json") -> "VerifyingKey":
        try:
            if data["format"] != VK_FORMAT:
                raise KeyFileError(f"{source}: format is {data['format']!r}, expected {VK_FORMAT}")
            g1 = lambda h: G1Point.from_compressed_bytes(bytes.fromhex(h))  # noqa: E731
            g2 = lambda h: G2Point.from_compressed_bytes(bytes.fromhex(h))  # noqa: E731
            vk = cls(data["circuit_id"], g1(data["alpha_g1"]), g2(data["beta_g2"]),
                     g2(data["gamma_g2"]), g2(data["delta_g2"]), [g1(h) for h in data["ic"]])
        except KeyFileError:
            raise
        except KeyError as exc:
            raise KeyFileError(f"{source}: missing field {exc.args[0]!r}") from None
        except (ValueError, TypeError) as exc:
            raise KeyFileError(f"{source}: invalid point or value ({exc})") from None
        if vk.num_public != data.get("num_public", vk.num_public):
            raise KeyFileError(f"{source}: num_public does not match the number of ic points")
        return vk


@dataclass
class ProvingKey:
    """Everything a backend needs to prove one circuit; point vectors as ``PointArray``."""

    r1cs: R1CS
    vk: VerifyingKey
    beta_g1: G1Point
    delta_g1: G1Point
    a_g1: PointArray       # num_variables
    b_g1: PointArray       # num_variables
    b_g2: PointArray       # num_variables
    l_g1: PointArray       # num_aux
    h_g1: PointArray       # domain_size − 1 (coset) or domain_size (odd)
    h_form: str = H_FORM_COSET
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def circuit_id(self) -> str:
        return self.vk.circuit_id

    @property
    def domain_size(self) -> int:
        return self.r1cs.domain_size

    # -- storage ----------------------------------------------------------------------
    def _arrays(self) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {}
        for name in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1"):
            points: PointArray = getattr(self, name)
            arrays[name] = points.xy
            arrays[f"{name}_inf"] = points.inf
        for name in ("a", "b", "c"):
            m: SparseMatrix = getattr(self.r1cs, name)
            arrays[f"r1cs_{name}_indptr"] = m.indptr
            arrays[f"r1cs_{name}_indices"] = m.indices
            arrays[f"r1cs_{name}_data"] = m.data
        return arrays

    def save(self, params_dir: Path) -> Path:
        """Write ``params_dir/<circuit_id>/`` atomically; return it."""
        params_dir = Path(params_dir)
        params_dir.mkdir(parents=True, exist_ok=True)
        final = params_dir / self.circuit_id
        tmp = Path(tempfile.mkdtemp(prefix=f".{self.circuit_id}.", dir=params_dir))
        try:
            files = {}
            for name, arr in self._arrays().items():
                path = tmp / f"{name}.npy"
                np.save(path, np.ascontiguousarray(arr))
                files[path.name] = {"shape": list(arr.shape), "dtype": str(arr.dtype),
                                    "sha256": _sha256(path)}
            (tmp / "vk.json").write_text(json.dumps(self.vk.to_json(), indent=1))
            files["vk.json"] = {"sha256": _sha256(tmp / "vk.json")}
            manifest = {
                "format": PK_FORMAT, "circuit_id": self.circuit_id, "h_form": self.h_form,
                "num_inputs": self.r1cs.num_inputs, "num_aux": self.r1cs.num_aux,
                "num_constraints": self.r1cs.num_constraints, "domain_size": self.domain_size,
                "beta_g1": self.beta_g1.to_compressed_bytes().hex(),
                "delta_g1": self.delta_g1.to_compressed_bytes().hex(),
                "files": files,
            }
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
            if final.exists():
                shutil.rmtree(tmp)
            else:
                os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return final

    @classmethod
    def load(cls, directory: Path, *, verify_hashes: bool = True) -> "ProvingKey":
        """Load a key directory (arrays memory-mapped), checking every file's sha256."""
        directory = Path(directory)
        manifest_path = directory / "manifest.json"
        if not manifest_path.exists():
            raise KeyFileError(f"{manifest_path}: no proving key here (manifest.json missing)")
        try:
            manifest = json.loads(manifest_path.read_text())
        except json.JSONDecodeError as exc:
            raise KeyFileError(f"{manifest_path}: not valid JSON ({exc.msg})") from None
        if manifest.get("format") != PK_FORMAT:
            raise KeyFileError(f"{manifest_path}: format {manifest.get('format')!r} is not {PK_FORMAT}")
        arrays: dict[str, np.ndarray] = {}
        for fname, meta in manifest["files"].items():
            path = directory / fname
            if not path.exists():
                raise KeyFileError(f"{path}: file listed in the manifest is missing")
            if verify_hashes and _sha256(path) != meta["sha256"]:
                raise KeyFileError(f"{path}: sha256 does not match the manifest (corrupt key)")
            if fname.endswith(".npy"):
                arrays[fname[:-4]] = np.load(path, mmap_mode="r", allow_pickle=False)
        vk = VerifyingKey.from_json(json.loads((directory / "vk.json").read_text()),
                                    str(directory / "vk.json"))
        mats = {name: SparseMatrix(np.asarray(arrays[f"r1cs_{name}_indptr"]),
                                   np.asarray(arrays[f"r1cs_{name}_indices"]),
                                   np.asarray(arrays[f"r1cs_{name}_data"]))
                for name in ("a", "b", "c")}
        r1cs = R1CS(manifest["num_inputs"], manifest["num_aux"], **mats)
        points = {name: PointArray(2 if name == "b_g2" else 1, arrays[name],
                                   np.asarray(arrays[f"{name}_inf"]))
                  for name in ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1")}
        if vk.circuit_id != manifest["circuit_id"] or directory.name != manifest["circuit_id"]:
            raise KeyFileError(f"{directory}: circuit id in manifest, vk.json and directory differ")
        if manifest.get("h_form") not in H_FORMS:
            raise KeyFileError(f"{manifest_path}: h_form {manifest.get('h_form')!r} is not one "
                               f"of {', '.join(H_FORMS)}")
        return cls(r1cs, vk,
                   G1Point.from_compressed_bytes(bytes.fromhex(manifest["beta_g1"])),
                   G1Point.from_compressed_bytes(bytes.fromhex(manifest["delta_g1"])),
                   h_form=manifest["h_form"], **points)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
