"""What the GPU backend holds for one proving key — on the device (``Resident``), and on
the host (``HostPart``: the streamed bases' pinned rows, kept while the device part comes
and goes) — and how the device state is described to another process of the same GPU (the
key keeper, ``gpu.key_keeper``).

The description is JSON: every device array as an IPC description (``gpu.ipc.export``),
the rest as numbers. Bases that stream from the host are only named in it: each process
streams them through a ring of its own (``gpu.streamed_bases``), from the host's one
shared segment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from gpu.msm import MsmBases, Plan
from gpu.streamed_bases import HostBases, StreamedBases


@dataclass
class ResidentMatrix:
    indptr: object   # int64 (rows + 1,)
    indices: object  # uint32 (nnz,)
    codes: object    # uint32 (nnz,) into table
    table: object    # (k, 4), d·R²
    rows: int
    chunk_rows: object  # uint32 (chunks,): where each of spmv.cuh's chunks starts


@dataclass
class Resident:
    log_n: int
    matrices: tuple[ResidentMatrix, ResidentMatrix, ResidentMatrix]
    bases: dict[str, MsmBases | StreamedBases]  # by basis name (streamed ones once added)
    gathers: dict[str, object]  # density-form bases: the witness entries they take
    h_factor: object          # (1, 4) the quotient's last factor, raw (its product leaves
                              # Montgomery form): coset form 1 / (g^n − 1); odd form 1
    table_bytes: int          # what the bases' window tables hold beyond the bases
    streamed: frozenset[str] = field(default_factory=frozenset)  # bases that stream
    ring: object = None       # the streamed bases' device buffers (gpu.streamed_bases.Ring)


@dataclass
class HostPart:
    """What the backend keeps of a key on the host: its streamed bases' pinned rows, by
    basis name, and whether the key's device part is transient (every basis streams, and
    ``GpuBackend.shed`` gives the device part back keeping these rows for the next
    ``prepare``, which would otherwise build them from the key again)."""

    transient: bool = False
    bases: dict[str, HostBases] = field(default_factory=dict)

    def close(self) -> None:
        """Unpin and unmap the rows (a segment is removed by the host's last holder)."""
        for rows in self.bases.values():
            rows.close()
        self.bases.clear()


_MATRIX_ARRAYS = ("indptr", "indices", "codes", "table", "chunk_rows")


def describe(resident: Resident, export: Callable[[object], dict]) -> dict:
    """The resident state as JSON, its device arrays through ``export``; streamed bases
    by name only."""
    return {
        "log_n": resident.log_n,
        "matrices": [{**{name: export(getattr(m, name)) for name in _MATRIX_ARRAYS},
                      "rows": m.rows} for m in resident.matrices],
        "bases": {name: {"group": b.group, "leading_infinity": b.leading_infinity,
                         "table": asdict(b.table) if b.table else None, "xy": export(b.xy)}
                  for name, b in resident.bases.items()
                  if name not in resident.streamed and isinstance(b, MsmBases)},
        "gathers": {name: export(a) for name, a in resident.gathers.items()},
        "h_factor": export(resident.h_factor),
        "table_bytes": resident.table_bytes,
        "streamed": sorted(resident.streamed),
    }


def from_description(description: dict, open_array: Callable[[dict], object],
                     device_id: int) -> Resident:
    """The state ``describe`` gave, its arrays opened by ``open_array`` on ``device_id``
    (the streamed bases still to be added)."""
    mat_a, mat_b, mat_c = (
        ResidentMatrix(**{name: open_array(m[name]) for name in _MATRIX_ARRAYS},
                       rows=int(m["rows"])) for m in description["matrices"])
    bases: dict[str, MsmBases | StreamedBases] = {
        name: MsmBases.on_device(open_array(b["xy"]), int(b["group"]), device_id,
                                 leading_infinity=int(b["leading_infinity"]),
                                 table=Plan(**b["table"]) if b["table"] else None)
        for name, b in description["bases"].items()}
    return Resident(int(description["log_n"]), (mat_a, mat_b, mat_c), bases,
                    {name: open_array(a) for name, a in description["gathers"].items()},
                    open_array(description["h_factor"]), int(description["table_bytes"]),
                    frozenset(description["streamed"]))
