"""The CPU prover backend, on the native library (``snark.native``).

Handles are standard-form Fr limb arrays ``(rows, 4)``: the witness, A·w, B·w, C·w
(zero-padded to the domain), H. ``prepare`` converts a key's bases once to the library's
form (``native.Bases``, kept per key by the backend: ``snark.backend.KeyStates``) and, for
a density key (``snark.keys``), the witness rows that a_g1, b_g1 and b_g2 pair with; the
MSMs gather those rows natively.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark import native
from snark.backend import Capability, E, G1Basis, G2Basis, KeyStates
from snark.curve import G1Point, G2Point
from snark.fields import FR_MODULUS, is_canonical
from snark.keys import POINT_BASES, ProvingKey


@dataclass
class _Resident:
    bases: dict[str, native.Bases]
    rows: dict[str, np.ndarray]  # witness rows of a density key's bases, by basis


class CpuBackend:
    name = "cpu"

    def __init__(self) -> None:
        self._states: KeyStates[_Resident] = KeyStates()

    def _resident(self, key: ProvingKey) -> _Resident:
        resident = self._states.get(key)
        if resident is None:
            bases = {name: native.Bases.from_points(getattr(key, name)) for name in POINT_BASES}
            masks = {name: key.density_of(name) for name in POINT_BASES}
            rows = {name: np.flatnonzero(mask) for name, mask in masks.items()
                    if mask is not None}
            resident = _Resident(bases, rows)
            self._states.put(key, resident)
        return resident

    def prepare(self, key: ProvingKey) -> None:
        self._resident(key)

    def load_witness(self, key: ProvingKey, witness: np.ndarray) -> np.ndarray:
        expected = (key.r1cs.num_variables, 4)
        if witness.shape != expected:
            raise ValueError(f"witness: expected shape {expected}, got {witness.shape}")
        witness = np.ascontiguousarray(witness, dtype=np.uint64)
        bad = np.flatnonzero(~is_canonical(witness, FR_MODULUS))
        if bad.size:
            raise ValueError(f"witness: entry {bad[0]} is not a canonical Fr element (>= r)")
        return witness

    def evaluate_abc(self, key: ProvingKey, witness: np.ndarray) -> tuple[np.ndarray, ...]:
        n = key.domain_size
        out = []
        for matrix in (key.r1cs.a, key.r1cs.b, key.r1cs.c):
            padded = np.zeros((n, 4), dtype=np.uint64)
            padded[:matrix.rows] = native.matvec(matrix, witness)
            out.append(padded)
        return tuple(out)

    def quotient(self, key: ProvingKey, abc: tuple[np.ndarray, ...]) -> np.ndarray:
        return native.quotient(*abc, odd=key.qap.odd_points)

    def _msm(self, key: ProvingKey, basis: str, scalars: np.ndarray):
        resident = self._resident(key)
        rows = resident.rows.get(basis)
        if rows is not None and scalars.shape[0] != key.r1cs.num_variables:
            raise ValueError(f"{basis}: a density key's basis takes the whole witness "
                             f"({key.r1cs.num_variables} rows), got {scalars.shape[0]}")
        return native.msm(resident.bases[basis], scalars, rows)

    def msm_g1(self, key: ProvingKey, basis: G1Basis, scalars: np.ndarray) -> G1Point:
        return self._msm(key, basis, scalars)

    def msm_g2(self, key: ProvingKey, basis: G2Basis, scalars: np.ndarray) -> G2Point:
        return self._msm(key, basis, scalars)

    def release(self, *handles) -> None:
        """Nothing to free: handles are ordinary arrays."""

    def evict(self, key: ProvingKey) -> None:
        self._states.pop(key)

    def mark_transient(self, key: ProvingKey) -> None:
        """Nothing to choose: every basis is in host memory already."""

    def shed(self, key: ProvingKey) -> None:
        """Nothing to give back: the converted bases are host memory, the part a transient
        key keeps."""

    def extra_resident_bytes(self, key: ProvingKey) -> int:
        return 0

    def shared_name(self, key: ProvingKey) -> str | None:
        return None

    def cached_bytes(self) -> int:
        return 0

    def return_cached(self) -> None:
        """Nothing is cached."""

    def extension(self, capability: Capability[E]) -> E | None:
        return None  # no proof type has CPU steps of its own
