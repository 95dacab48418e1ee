"""The container every snarkjs/circom binary file shares (.zkey, .wtns, .r1cs, .ptau).

Layout: 4-byte magic, u32 version, u32 section count, then sections of (u32 type, u64 size,
data), all little-endian. Sections may come in any order, so they are indexed by type. The
file is memory-mapped: a section is a read-only ``uint8`` view, decoded by its reader
without copying the whole file. ``write_sections`` is the writer's side (``bench/ptau.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from snark.errors import InvalidInput


class SnarkjsFormatError(InvalidInput):
    """A snarkjs/circom file that cannot be used; the message names the file and field."""


class Sections:
    """The sections of one file by type, and little-endian readers that name the field."""

    def __init__(self, name: str, version: int, sections: dict[int, np.ndarray]) -> None:
        self.name = name
        self.version = version
        self._sections = sections

    def section(self, kind: int, what: str) -> np.ndarray:
        try:
            return self._sections[kind]
        except KeyError:
            raise SnarkjsFormatError(f"{self.name}: section {kind} ({what}) is missing") from None

    def error(self, field: str, problem: str) -> SnarkjsFormatError:
        return SnarkjsFormatError(f"{self.name}: {field}: {problem}")


def read_sections(source: str | Path | bytes, magic: bytes, versions: tuple[int, ...],
                  name: str | None = None) -> Sections:
    """Index the sections of a file (memory-mapped) or of its bytes (a witness that came
    over the wire); refuse another magic or version. ``name`` goes into error messages."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        name = name or "<bytes>"
        data = np.frombuffer(source, dtype=np.uint8)
    else:
        name = name or str(source)
        data = np.memmap(source, dtype=np.uint8, mode="r") if Path(source).stat().st_size \
            else np.zeros(0, dtype=np.uint8)
    if data.size < 12 or bytes(data[:4]) != magic:
        raise SnarkjsFormatError(f"{name}: not a {magic.decode()} file (magic "
                                 f"{bytes(data[:4])!r}, expected {magic!r})")
    version, count = (int(v) for v in data[4:12].view("<u4"))
    if version not in versions:
        raise SnarkjsFormatError(f"{name}: version {version} is not supported "
                                 f"(expected {' or '.join(map(str, versions))})")
    sections: dict[int, np.ndarray] = {}
    offset = 12
    for _ in range(count):
        if offset + 12 > data.size:
            raise SnarkjsFormatError(f"{name}: truncated section header at byte {offset}")
        kind = int(data[offset:offset + 4].view("<u4")[0])
        size = int(data[offset + 4:offset + 12].view("<u8")[0])
        start = offset + 12
        if start + size > data.size:
            raise SnarkjsFormatError(f"{name}: section {kind} claims {size} bytes, "
                                     f"{data.size - start} remain (truncated file)")
        if kind in sections:
            raise SnarkjsFormatError(f"{name}: section {kind} appears twice")
        sections[kind] = data[start:start + size]
        offset = start + size
    return Sections(name, version, sections)


def write_sections(path: str | Path, magic: bytes, version: int,
                   sections: list[tuple[int, Iterable[bytes]]]) -> None:
    """A file of ``sections`` (type, data in chunks), each chunk written as it comes and
    each section's size filled in after its data, so large sections are never held whole."""
    with open(path, "wb") as out:
        out.write(magic + np.array([version, len(sections)], dtype="<u4").tobytes())
        for kind, chunks in sections:
            header = out.tell()
            out.write(np.array([kind], dtype="<u4").tobytes() + bytes(8))
            size = sum(out.write(chunk) for chunk in chunks)
            out.seek(header + 4)
            out.write(np.array([size], dtype="<u8").tobytes())
            out.seek(0, 2)


def u32s(section: np.ndarray, start: int, count: int) -> list[int]:
    """``count`` little-endian u32 from byte ``start`` of a section."""
    return [int(v) for v in section[start:start + 4 * count].view("<u4")]


def le_int(section: np.ndarray, start: int, size: int) -> int:
    return int.from_bytes(bytes(section[start:start + size]), "little")
