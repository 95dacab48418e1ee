"""The CPU prover backend: exact object-array arithmetic plus arkworks multi-exponentiation.

Handles are 1-D object arrays of Python ints. ``prepare`` converts a key's bases into
arkworks points (object arrays, with a mask of the finite ones) and its matrices into object
arrays once, kept per key by the backend (``snark.backend.KeyStates``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snark.backend import Capability, E, G1Basis, G2Basis, KeyStates
from snark.curve import G1Point, G2Point, scalars_from_ints
from snark.domain import Domain
from snark.r1cs import sparse_matvec
from snark.fields import FR_MODULUS, limbs_to_object
from snark.keys import H_FORM_ODD, POINT_BASES, ProvingKey



@dataclass
class _Resident:
    domain: Domain
    matrices: tuple[np.ndarray, np.ndarray, np.ndarray]
    bases: dict[str, np.ndarray]   # object arrays of arkworks points
    finite: dict[str, np.ndarray]  # which bases are not the point at infinity


def _object_array(items: list) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


class CpuBackend:
    name = "cpu"

    def __init__(self) -> None:
        self._states: KeyStates[_Resident] = KeyStates()

    def _resident(self, key: ProvingKey) -> _Resident:
        resident = self._states.get(key)
        if resident is None:
            r1cs = key.r1cs
            resident = _Resident(
                Domain(key.domain_size),
                tuple(limbs_to_object(m.data) for m in (r1cs.a, r1cs.b, r1cs.c)),
                {name: _object_array(getattr(key, name).to_points()) for name in POINT_BASES},
                {name: ~np.asarray(getattr(key, name).inf) for name in POINT_BASES})
            self._states.put(key, resident)
        return resident

    def prepare(self, key: ProvingKey) -> None:
        self._resident(key)

    def load_witness(self, key: ProvingKey, witness: np.ndarray) -> np.ndarray:
        if witness.shape != (key.r1cs.num_variables, 4):
            raise ValueError(f"witness: expected shape ({key.r1cs.num_variables}, 4), "
                             f"got {witness.shape}")
        return limbs_to_object(witness)

    def evaluate_abc(self, key: ProvingKey, witness: np.ndarray) -> tuple[np.ndarray, ...]:
        resident = self._resident(key)
        n = key.domain_size
        out = []
        for matrix, data in zip((key.r1cs.a, key.r1cs.b, key.r1cs.c), resident.matrices):
            padded = np.zeros(n, dtype=object)
            padded[:matrix.rows] = sparse_matvec(matrix, witness, data)
            out.append(padded)
        return tuple(out)

    def quotient(self, key: ProvingKey, abc: tuple[np.ndarray, ...]) -> np.ndarray:
        domain = self._resident(key).domain
        if key.h_form == H_FORM_ODD:
            a, b, _ = abc
            a, b, c = (domain.odd_ntt(domain.intt(v)) for v in (a, b, a * b % FR_MODULUS))
            return (a * b - c) % FR_MODULUS
        a, b, c = (domain.coset_ntt(domain.intt(v)) for v in abc)
        h = (a * b - c) % FR_MODULUS * domain.vanishing_on_coset_inverse() % FR_MODULUS
        return domain.coset_intt(h)[: domain.n - 1]

    def _msm(self, key: ProvingKey, basis: str, scalars: np.ndarray):
        """Only the terms that count: bases at infinity (signals a matrix never uses) and
        zero scalars (circom's bits and flags) are left out before arkworks sees them."""
        resident = self._resident(key)
        points = resident.bases[basis]
        if len(scalars) != len(points):
            raise ValueError(f"{basis}: {len(scalars)} scalars for {len(points)} bases")
        group = G2Point if basis == "b_g2" else G1Point
        terms = np.flatnonzero(resident.finite[basis] & (scalars != 0))
        if not terms.size:
            return group.identity()
        return group.multiexp_unchecked(points[terms].tolist(), scalars_from_ints(scalars[terms]))

    def msm_g1(self, key: ProvingKey, basis: G1Basis, scalars: np.ndarray) -> G1Point:
        return self._msm(key, basis, scalars)

    def msm_g2(self, key: ProvingKey, basis: G2Basis, scalars: np.ndarray) -> G2Point:
        return self._msm(key, basis, scalars)

    def release(self, *handles) -> None:
        """Nothing to free: handles are ordinary arrays."""

    def evict(self, key: ProvingKey) -> None:
        self._states.pop(key)

    def extra_resident_bytes(self, key: ProvingKey) -> int:
        return 0

    def extension(self, capability: Capability[E]) -> E | None:
        return None  # no proof type has CPU steps of its own
