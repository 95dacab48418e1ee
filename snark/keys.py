"""Groth16 keys and their storage (docs/ARCHITECTURE.md §3).

A proving key lives in ``params/<circuit_id>/``: one ``.npy`` per array (memory-mappable,
loadable straight to a GPU), ``manifest.json`` with every file's shape, dtype and sha256
(checked on load, ``vk.json`` included when only the verifying key is read), and
``vk.json``. Keys are written to a temporary sibling directory and renamed into place
(``snark.files``), so a crash never leaves half a key behind.

Verifying key JSON (``proofq-vk/1``)::

    {"format": "proofq-vk/1", "protocol": "groth16", "curve": "bls12381",
     "circuit_id": "<hex>", "num_public": k,           # public inputs, without ONE
     "alpha_g1": "<hex 48 B>", "beta_g2": "<hex 96 B>", "gamma_g2": "…", "delta_g2": "…",
     "ic": ["<hex 48 B>", … k + 1 entries]}

Points are zcash-compressed (the proof encoding of ``snark.proof``), hex without 0x, and
decoded strictly: none of them may be the point at infinity (bellman refuses those too).

Density form (bellperson's): a key may carry boolean masks over the variables,
``a_density`` and ``b_density`` (``R1CS.density``); then ``a_g1`` holds points only for the
variables whose A mask is set and ``b_g1``/``b_g2`` only for B's, in variable order, and
every backend pairs them with those witness entries (``ProvingKey.density_of``). Without
masks (None) a basis has a point per variable, as keys made before the masks existed.
The masks are stored as ``a_density.npy``/``b_density.npy`` beside the bases; on load
their popcounts must equal the point counts.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from snark.errors import WorkerFault
from snark.curve import G1Point, G2Point, PointArray, PointFormatError, decode_compressed
from snark.files import atomic_path
from snark.qap import COSET, FORMS, QapForm
from snark.r1cs import R1CS, CodedMatrix, Matrix, SparseMatrix

PK_FORMAT = "proofq-groth16-pk/1"
VK_FORMAT = "proofq-vk/1"
#: The proving key's point vectors, in the order they are stored and staged.
POINT_BASES = ("a_g1", "b_g1", "b_g2", "l_g1", "h_g1")
#: The density masks and the bases each one selects points for.
DENSITY_BASES = {"a_density": ("a_g1",), "b_density": ("b_g1", "b_g2")}


class KeyFileError(WorkerFault, ValueError):
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

    def digest(self) -> str:
        """Names this key among the setups of its circuit (two development setups of one
        circuit differ): SHA-256 of its JSON, hex."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()

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
    def from_json(cls, data: Any, source: str = "vk.json") -> "VerifyingKey":
        if not isinstance(data, dict):
            raise KeyFileError(f"{source}: expected a JSON object, got {type(data).__name__}")
        if data.get("format") != VK_FORMAT:
            raise KeyFileError(f"{source}: format is {data.get('format')!r}, expected {VK_FORMAT}")
        try:
            ic = data["ic"]
            if not isinstance(ic, list) or not ic:
                raise KeyFileError(f"{source}: ic: expected a non-empty list of G1 points")
            vk = cls(data["circuit_id"], _point(data, "alpha_g1", 1, source),
                     _point(data, "beta_g2", 2, source), _point(data, "gamma_g2", 2, source),
                     _point(data, "delta_g2", 2, source),
                     [_point(ic, i, 1, f"{source}: ic") for i in range(len(ic))])
        except KeyError as exc:
            raise KeyFileError(f"{source}: missing field {exc.args[0]!r}") from None
        if vk.num_public != data.get("num_public", vk.num_public):
            raise KeyFileError(f"{source}: num_public does not match the number of ic points")
        return vk

    @classmethod
    def load(cls, directory: Path) -> "VerifyingKey":
        """Just ``vk.json`` of a key directory, checked against the manifest's sha256."""
        directory = Path(directory)
        meta = _read_manifest(directory)["files"].get("vk.json")
        path = directory / "vk.json"
        if meta is None:
            raise KeyFileError(f"{directory / 'manifest.json'}: lists no vk.json")
        _check_files({path: meta["sha256"]})
        return cls.from_json(json.loads(path.read_text()), str(path))


@overload
def _point(container: Any, key: str | int, group: Literal[1], source: str) -> G1Point: ...
@overload
def _point(container: Any, key: str | int, group: Literal[2], source: str) -> G2Point: ...
def _point(container: Any, key: str | int, group: int, source: str) -> G1Point | G2Point:
    """One point of a key file, from hex, strictly; errors name the field."""
    where = f"{source}.{key}" if isinstance(key, str) else f"{source}[{key}]"
    text = container[key]
    size = 48 * group
    if not isinstance(text, str):
        raise KeyFileError(f"{where}: expected a hex string, got {type(text).__name__}")
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise KeyFileError(f"{where}: not hex ({len(text)} characters)") from None
    if len(raw) != size:
        raise KeyFileError(f"{where}: expected {2 * size} hex digits ({size} bytes), "
                           f"got {len(text)}")
    try:
        return decode_compressed(raw, group)
    except PointFormatError as exc:
        raise KeyFileError(f"{where}: {exc}") from None


@dataclass
class ProvingKey:
    """Everything a backend needs to prove one circuit; point vectors as ``PointArray``.
    A value: what a backend makes resident of it is the backend's (``snark.backend``)."""

    r1cs: R1CS
    vk: VerifyingKey
    beta_g1: G1Point
    delta_g1: G1Point
    a_g1: PointArray       # num_variables, or popcount(a_density)
    b_g1: PointArray       # num_variables, or popcount(b_density)
    b_g2: PointArray       # num_variables, or popcount(b_density)
    l_g1: PointArray       # num_aux
    h_g1: PointArray       # qap.h_len(domain_size)
    qap: QapForm = COSET   # how H is formed (``snark.qap``)
    a_density: np.ndarray | None = None  # (num_variables,) bool, or None: dense
    b_density: np.ndarray | None = None
    #: the key directory it was loaded from (None: made in memory); processes that load
    #: one directory can share one device copy of it (``gpu.shared_keys``)
    directory: Path | None = field(default=None, compare=False, repr=False)

    @property
    def circuit_id(self) -> str:
        return self.vk.circuit_id

    @property
    def domain_size(self) -> int:
        return self.r1cs.domain_size

    def density_of(self, basis: str) -> np.ndarray | None:
        """The mask of the variables ``basis`` has points for (a_g1: ``a_density``; b_g1,
        b_g2: ``b_density``), or None where it has one per variable or is not a witness
        basis (l_g1, h_g1)."""
        for mask, bases in DENSITY_BASES.items():
            if basis in bases:
                return getattr(self, mask)
        return None

    def check_counts(self, source: str = "proving key") -> None:
        """Masks of the variables' length whose popcounts equal their bases' point
        counts, and a point per variable without them; ``KeyFileError`` otherwise."""
        variables = self.r1cs.num_variables
        for mask_name, bases in DENSITY_BASES.items():
            mask = getattr(self, mask_name)
            if mask is not None and mask.shape != (variables,):
                raise KeyFileError(f"{source}: {mask_name} has shape {mask.shape}, "
                                   f"expected ({variables},)")
            wanted = variables if mask is None else int(np.count_nonzero(mask))
            for basis in bases:
                if len(getattr(self, basis)) != wanted:
                    what = f"{mask_name} sets {wanted}" if mask is not None \
                        else f"the circuit has {wanted}"
                    raise KeyFileError(f"{source}: {basis} has {len(getattr(self, basis))} "
                                       f"points but {what} variables")

    # -- storage ----------------------------------------------------------------------
    def _arrays(self) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {}
        for name in POINT_BASES:
            points: PointArray = getattr(self, name)
            arrays[name] = points.xy
            arrays[f"{name}_inf"] = points.inf
        for name in DENSITY_BASES:
            if getattr(self, name) is not None:
                arrays[name] = np.asarray(getattr(self, name), dtype=bool)
        for name in ("a", "b", "c"):
            m: Matrix = getattr(self.r1cs, name)
            arrays[f"r1cs_{name}_indptr"] = m.indptr
            arrays[f"r1cs_{name}_indices"] = m.indices
            if isinstance(m, CodedMatrix):
                arrays[f"r1cs_{name}_codes"] = m.codes
                arrays[f"r1cs_{name}_table"] = m.table
            else:
                arrays[f"r1cs_{name}_data"] = m.data
        return arrays

    def save(self, params_dir: Path) -> Path:
        """Write ``params_dir/<circuit_id>/`` atomically; return it."""
        params_dir = Path(params_dir)
        params_dir.mkdir(parents=True, exist_ok=True)
        final = params_dir / self.circuit_id
        with atomic_path(final, directory=True) as tmp:
            files = {}
            for name, arr in self._arrays().items():
                _save_array(tmp / f"{name}.npy", arr)
                files[f"{name}.npy"] = {"shape": list(arr.shape), "dtype": str(arr.dtype)}
            (tmp / "vk.json").write_text(json.dumps(self.vk.to_json(), indent=1))
            files["vk.json"] = {}
            for fname, digest in zip(files, _sha256_all([tmp / f for f in files])):
                files[fname]["sha256"] = digest
            manifest = {
                "format": PK_FORMAT, "circuit_id": self.circuit_id, "h_form": self.qap.name,
                "num_inputs": self.r1cs.num_inputs, "num_aux": self.r1cs.num_aux,
                "num_constraints": self.r1cs.num_constraints, "domain_size": self.domain_size,
                "beta_g1": self.beta_g1.to_compressed_bytes().hex(),
                "delta_g1": self.delta_g1.to_compressed_bytes().hex(),
                "files": files,
            }
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
        return final

    @classmethod
    def load(cls, directory: Path, *, verify_hashes: bool = True) -> "ProvingKey":
        """Load a key directory (arrays memory-mapped), checking every file's sha256."""
        directory = Path(directory)
        manifest = _read_manifest(directory)
        arrays: dict[str, np.ndarray] = {}
        files = {directory / fname: meta["sha256"] for fname, meta in manifest["files"].items()}
        _check_files(files if verify_hashes else {path: None for path in files})
        for fname in manifest["files"]:
            path = directory / fname
            if fname.endswith(".npy"):
                arrays[fname[:-4]] = np.load(path, mmap_mode="r", allow_pickle=False)
        vk = VerifyingKey.from_json(json.loads((directory / "vk.json").read_text()),
                                    str(directory / "vk.json"))
        mats = {name: _matrix(arrays, name) for name in ("a", "b", "c")}
        r1cs = R1CS(manifest["num_inputs"], manifest["num_aux"], **mats)
        points: dict[str, Any] = {
            name: PointArray(2 if name == "b_g2" else 1, arrays[name],
                             np.asarray(arrays[f"{name}_inf"]))
            for name in POINT_BASES}
        if vk.circuit_id != manifest["circuit_id"] or directory.name != manifest["circuit_id"]:
            raise KeyFileError(f"{directory}: circuit id in manifest, vk.json and directory differ")
        source = str(directory / "manifest.json")
        qap = FORMS.get(str(manifest.get("h_form")))
        if qap is None:
            raise KeyFileError(f"{source}: h_form {manifest.get('h_form')!r} is not one "
                               f"of {', '.join(FORMS)}")
        masks: dict[str, Any] = {
            name: np.asarray(arrays[name], dtype=bool) if name in arrays else None
            for name in DENSITY_BASES}
        key = cls(r1cs, vk, _point(manifest, "beta_g1", 1, source),
                  _point(manifest, "delta_g1", 1, source), qap=qap, **points,
                  **masks, directory=directory)
        key.check_counts(source)
        return key


def _matrix(arrays: dict[str, np.ndarray], name: str) -> Matrix:
    """Matrix ``name`` of a key directory, in the layout it was stored in."""
    indptr = np.asarray(arrays[f"r1cs_{name}_indptr"])
    indices = np.asarray(arrays[f"r1cs_{name}_indices"])
    if f"r1cs_{name}_codes" in arrays:
        return CodedMatrix(indptr, indices, np.asarray(arrays[f"r1cs_{name}_codes"]),
                           np.asarray(arrays[f"r1cs_{name}_table"]))
    return SparseMatrix(indptr, indices, np.asarray(arrays[f"r1cs_{name}_data"]))


def _read_manifest(directory: Path) -> dict[str, Any]:
    manifest_path = directory / "manifest.json"
    if not manifest_path.exists():
        raise KeyFileError(f"{manifest_path}: no proving key here (manifest.json missing)")
    try:
        manifest = json.loads(manifest_path.read_text())
    except json.JSONDecodeError as exc:
        raise KeyFileError(f"{manifest_path}: not valid JSON ({exc.msg})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != PK_FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise KeyFileError(f"{manifest_path}: format {found!r} is not {PK_FORMAT}")
    return manifest


def _check_files(files: dict[Path, str | None]) -> None:
    """Every file present and, where a digest is given, of that sha256."""
    for path in files:
        if not path.exists():
            raise KeyFileError(f"{path}: file listed in the manifest is missing")
    checked = [path for path, want in files.items() if want is not None]
    for path, got in zip(checked, _sha256_all(checked)):
        if got != files[path]:
            raise KeyFileError(f"{path}: sha256 does not match the manifest (corrupt key)")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            digest.update(chunk)  # large updates run without the GIL
    return digest.hexdigest()


def _sha256_all(paths: list[Path]) -> list[str]:
    """Each file's sha256, files on threads of their own (a 32 GiB sector's key is 56 GB
    in ~20 files: ~35 s on one core)."""
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        return list(pool.map(_sha256, paths))


def _save_array(path: Path, arr: np.ndarray) -> None:
    """``np.save``, its errors naming the file and a short write named for what it is:
    numpy reports a full disk as "N requested and M written", with no errno and no file."""
    try:
        np.save(path, np.ascontiguousarray(arr))
    except OSError as exc:
        if exc.filename:
            raise
        if exc.errno is None:
            raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (a short write: {exc})",
                          str(path)) from exc
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


class ParamsDirError(WorkerFault, ValueError):
    """The params directory takes no files: a setup would run for minutes, then fail."""


def check_params_dir(directory: Path) -> None:
    """Find out before a key setup, not after it, that its directory takes no files."""
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".proofq-writable-"):
            pass
    except OSError as exc:
        code = errno.errorcode.get(exc.errno, exc.errno) if exc.errno is not None else "?"
        reason = f"[{code}] {exc.strerror or exc}"
        raise ParamsDirError(f"the params directory (PROOFQ_PARAMS_DIR) takes no files here: "
                             f"{reason}") from None
