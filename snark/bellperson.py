"""bellperson's Groth16 files: ``.vk`` and ``.params``, read by memory map, written by stream.

Layouts (``bellperson:src/groth16/{verifying_key,params}.rs``), every point in the zcash
*uncompressed* encoding — G1 x ‖ y (48 bytes each, big-endian), G2 x.c1 ‖ x.c0 ‖ y.c1 ‖ y.c0,
the top three bits of the first byte flags (compressed, infinity, sort: 0, 0 or 1, 0):

    .vk      alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2 · u32 BE count · IC points
    .params  the vk, then five sections, each a u32 BE count and its points:
             H (n − 1, coset form) · L (aux) · A · B_G1 · B_G2 (A and B without the points
             of variables of zero density: bellperson's generator drops points at infinity)

Points move between these files and ``snark.curve.PointArray`` (standard-form limbs and an
infinity mask) as whole numpy arrays: a 47 GB file is never read into Python objects.
``ParamsFile`` maps a file and finds its sections without reading the points.
"""

from __future__ import annotations

import hashlib
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from snark.errors import WorkerFault
from snark.curve import G1Point, G2Point, PointArray, point_from_xy
from snark.fields import FQ_BYTES, FQ_MODULUS, ints_to_limbs
from snark.files import atomic_path
from snark.keys import ProvingKey, VerifyingKey
from snark.qap import COSET
from snark.r1cs import R1CS

G1_BYTES = 2 * FQ_BYTES
G2_BYTES = 4 * FQ_BYTES
_INFINITY_FLAG, _COMPRESSED_FLAG, _SORT_FLAG = 0x40, 0x80, 0x20
SECTIONS = ("h", "l", "a", "b_g1", "b_g2")
VK_POINTS = (("alpha_g1", 1), ("beta_g1", 1), ("beta_g2", 2), ("gamma_g2", 2),
             ("delta_g1", 1), ("delta_g2", 2))
#: Points per chunk when a section is converted or written.
CHUNK = 1 << 18


class BellpersonFormatError(WorkerFault, ValueError):
    """A .vk or .params file that is not bellperson's layout; the message says where."""


# -- points ------------------------------------------------------------------------------
def encode_points(points: PointArray) -> np.ndarray:
    """``(n, 96)`` or ``(n, 192)`` uint8: the zcash uncompressed encoding of every point."""
    n = len(points)
    if points.group == 1:
        coords = points.xy.reshape(n, 2, 6)
    else:  # ((x.c0, x.c1), (y.c0, y.c1)) → x.c1, x.c0, y.c1, y.c0
        coords = points.xy.reshape(n, 2, 2, 6)[:, :, ::-1].reshape(n, 4, 6)
    raw = np.ascontiguousarray(coords, dtype="<u8").view(np.uint8).reshape(n, -1, FQ_BYTES)
    out = np.ascontiguousarray(raw[:, :, ::-1]).reshape(n, -1)
    out[points.inf] = 0
    out[points.inf, 0] = _INFINITY_FLAG
    return out


def decode_points(raw: np.ndarray, group: int, where: str) -> PointArray:
    """The inverse of ``encode_points``, refusing compressed or malformed flags and
    coordinates not below q (on-curve checks are ``check_points``'s)."""
    size = G1_BYTES if group == 1 else G2_BYTES
    raw = np.asarray(raw, dtype=np.uint8).reshape(-1, size)
    n = raw.shape[0]
    flags = raw[:, 0] & 0xE0
    if np.any(flags & _COMPRESSED_FLAG):
        bad = int(np.flatnonzero(flags & _COMPRESSED_FLAG)[0])
        raise BellpersonFormatError(f"{where}[{bad}]: a compressed point where bellperson "
                                    "writes uncompressed ones")
    if np.any(flags & _SORT_FLAG):
        bad = int(np.flatnonzero(flags & _SORT_FLAG)[0])
        raise BellpersonFormatError(f"{where}[{bad}]: the sort flag is set on an uncompressed "
                                    "point")
    inf = (flags & _INFINITY_FLAG) != 0
    body = raw.copy()
    body[:, 0] &= 0x1F
    if np.any(body[inf].any(axis=1)):
        bad = int(np.flatnonzero(inf & body.any(axis=1))[0])
        raise BellpersonFormatError(f"{where}[{bad}]: an infinity flag with coordinates set")
    coords = np.ascontiguousarray(body.reshape(n, -1, FQ_BYTES)[:, :, ::-1]).view("<u8")
    coords = coords.reshape(n, -1, 6).astype(np.uint64)
    modulus = ints_to_limbs([FQ_MODULUS], 6)[0]
    if not np.all(_below(coords, modulus)):
        bad = int(np.flatnonzero(~_below(coords, modulus).all(axis=1))[0])
        raise BellpersonFormatError(f"{where}[{bad}]: a coordinate is not below q")
    if group == 1:
        xy = coords.reshape(n, 2, 6)
    else:
        xy = coords.reshape(n, 2, 2, 6)[:, :, ::-1]
    return PointArray(group, np.ascontiguousarray(xy), inf)


def _below(limbs: np.ndarray, modulus: np.ndarray) -> np.ndarray:
    less = np.zeros(limbs.shape[:-1], dtype=bool)
    equal = np.ones(limbs.shape[:-1], dtype=bool)
    for i in reversed(range(limbs.shape[-1])):
        less |= equal & (limbs[..., i] < modulus[i])
        equal &= limbs[..., i] == modulus[i]
    return less


def check_points(points: PointArray, where: str) -> None:
    """Every finite point on the curve and in the prime-order subgroup (arkworks, one
    point at a time: for keys made elsewhere and not known by digest)."""
    cls_ = G1Point if points.group == 1 else G2Point
    for i in np.flatnonzero(~points.inf):
        raw = np.ascontiguousarray(points.xy[i], dtype="<u8").tobytes()
        try:
            cls_.from_xy_bytes_le(raw)
        except ValueError:
            raise BellpersonFormatError(f"{where}[{int(i)}]: not a point of the prime-order "
                                        "subgroup") from None


def _single(point: G1Point | G2Point) -> np.ndarray:
    return encode_points(PointArray.from_points([point]))[0]


# -- the verifying key --------------------------------------------------------------------
@dataclass
class BellpersonVk:
    alpha_g1: G1Point
    beta_g1: G1Point
    beta_g2: G2Point
    gamma_g2: G2Point
    delta_g1: G1Point
    delta_g2: G2Point
    ic: list[G1Point]

    def to_bytes(self) -> bytes:
        parts = [_single(getattr(self, name)).tobytes() for name, _ in VK_POINTS]
        parts.append(struct.pack(">I", len(self.ic)))
        parts.append(encode_points(PointArray.from_points(self.ic)).tobytes())
        return b"".join(parts)

    @classmethod
    def from_buffer(cls, data, where: str, offset: int = 0) -> tuple["BellpersonVk", int]:
        """The vk at ``offset`` of ``data`` and the offset after it."""
        points: dict[str, Any] = {}  # by VK_POINTS' names and groups
        for name, group in VK_POINTS:
            size = G1_BYTES if group == 1 else G2_BYTES
            raw = _take(data, offset, size, f"{where}: {name}")
            decoded = decode_points(np.frombuffer(raw, np.uint8), group, f"{where}: {name}")
            if decoded.inf[0]:
                raise BellpersonFormatError(f"{where}: {name} is the point at infinity")
            check_points(decoded, f"{where}: {name}")
            points[name] = point_from_xy(decoded.xy[0], group)
            offset += size
        count, offset = _count(data, offset, f"{where}: ic")
        raw = _take(data, offset, count * G1_BYTES, f"{where}: ic ({count} points)")
        ic = decode_points(np.frombuffer(raw, np.uint8), 1, f"{where}: ic")
        check_points(ic, f"{where}: ic")
        vk = cls(ic=[point_from_xy(xy, 1) for xy in ic.xy], **points)
        return vk, offset + count * G1_BYTES


def _take(data, offset: int, size: int, where: str):
    if offset + size > len(data):
        raise BellpersonFormatError(f"{where}: the file ends {offset + size - len(data)} "
                                    "bytes too early")
    return data[offset:offset + size]


def _count(data, offset: int, where: str) -> tuple[int, int]:
    raw = _take(data, offset, 4, f"{where} count")
    return struct.unpack(">I", raw)[0], offset + 4


def read_vk(path: Path) -> BellpersonVk:
    data = Path(path).read_bytes()
    vk, end = BellpersonVk.from_buffer(data, str(path))
    if end != len(data):
        raise BellpersonFormatError(f"{path}: {len(data) - end} bytes after the verifying key")
    return vk


# -- the parameters -----------------------------------------------------------------------
@dataclass
class Section:
    name: str
    group: int
    count: int
    offset: int

    @property
    def point_bytes(self) -> int:
        return G1_BYTES if self.group == 1 else G2_BYTES


class ParamsFile:
    """A memory-mapped ``.params``: the vk decoded, the five sections located."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        with open(self.path, "rb") as handle:
            self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        where = str(self.path)
        self.vk, offset = BellpersonVk.from_buffer(self._map, where)
        self.sections: dict[str, Section] = {}
        for name in SECTIONS:
            group = 2 if name == "b_g2" else 1
            count, offset = _count(self._map, offset, f"{where}: {name}")
            section = Section(name, group, count, offset)
            offset += count * section.point_bytes
            if offset > len(self._map):
                raise BellpersonFormatError(f"{where}: {name} ({count} points) runs past the "
                                            "end of the file")
            self.sections[name] = section
        if offset != len(self._map):
            raise BellpersonFormatError(f"{where}: {len(self._map) - offset} bytes after B_G2")

    def counts(self) -> dict[str, int]:
        return {name: s.count for name, s in self.sections.items()}

    def points(self, name: str, start: int = 0, stop: int | None = None) -> PointArray:
        """Points ``start:stop`` of a section, decoded (a view of the map until then)."""
        section = self.sections[name]
        stop = section.count if stop is None else min(stop, section.count)
        size = section.point_bytes
        raw = np.frombuffer(self._map, np.uint8, count=(stop - start) * size,
                            offset=section.offset + start * size)
        return decode_points(raw, section.group, f"{self.path}: {name}")

    def close(self) -> None:
        self._map.close()


def write_params(out: BinaryIO, vk: BellpersonVk, sections: dict[str, PointArray]) -> None:
    """A .params file from its vk and its five sections (A and B already in density form)."""
    out.write(vk.to_bytes())
    for name in SECTIONS:
        points = sections[name]
        if points.inf.any() and name != "h":
            raise BellpersonFormatError(f"{name}: bellperson's keys hold no point at infinity "
                                        f"here (index {int(np.flatnonzero(points.inf)[0])})")
        out.write(struct.pack(">I", len(points)))
        for start in range(0, len(points), CHUNK):
            out.write(encode_points(points[start:start + CHUNK]).tobytes())


def digest(path: Path, chunk: int = 1 << 24) -> str:
    """rust-fil-proofs' parameter digest: the first 32 hex digits of the file's blake2b-512."""
    h = hashlib.blake2b(digest_size=64)
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            h.update(block)
    return h.hexdigest()[:32]


# -- proving keys ---------------------------------------------------------------------------
def write_key(key: ProvingKey, params_path: Path, vk_path: Path) -> None:
    """A density-form, coset-H proving key as bellperson's ``.params`` and ``.vk``."""
    if key.a_density is None or key.b_density is None:
        raise BellpersonFormatError("bellperson's keys are in density form: make the key with "
                                    "setup(density=True)")
    if key.qap is not COSET:
        raise BellpersonFormatError(f"bellperson's H query is the coset form, not {key.qap}")
    with atomic_path(Path(params_path)) as tmp, open(tmp, "wb") as out:
        write_params(out, _bellperson_vk(key), {"h": key.h_g1, "l": key.l_g1, "a": key.a_g1,
                                                "b_g1": key.b_g1, "b_g2": key.b_g2})
    write_vk(key, vk_path)


def write_vk(key: ProvingKey, vk_path: Path) -> None:
    """The key's verifying key as bellperson's ``.vk`` alone."""
    with atomic_path(Path(vk_path)) as tmp:
        Path(tmp).write_bytes(_bellperson_vk(key).to_bytes())


def _bellperson_vk(key: ProvingKey) -> BellpersonVk:
    return BellpersonVk(key.vk.alpha_g1, key.beta_g1, key.vk.beta_g2, key.vk.gamma_g2,
                        key.delta_g1, key.vk.delta_g2, list(key.vk.ic))


def _section(params: ParamsFile, name: str) -> PointArray:
    """A whole section, decoded chunk by chunk into arrays made once."""
    section = params.sections[name]
    shape = (section.count, 2, 6) if section.group == 1 else (section.count, 2, 2, 6)
    xy = np.empty(shape, dtype=np.uint64)
    inf = np.empty(section.count, dtype=bool)
    for start in range(0, section.count, CHUNK):
        chunk = params.points(name, start, start + CHUNK)
        xy[start:start + len(chunk)] = chunk.xy
        inf[start:start + len(chunk)] = chunk.inf
    return PointArray(section.group, xy, inf)


def read_key(params: ParamsFile, r1cs: R1CS, circuit_id: str) -> ProvingKey:
    """The proving key of ``r1cs`` from a ``.params`` file, its counts checked against the
    circuit (H: domain − 1, L: aux, A and B: the densities' popcounts, IC: inputs)."""
    a_density, b_density = r1cs.density()
    expected = {"h": r1cs.domain_size - 1, "l": r1cs.num_aux,
                "a": int(a_density.sum()), "b_g1": int(b_density.sum()),
                "b_g2": int(b_density.sum())}
    for name, count in params.counts().items():
        if count != expected[name]:
            raise BellpersonFormatError(f"{params.path}: {name} has {count} points, the circuit "
                                        f"needs {expected[name]}: a key for another circuit")
    vk = params.vk
    if len(vk.ic) != r1cs.num_inputs:
        raise BellpersonFormatError(f"{params.path}: the verifying key has {len(vk.ic)} IC "
                                    f"points, the circuit {r1cs.num_inputs} inputs")
    sections = {name: _section(params, name) for name in SECTIONS}
    for name in ("l", "a", "b_g1", "b_g2"):
        if sections[name].inf.any():
            raise BellpersonFormatError(f"{params.path}: {name} holds the point at infinity")
    key = ProvingKey(r1cs, verifying_key(vk, circuit_id), vk.beta_g1, vk.delta_g1,
                     a_g1=sections["a"], b_g1=sections["b_g1"], b_g2=sections["b_g2"],
                     l_g1=sections["l"], h_g1=sections["h"], qap=COSET,
                     a_density=a_density, b_density=b_density)
    key.check_counts(str(params.path))
    return key


def verifying_key(vk: BellpersonVk, circuit_id: str) -> VerifyingKey:
    return VerifyingKey(circuit_id, vk.alpha_g1, vk.beta_g2, vk.gamma_g2, vk.delta_g2,
                        list(vk.ic))
