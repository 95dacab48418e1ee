"""How a key's H query meets the prover's quotient: the QAP form (ark-groth16 makes the
same choice with its ``R1CSToQAP`` reductions). A key carries its form as an object; the
setup asks it for the H basis, the backends for where the quotient is evaluated, the key
files record its name. Nothing compares names.

- ``COSET`` (this project's setup, bellperson's and so Filecoin's keys): h is the n − 1
  coefficients of (A·B − C)/Z, found through the coset g·⟨ω⟩; the H basis is τ^i·Z(τ)/δ.
- ``ODD`` (snarkjs keys): h is A·B − C on the n odd points ψ^(2i+1) of the 2n-domain
  (ψ² = ω), with C = A∘B on the domain and no division by Z; the H basis is the odd
  Lagrange basis of the 2n-domain over δ, which divides by Z already.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from snark import native
from snark.fields import FR_MODULUS


class QapForm(ABC):
    #: the name key manifests record (``"h_form"``)
    name: str
    #: where the quotient is evaluated: the odd points of the 2n-domain (and C = A∘B, no
    #: division by Z), else the coset g·⟨ω⟩ (then back to coefficients, divided by Z)
    odd_points: bool

    @abstractmethod
    def h_len(self, n: int) -> int:
        """The H basis's points (and the quotient's scalars) on the n-domain."""

    @abstractmethod
    def h_basis_scalars(self, n: int, tau: int, delta_inv: int) -> np.ndarray:
        """The H basis's discrete logs on the n-domain for the toxic waste τ, 1/δ, as
        limbs (a development setup's)."""

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple:
        return _named, (self.name,)  # copies are the form itself: compared with ``is``


class _Coset(QapForm):
    name, odd_points = "coset", False

    def h_len(self, n: int) -> int:
        return n - 1

    def h_basis_scalars(self, n: int, tau: int, delta_inv: int) -> np.ndarray:
        z_over_delta = (pow(tau, n, FR_MODULUS) - 1) * delta_inv % FR_MODULUS
        return native.fr_powers(tau, n - 1, z_over_delta)


class _OddPoints(QapForm):
    name, odd_points = "odd", True

    def h_len(self, n: int) -> int:
        return n

    def h_basis_scalars(self, n: int, tau: int, delta_inv: int) -> np.ndarray:
        # A·B − C has degree < 2n and vanishes on the n-domain, so (A·B − C)(τ) is
        # Σ_i h_i·L'_{2i+1}(τ) over the odd points (L' the 2n-domain's Lagrange basis)
        return native.fr_mul(native.lagrange_at(2 * n, tau)[1::2], delta_inv)


COSET: QapForm = _Coset()
ODD: QapForm = _OddPoints()
#: Every form by the name key files record.
FORMS: dict[str, QapForm] = {form.name: form for form in (COSET, ODD)}


def _named(name: str) -> QapForm:
    return FORMS[name]
