"""Groth16 over BLS12-381, written once against ``snark.backend.ProverBackend``.

Proving is split at the worker runtime's lock boundaries:

    stage(key, witness, backend)      memory phase: make the key resident, upload the witness
    compute(key, staged, backend)     compute phase: A·w, B·w, C·w → H → the five MSMs
    finalize(key, parts, r, s)        no lock: blinding with r, s and the proof points

``setup`` is a development ceremony: the toxic waste (τ, α, β, γ, δ) comes from the OS RNG,
lives only in this function's locals and is never stored. It is NOT a multi-party ceremony
and must not be used for production keys.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from snark import native
from snark.backend import ProofMsmBackend, ProverBackend
from snark.curve import GT, G1Point, G2Point, PointArray, Scalar, scalars_from_ints
from snark.fields import FR_MODULUS
from snark.keys import ProvingKey, VerifyingKey
from snark.qap import COSET, QapForm
from snark.proof import Proof
from snark.r1cs import R1CS


# -- setup -------------------------------------------------------------------------------
class FixedBaseMul(Protocol):
    """Batch k·G for the generators, k as standard-form Fr limbs ``(n, 4)`` (the rule of
    ``snark.fields``); ``gpu.fixed_base.GpuFixedBase`` implements this for large keys.
    ``chunk``: the points ``setup`` hands one call (progress is reported per call)."""

    chunk: int

    def mul_g1(self, scalars: np.ndarray) -> PointArray: ...

    def mul_g2(self, scalars: np.ndarray) -> PointArray: ...


class CpuFixedBase:
    """Windowed tables of the generators in native code (``snark.native.fixed_base_mul``):
    about 16 affine additions a point, the two cores' worth of threads."""

    chunk = 1 << 16

    def mul_g1(self, scalars: np.ndarray) -> PointArray:
        return native.fixed_base_mul(1, scalars)

    def mul_g2(self, scalars: np.ndarray) -> PointArray:
        return native.fixed_base_mul(2, scalars)


#: ``progress(step, done, total)`` during a setup: ``total`` points of a basis, or None for
#: a step without a count.
SetupProgress = Callable[[str, int, "int | None"], None]

def _basis(mul: Callable[[np.ndarray], PointArray], chunk: int, scalars: np.ndarray,
           group: int, name: str, progress: SetupProgress | None) -> PointArray:
    """k·G for every row of ``scalars`` in chunks, reporting each chunk."""
    total = len(scalars)
    parts = []
    for start in range(0, total, chunk):
        parts.append(mul(scalars[start:start + chunk]))
        if progress is not None:
            progress(name, min(start + chunk, total), total)
    return parts[0] if len(parts) == 1 else PointArray.concat(parts, group)


def _random_nonzero() -> int:
    return secrets.randbelow(FR_MODULUS - 1) + 1


def setup(r1cs: R1CS, *, fixed_base: FixedBaseMul | None = None,
          qap: QapForm = COSET, density: bool = False,
          progress: SetupProgress | None = None, circuit_id: str | None = None) -> ProvingKey:
    """Generate a proving key for ``r1cs`` (development ceremony; see module docstring).
    With ``density``, the key is in bellperson's density form (``snark.keys``): A's and
    B's bases only for the variables with a term in A, in B. ``circuit_id`` names the key
    where the caller has a name for it (a Filecoin development key's file stem); else the
    circuit's hash does."""
    fixed_base = fixed_base or CpuFixedBase()
    # The circuit's sha256 (62 s at 32 GiB, one core) runs beside the rest: hashlib
    # releases the GIL while it digests.
    hashing = ThreadPoolExecutor(1)
    named = hashing.submit(lambda: circuit_id or r1cs.circuit_id())
    hashing.shutdown(wait=False)
    if progress is not None:
        progress("evaluate the QAP at tau", 0, None)
    n = r1cs.domain_size
    tau, alpha, beta, gamma, delta = (_random_nonzero() for _ in range(5))
    while pow(tau, 2 * n, FR_MODULUS) == 1:  # τ in the 2n-domain: a division by 0
        tau = _random_nonzero()
    lagrange = native.lagrange_at(n, tau, r1cs.num_constraints)
    a, b, c = (native.matvec_transposed(m, lagrange, r1cs.num_variables)
               for m in (r1cs.a, r1cs.b, r1cs.c))
    combined = native.fr_add(native.fr_add(native.fr_mul(a, beta), native.fr_mul(b, alpha)), c)
    gamma_inv, delta_inv = pow(gamma, -1, FR_MODULUS), pow(delta, -1, FR_MODULUS)
    ni = r1cs.num_inputs
    a_density, b_density = r1cs.density() if density else (None, None)
    if density:
        a, b = a[a_density], b[b_density]

    def bases_g1(name: str, limbs: np.ndarray) -> PointArray:
        return _basis(fixed_base.mul_g1, fixed_base.chunk, limbs, 1, name, progress)

    ic = bases_g1("ic", native.fr_mul(combined[:ni], gamma_inv)).g1_points()
    a_g1, b_g1 = bases_g1("a_g1", a), bases_g1("b_g1", b)
    b_g2 = _basis(fixed_base.mul_g2, fixed_base.chunk, b, 2, "b_g2", progress)
    l_g1 = bases_g1("l_g1", native.fr_mul(combined[ni:], delta_inv))
    h_g1 = bases_g1("h_g1", qap.h_basis_scalars(n, tau, delta_inv))
    g1, g2 = G1Point(), G2Point()
    alpha_g1, beta_g1, delta_g1 = (g1 * Scalar(k) for k in (alpha, beta, delta))
    beta_g2, gamma_g2, delta_g2 = (g2 * Scalar(k) for k in (beta, gamma, delta))
    if progress is not None:
        progress("hash the circuit", 0, None)
    vk = VerifyingKey(named.result(), alpha_g1, beta_g2, gamma_g2, delta_g2, ic)
    return ProvingKey(r1cs=r1cs, vk=vk, beta_g1=beta_g1, delta_g1=delta_g1, a_g1=a_g1,
                      b_g1=b_g1, b_g2=b_g2, l_g1=l_g1, h_g1=h_g1, qap=qap,
                      a_density=a_density, b_density=b_density)


# -- prove -------------------------------------------------------------------------------
@dataclass
class MsmParts:
    """The five multi-exponentiations of one proof, before blinding."""

    a_g1: G1Point
    b_g1: G1Point
    b_g2: G2Point
    l_g1: G1Point
    h_g1: G1Point


def default_backend() -> ProverBackend:
    from snark.cpu_backend import CpuBackend

    return CpuBackend()


def stage(key: ProvingKey, witness: np.ndarray, backend: ProverBackend) -> Any:
    """Memory phase: key resident (once), witness uploaded; returns the witness handle."""
    backend.prepare(key)
    return backend.load_witness(key, witness)


def compute(key: ProvingKey, witness: Any, backend: ProverBackend) -> MsmParts:
    """Compute phase: the quotient and all MSMs; frees the handles it used. a_g1, b_g1 and
    b_g2 take the whole witness: for a density key the backend picks the entries its
    bases cover (``ProvingKey.density_of``)."""
    abc = backend.evaluate_abc(key, witness)
    h = backend.quotient(key, abc)
    backend.release(abc)
    if isinstance(backend, ProofMsmBackend):
        parts = MsmParts(**backend.proof_msms(key, witness, h))
    else:
        parts = MsmParts(
            a_g1=backend.msm_g1(key, "a_g1", witness),
            b_g1=backend.msm_g1(key, "b_g1", witness),
            b_g2=backend.msm_g2(key, "b_g2", witness),
            l_g1=backend.msm_g1(key, "l_g1", witness[key.r1cs.num_inputs:]),
            h_g1=backend.msm_g1(key, "h_g1", h),
        )
    backend.release(witness, h)
    return parts


def finalize(key: ProvingKey, parts: MsmParts, r: int | None = None,
             s: int | None = None) -> Proof:
    """Blind with r, s (fresh randomness unless given, e.g. to compare backends)."""
    r = _random_nonzero() if r is None else r % FR_MODULUS
    s = _random_nonzero() if s is None else s % FR_MODULUS
    sr, ss, srs = Scalar(r), Scalar(s), Scalar(r * s % FR_MODULUS)
    a = key.vk.alpha_g1 + parts.a_g1 + key.delta_g1 * sr
    b = key.vk.beta_g2 + parts.b_g2 + key.vk.delta_g2 * ss
    b1 = key.beta_g1 + parts.b_g1 + key.delta_g1 * ss
    c = parts.l_g1 + parts.h_g1 + a * ss + b1 * sr - key.delta_g1 * srs
    return Proof(a, b, c)


def prove(key: ProvingKey, witness: np.ndarray, backend: ProverBackend | None = None,
          r: int | None = None, s: int | None = None) -> Proof:
    backend = backend or default_backend()
    return finalize(key, compute(key, stage(key, witness, backend), backend), r, s)


# -- verify ------------------------------------------------------------------------------
def verify(vk: VerifyingKey, public_inputs: list[int], proof: Proof) -> bool:
    """e(A, B) = e(α, β)·e(Σ x_i·IC_i, γ)·e(C, δ), as one multi-pairing check."""
    if len(public_inputs) != vk.num_public:
        raise ValueError(f"public inputs: expected {vk.num_public}, got {len(public_inputs)}")
    for i, x in enumerate(public_inputs):
        if not 0 <= x < FR_MODULUS:
            raise ValueError(f"public inputs[{i}]: not a canonical field element")
    acc = vk.ic[0]
    if public_inputs:
        acc = acc + G1Point.multiexp_unchecked(vk.ic[1:], scalars_from_ints(public_inputs))
    return GT.pairing_check(
        [proof.a, -vk.alpha_g1, -acc, -proof.c],
        [proof.b, vk.beta_g2, vk.gamma_g2, vk.delta_g2])
