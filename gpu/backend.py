"""``GpuBackend``: ``snark.backend.ProverBackend`` on one CUDA device, data resident.

Everything a proof touches stays on the device between calls; handles are CuPy arrays:
the witness ``(num_variables, 4)`` in standard form (the MSMs read it as is, and
``witness[num_inputs:]`` is the aux part), A·w, B·w, C·w as Montgomery vectors of the
domain size, and H ``(n − 1, 4)`` in standard form. Per circuit, ``prepare`` makes
resident the R1CS (its data as d·R², see ``spmv.cu``), the MSM bases and the NTT tables.

All work runs on one non-blocking stream of the backend. The proving path synchronises
only that stream (the MSMs return host points); it never synchronises the device, queries
device memory or trims the memory pool. Allocation failures become ``DeviceMemoryError``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from gpu import module
from gpu.ntt import Ntt, log_size
from gpu.witness import DeviceWitness, StagedWitness
from snark.backend import DeviceMemoryError, G1Basis, G2Basis
from snark.fields import (FR_MODULUS, FR_MULTIPLICATIVE_GENERATOR, fr_to_limbs, is_canonical,
                          to_montgomery)
from snark.keys import POINT_BASES, ProvingKey
from snark.porep.witness import WitnessInputs
from snark.r1cs import SparseMatrix

THREADS = 256
#: Raw constant whose Montgomery product with d gives d·R² (the matrix data's form).
_TWICE_MONTGOMERY = fr_to_limbs([pow(2, 3 * 256, FR_MODULUS)])
_CUDA_ERROR_MEMORY_ALLOCATION = 2  # cudaErrorMemoryAllocation


@dataclass
class _Matrix:
    indptr: object   # int64 (rows + 1,)
    indices: object  # uint32 (nnz,)
    data: object     # (nnz, 4), d·R²
    rows: int


@dataclass
class _Resident:
    log_n: int
    matrices: tuple[_Matrix, _Matrix, _Matrix]
    bases: dict[str, object]  # gpu.msm.MsmBases by basis name
    z_inv: object             # (1, 4) Montgomery 1 / (g^n − 1)


def _blocks(n: int) -> tuple[int]:
    return ((n + THREADS - 1) // THREADS,)


class GpuBackend:
    name = "gpu"

    def __init__(self, device_id: int) -> None:
        import cupy

        self.device_id = device_id
        self._cupy = cupy
        with cupy.cuda.Device(device_id):
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.ntt = Ntt(device_id)
            self._spmv = module.function("spmv.cu", "spmv_csr", device_id)
            self._mul_raw = module.function("fr_ops.cu", "fr_mul_raw", device_id)
            self._pointwise = module.function("fr_ops.cu", "fr_quotient_on_coset", device_id)
            self._witness = DeviceWitness(device_id)
        self._resident: dict[str, _Resident] = {}

    @contextlib.contextmanager
    def _on_device(self):
        """Our device and stream current; out-of-memory as ``DeviceMemoryError``."""
        cupy = self._cupy
        try:
            with cupy.cuda.Device(self.device_id), self.stream:
                yield cupy
        except cupy.cuda.memory.OutOfMemoryError as exc:
            raise DeviceMemoryError(f"GPU {self.device_id}: {exc}") from exc
        except cupy.cuda.runtime.CUDARuntimeError as exc:
            if exc.status == _CUDA_ERROR_MEMORY_ALLOCATION:
                raise DeviceMemoryError(f"GPU {self.device_id}: {exc}") from exc
            raise

    # -- residency ------------------------------------------------------------------------
    def prepare(self, key: ProvingKey) -> None:
        if key.circuit_id in self._resident:
            return
        from gpu.msm import MsmBases

        r1cs = key.r1cs
        if r1cs.num_variables >= 1 << 32:
            raise ValueError(f"r1cs: {r1cs.num_variables} variables exceed 32-bit column indices")
        log_n = key.domain_size.bit_length() - 1
        n = key.domain_size
        with self._on_device() as cupy:
            matrices = tuple(self._upload_matrix(m) for m in (r1cs.a, r1cs.b, r1cs.c))
            bases = {name: MsmBases(getattr(key, name)) for name in POINT_BASES}
            self.ntt.prepare(log_n)
            g_n = pow(FR_MULTIPLICATIVE_GENERATOR, n, FR_MODULUS)
            z_inv = cupy.asarray(to_montgomery([pow(g_n - 1, -1, FR_MODULUS)], FR_MODULUS, 4))
            self.stream.synchronize()
        self._resident[key.circuit_id] = _Resident(log_n, matrices, bases, z_inv)

    def _upload_matrix(self, m: SparseMatrix) -> _Matrix:
        cupy = self._cupy
        data = cupy.asarray(np.ascontiguousarray(m.data, dtype=np.uint64))
        if m.nnz:
            self._mul_raw(_blocks(m.nnz), (THREADS,),
                          (data, cupy.asarray(_TWICE_MONTGOMERY), np.uint32(m.nnz)))
        return _Matrix(cupy.asarray(np.asarray(m.indptr, dtype=np.int64)),
                       cupy.asarray(np.asarray(m.indices, dtype=np.uint32)), data, m.rows)

    def _of(self, key: ProvingKey) -> _Resident:
        self.prepare(key)
        return self._resident[key.circuit_id]

    # -- the proof's steps ----------------------------------------------------------------
    def load_witness(self, key: ProvingKey, witness: np.ndarray):
        expected = (key.r1cs.num_variables, 4)
        if witness.shape != expected:
            raise ValueError(f"witness: expected shape {expected}, got {witness.shape}")
        witness = np.ascontiguousarray(witness, dtype=np.uint64)
        bad = np.flatnonzero(~is_canonical(witness, FR_MODULUS))
        if bad.size:
            raise ValueError(f"witness: entry {bad[0]} is not a canonical Fr element (>= r)")
        with self._on_device() as cupy:
            return cupy.asarray(witness)

    def load_porep_inputs(self, key: ProvingKey, inputs: WitnessInputs) -> StagedWitness:
        """Memory phase: the witness buffer and a partition's compact inputs (``gpu.witness``)."""
        r1cs = key.r1cs
        with self._on_device():
            return self._witness.stage(inputs, r1cs.num_inputs, r1cs.num_variables)

    def porep_witness(self, key: ProvingKey, staged: StagedWitness):
        """Compute phase: the witness handle, written by the kernel and checked."""
        if staged.witness.shape != (key.r1cs.num_variables, 4):
            raise ValueError(f"staged witness: shape {staged.witness.shape} does not fit this key")
        with self._on_device():
            witness = self._witness.run(staged, self.stream)
        self.release(staged.inputs())
        return witness

    def evaluate_abc(self, key: ProvingKey, witness):
        resident = self._of(key)
        n = 1 << resident.log_n
        if witness.shape != (key.r1cs.num_variables, 4):
            raise ValueError(f"witness handle: shape {witness.shape} does not fit this key")
        with self._on_device() as cupy:
            out = []
            for m in resident.matrices:
                v = cupy.empty((n, 4), dtype=cupy.uint64)
                self._spmv(_blocks(n), (THREADS,),
                           (m.indptr, m.indices, m.data, witness, v, np.uint32(m.rows),
                            np.uint32(n)))
                out.append(v)
            return tuple(out)

    def quotient(self, key: ProvingKey, abc):
        """intt (DIF, 1/n and the coset shift fused) → coset ntt (DIT) on a, b, c; then
        (a·b − c)/Z; then the coset intt gathering from natural order, its last pass
        scaling by g^-i/n and leaving Montgomery form (standard-form h for the MSM)."""
        resident = self._of(key)
        a, b, c = abc
        n = 1 << resident.log_n
        if log_size(a, "abc") != resident.log_n:
            raise ValueError(f"abc: length {a.shape[0]} is not the domain size {n}")
        with self._on_device() as cupy:
            for v in (a, b, c):
                self.ntt.dif(v, inverse=True, post="shift_n_inv")
                self.ntt.dit(v, v)
            self._pointwise(_blocks(n), (THREADS,), (a, b, c, resident.z_inv, np.uint32(n)))
            h = cupy.empty_like(a)
            self.ntt.dit(a, h, inverse=True, gather=True, post="unshift_n_inv_std")
            return h[: n - 1]

    def msm_g1(self, key: ProvingKey, basis: G1Basis, scalars):
        return self._msm(key, basis, scalars)

    def msm_g2(self, key: ProvingKey, basis: G2Basis, scalars):
        return self._msm(key, basis, scalars)

    def _msm(self, key: ProvingKey, basis: str, scalars):
        from gpu.msm import msm

        bases = self._of(key).bases[basis]
        if scalars.shape[0] != len(getattr(key, basis)):
            raise ValueError(f"{basis}: {scalars.shape[0]} scalars for "
                             f"{len(getattr(key, basis))} bases")
        with self._on_device():
            return msm(bases, scalars, stream=self.stream)

    def release(self, *handles) -> None:
        """Return the handles' device memory to the pool now (views free their base).

        The pool reuses memory in stream order, so work still queued on our stream that
        reads a released buffer finishes before anything new overwrites it."""
        for handle in handles:
            if isinstance(handle, (tuple, list)):
                self.release(*handle)
            elif isinstance(handle, self._cupy.ndarray):
                free = getattr(handle.data.mem, "free", None)
                if free is not None:
                    free()
