"""``GpuBackend``: ``snark.backend.ProverBackend`` on one CUDA device, data resident.

Everything a proof touches stays on the device between calls; handles are CuPy arrays:
the witness ``(num_variables, 4)`` in standard form (the MSMs read it as is, and
``witness[num_inputs:]`` is the aux part), A·w, B·w, C·w as Montgomery vectors of the
domain size, and H in standard form: ``(n − 1, 4)`` for the coset H form, ``(n, 4)`` for the
odd one (``snark.keys``). Per circuit, ``prepare`` makes
resident the R1CS (coded, its coefficient table as d·R², see ``spmv.cu``), the MSM bases,
the witness entries a density-form key's A and B bases take, and the NTT tables.

Bases get MSM window tables (``gpu.msm``: ~13× their memory, ~20% fewer additions at
2^20) while they fit ``table_budget_bytes``, the backend's allowance per process across all
its resident keys (None: an eighth of the device's memory, so four workers sharing a GPU
leave half of it to partitions): b_g2 first (a G2 addition costs ~3.5 G1 ones for 2× the
bytes), then the G1 bases, largest first; a key made resident later gets what the others
left. A table the device refuses falls back to the plain bases; ``extra_resident_bytes``
tells the VRAM ledger what the tables hold.

Bases stay resident while the key fits ``vram_budget_bytes`` (the ledger's budget; None:
always resident): where it does not, the largest bases stream from pinned host memory
shared by the host's processes (``gpu.streamed_bases``), through a ring of device buffers
the ledger is told of, and get no tables; a basis the device refuses streams too. A key
marked transient (``mark_transient``) streams every basis whatever the budget, so that its
device part is only its matrices, gathers and the ring.

A key's state has two parts: on the device (``gpu.resident.Resident``: matrices, resident
bases and tables, gathers, the ring) and on the host (``gpu.resident.HostPart``: the
streamed bases' pinned rows, the slow part to make: built from the key, 60 GB for a 32 GiB
WindowPoSt key). ``shed`` gives the device part back and keeps the host part for the next
``prepare``; ``evict`` gives both back (``workers.key_residency`` decides when each
happens). Both hand the device memory back to the device.

All work runs on one non-blocking stream of the backend, except the G2 MSM of
``proof_msms``, which runs on a second one beside the G1 MSMs (ordered after the witness's
digit sort by an event). The proving path synchronises only those streams (the MSMs
return host points); it never synchronises the device, queries device memory or trims the
memory pool. Allocation failures become ``DeviceMemoryError``.

This is the Groth16 core and knows no proof type; a type's device steps (a witness made on
the device) are an extension composed with it, in the module its plug-in record names
(``gpu.extensions`` makes them) when the backend starts (their kernels compile then, like
the core's), and returned by ``extension``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging

import numpy as np

from gpu import extensions, module, spmv_plan
from gpu.msm import TUNING, MsmBases, MsmTuning, msm, msm_many, table_plan
from gpu.ntt import Ntt, log_size
from gpu.resident import HostPart, Resident, ResidentMatrix
from gpu.shared_keys import SharedKeys
from gpu.spmv_plan import matrix_bytes
from gpu.streamed_bases import (RING_BUFFER_BYTES, RING_BUFFERS, HostBases, StreamedBases,
                                device_ring, stream_choice)
from snark.backend import (Capability, DeviceLost, DeviceMemoryError, E, G1Basis, G2Basis,
                           KeyStates)
from snark.fields import (FR_MODULUS, FR_MULTIPLICATIVE_GENERATOR, fr_to_limbs, is_canonical)
from snark.curve import PointArray
from snark.keys import POINT_BASES, ProvingKey
from snark.r1cs import CodedMatrix, SparseMatrix

log = logging.getLogger(__name__)

THREADS = 256
#: The default table allowance of a process is the device's memory over this.
TABLE_SHARE = 8
#: Raw constant whose Montgomery product with d gives d·R² (the matrix data's form).
_TWICE_MONTGOMERY = fr_to_limbs([pow(2, 3 * 256, FR_MODULUS)])
_CUDA_ERROR_MEMORY_ALLOCATION = 2  # cudaErrorMemoryAllocation
#: Errors after which a CUDA context takes no more work (the same numbers in the runtime
#: and the driver API): uncorrectable ECC, illegal address, launch timeout, hardware stack
#: error, illegal instruction, misaligned address, invalid address space, invalid PC,
#: launch failure, device-side assert, a destroyed context.
_CONTEXT_LOST = frozenset({214, 700, 702, 709, 710, 714, 715, 716, 717, 718, 719})


def _blocks(n: int) -> tuple[int]:
    return ((n + THREADS - 1) // THREADS,)


def _leading_infinity(key: ProvingKey, name: str) -> int:
    # l_g1 behind num_inputs infinities: its MSM over the whole witness shares the
    # witness's digit sort (proof_msms)
    return key.r1cs.num_inputs if name == "l_g1" else 0


def table_choice(key: ProvingKey, budget_bytes: int,
                 tuning: MsmTuning = TUNING) -> dict[str, int]:
    """``{basis: table bytes}`` of the bases that get window tables within ``budget_bytes``
    (b_g2 first, then the G1 bases by size, each taken while it still fits)."""
    order = sorted(POINT_BASES, key=lambda name: (name != "b_g2", -len(getattr(key, name))))
    chosen, left = {}, budget_bytes
    for name in order:
        points: PointArray = getattr(key, name)
        lead = _leading_infinity(key, name)
        extra = (MsmBases.nbytes(points, lead, table_plan(lead + len(points), tuning=tuning))
                 - MsmBases.nbytes(points, lead))
        if len(points) and extra <= left:
            chosen[name], left = extra, left - extra
    return chosen


def residency_plan(key: ProvingKey, vram_budget_bytes: int | None, tables_left: int,
                   ring_bytes: int, tuning: MsmTuning = TUNING, *,
                   transient: bool = False) -> tuple[set[str], dict[str, int]]:
    """``(bases streamed, {basis: table bytes})``: the key's bases and matrices within
    ``vram_budget_bytes`` (None: no limit), the largest bases streamed through a ring of
    ``ring_bytes`` where they do not fit; tables within ``tables_left`` (and what the budget
    leaves) only when nothing streams. A ``transient`` key streams every basis: what it
    leaves on the device between partitions is its pinned host rows alone."""
    if transient:
        return set(POINT_BASES), {}
    sizes = {name: MsmBases.nbytes(getattr(key, name), _leading_infinity(key, name))
             for name in POINT_BASES}
    if vram_budget_bytes is None:
        return set(), table_choice(key, tables_left, tuning)
    left = vram_budget_bytes - sum(matrix_bytes(m) for m in (key.r1cs.a, key.r1cs.b, key.r1cs.c))
    if sum(sizes.values()) <= left:
        return set(), table_choice(key, min(tables_left, left - sum(sizes.values())), tuning)
    return stream_choice(sizes, left - ring_bytes), {}


def extra_bytes(key: ProvingKey, streamed: set[str], table_bytes: int, ring_bytes: int) -> int:
    """What the key holds on the device beyond ``workers.ledger.key_bytes`` (its bases and
    matrices): the tables, and the ring less the bases that stream instead (negative when
    streaming saves more than the ring takes)."""
    return (table_bytes + (ring_bytes if streamed else 0)
            - sum(getattr(key, name).xy.nbytes for name in streamed))


class GpuBackend:
    name = "gpu"

    def __init__(self, device_id: int, table_budget_bytes: int | None = 0, *,
                 device_steps: bool = True, msm_tuning: MsmTuning = TUNING,
                 vram_budget_bytes: int | None = None,
                 ring_buffer_bytes: int = RING_BUFFER_BYTES, share_keys: bool = False) -> None:
        import cupy

        from gpu import device

        self.device_id = device_id
        self.msm_tuning = msm_tuning
        if table_budget_bytes is None:
            table_budget_bytes = device.total_memory(device_id) // TABLE_SHARE
        self.table_budget_bytes = table_budget_bytes
        self.vram_budget_bytes = vram_budget_bytes
        self.ring_buffer_bytes = ring_buffer_bytes
        self._cupy = cupy
        #: keys loaded from a directory are held through the GPU's keeper: one device copy
        self.shared_keys = SharedKeys(device_id, device.uuid(device_id),
                                      self.shared_settings()) if share_keys else None
        # Two keys of one circuit (another setup, the other H form) never share bases; nor
        # do two backends that table them differently: the state is this backend's.
        self._states: KeyStates[Resident] = KeyStates()  # the device parts
        self._hosts: KeyStates[HostPart] = KeyStates()  # the host parts
        with cupy.cuda.Device(device_id):
            self.stream = cupy.cuda.Stream(non_blocking=True)
            # the G2 MSM's stream, and a second one for the G1 MSMs (proof_msms)
            self.g2_stream = cupy.cuda.Stream(non_blocking=True)
            self.g1_streams = (cupy.cuda.Stream(non_blocking=True),)
            self.ntt = Ntt(device_id)
            self._spmv_chunks = module.function("spmv.cu", "spmv_chunks", device_id)
            self._spmv_fixups = module.function("spmv.cu", "spmv_fixups", device_id)
            self._mul_raw = module.function("fr_ops.cu", "fr_mul_raw", device_id)
            self._quotient_odd = module.function("fr_ops.cu", "fr_quotient_odd", device_id)
            self._quotient_coefficients = module.function("fr_ops.cu", "fr_quotient_coefficients",
                                                          device_id)
            self._mul_pointwise = module.function("fr_ops.cu", "fr_mul_pointwise", device_id)
        self._extensions = extensions.make_all(self) if device_steps else {}

    def extension(self, capability: Capability[E]) -> E | None:
        return self._extensions.get(capability.name)

    def shared_settings(self) -> dict:
        """What decides a key's device state here (tables, streaming): a keeper builds
        keys only for backends that agree on it (``gpu.key_keeper``)."""
        return {"table_budget_bytes": self.table_budget_bytes,
                "vram_budget_bytes": self.vram_budget_bytes,
                "ring_buffer_bytes": self.ring_buffer_bytes,
                "msm_tuning": dataclasses.asdict(self.msm_tuning)}

    @contextlib.contextmanager
    def on_device(self):
        """Our device and stream current; out-of-memory as ``DeviceMemoryError`` (the
        context every call runs in, extensions' included)."""
        cupy = self._cupy
        try:
            with cupy.cuda.Device(self.device_id), self.stream:
                yield cupy
        except cupy.cuda.memory.OutOfMemoryError as exc:
            raise DeviceMemoryError(f"GPU {self.device_id}: {exc}") from exc
        except (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError) as exc:
            if exc.status == _CUDA_ERROR_MEMORY_ALLOCATION:
                raise DeviceMemoryError(f"GPU {self.device_id}: {exc}") from exc
            if exc.status in _CONTEXT_LOST:
                raise DeviceLost(f"GPU {self.device_id}: {exc} (this process's CUDA context "
                                 f"is lost)") from exc
            raise

    # -- residency ------------------------------------------------------------------------
    def prepare(self, key: ProvingKey) -> None:
        if self.shared_keys is not None and self.shared_keys.keeper_gone():
            self._let_go_of_dead_keeper(self.shared_keys)
        if self._states.get(key) is not None:
            return
        shared = self.shared_name(key) is not None
        resident = self.shared_keys.hold(key) if shared else self.build_resident(key)
        try:
            with self.on_device():
                self.ntt.prepare(resident.log_n)
                self._add_streamed(key, resident)
                self.stream.synchronize()
        except BaseException:
            del resident
            if shared:
                self.shared_keys.release(key)  # held for nothing: the keeper may free it
            raise
        self.keep(key, resident)

    def build_resident(self, key: ProvingKey) -> Resident:
        """The key's device state: R1CS, resident bases (and their tables), gathers and the
        quotient's factor; the bases that stream are only named (``_add_streamed``)."""
        r1cs = key.r1cs
        if r1cs.num_variables >= 1 << 32:
            raise ValueError(f"r1cs: {r1cs.num_variables} variables exceed 32-bit column indices")
        n = key.domain_size
        with self.on_device() as cupy:
            matrices = tuple(self._upload_matrix(m) for m in (r1cs.a, r1cs.b, r1cs.c))
            gathers = {name: cupy.asarray(np.flatnonzero(key.density_of(name)))
                       for name in ("a_g1", "b_g1", "b_g2") if key.density_of(name) is not None}
            streamed, tables = self._plan(key)
            bases = {}
            for name in POINT_BASES:
                if name not in streamed:
                    try:
                        bases[name] = self._resident_bases(
                            getattr(key, name), _leading_infinity(key, name), name in tables)
                    except DeviceMemoryError:
                        streamed = streamed | {name}  # the device is fuller than the budget
            if key.qap.odd_points:
                h_factor = cupy.asarray(fr_to_limbs([1]))
            else:
                g_n = pow(FR_MULTIPLICATIVE_GENERATOR, n, FR_MODULUS)
                z_inv = pow(g_n - 1, -1, FR_MODULUS)
                h_factor = cupy.asarray(fr_to_limbs([z_inv]))
            self.stream.synchronize()
        table_bytes = sum(b.xy.nbytes - MsmBases.nbytes(getattr(key, name), b.leading_infinity)
                          for name, b in bases.items())
        return Resident(key.domain_size.bit_length() - 1, matrices, bases, gathers, h_factor,
                        table_bytes, frozenset(streamed))

    def keep(self, key: ProvingKey, resident: Resident) -> None:
        """Hold ``resident`` (from ``build_resident``) for ``key`` as this backend's state
        (the keeper's keys: their tables share its allowance)."""
        self._states.put(key, resident)

    def forget(self, key: ProvingKey) -> None:
        """Drop ``key``'s state; arrays of their own allocation go back to the device."""
        self._states.pop(key)

    def _add_streamed(self, key: ProvingKey, resident: Resident) -> None:
        """The streamed bases: the key's pinned host rows (built for its first residency,
        kept by ``shed``) through this residency's ring (made for the first of them)."""
        if not resident.streamed:
            return
        host = self._host_part(key)
        for name in sorted(resident.streamed):
            if resident.ring is None:
                resident.ring = device_ring(self.device_id, RING_BUFFERS, self.ring_buffer_bytes)
            rows = host.bases.get(name)
            if rows is None:
                rows = host.bases[name] = HostBases(getattr(key, name),
                                                    _leading_infinity(key, name))
            resident.bases[name] = StreamedBases(rows, resident.ring, self.device_id)

    def mark_transient(self, key: ProvingKey) -> None:
        """``key``'s device part is transient (``snark.backend.ProverBackend``): every basis
        streams from pinned host rows whatever the budget, so that ``shed`` leaves only
        those rows behind. Such a key is never held through the GPU's keeper
        (``shared_name`` is None): the keeper keeps one device copy of a key that stays for
        all the GPU's processes, while a transient key's device part lives for a partition
        and its bulk, the rows, is one copy per host already."""
        self._host_part(key).transient = True

    def _host_part(self, key: ProvingKey) -> HostPart:
        return self._hosts.get(key) or self._hosts.put(key, HostPart())

    def _transient(self, key: ProvingKey) -> bool:
        host = self._hosts.get(key)
        return host is not None and host.transient

    def shed(self, key: ProvingKey) -> None:
        """Drop the key's device part (matrices, resident bases and tables, gathers, the
        ring) and give the memory back to the device; its host part stays for the next
        ``prepare``. Called where no kernel of this process reads the key any more and no
        other process runs kernels (the end of a compute phase, the compute lock held: as
        ``return_cached``), or between partitions; a shared key's copy goes when the last
        process of the GPU lets it go."""
        if self._states.pop(key) is None:
            return
        if self.shared_keys is not None and self.shared_keys.holds(key):
            self.shared_keys.release(key)
        self.return_cached()

    def evict(self, key: ProvingKey) -> None:
        """``shed`` the key and let go of its host part too (its segments unpinned and
        unmapped: removed by the host's last holder), so that a returned reservation is
        memory another process can have (off the proving path: between partitions, under
        the memory lock)."""
        self.shed(key)
        host = self._hosts.pop(key)
        if host is not None:
            host.close()

    def _let_go_of_dead_keeper(self, shared: SharedKeys) -> None:
        """The GPU's keeper died (or exited): drop this process's state of every key held
        from it and close what it opened of the keeper's copies, so that their memory goes
        back to the device before a new keeper loads the key again (once, for every process
        of the GPU). Done here, at a partition's memory phase: no kernel of this process
        can be reading those arrays now."""
        for key in [key for key in self._states.keys() if shared.holds(key)]:
            self._states.pop(key)  # its host part (streamed rows) serves the next hold
        count = shared.let_go_of_dead_keeper()
        log.warning("GPU %d: the key keeper at %s is gone; let go of this process's view of "
                    "%d of its keys (a new keeper loads them again)", self.device_id,
                    shared.path, count)

    def shared_name(self, key: ProvingKey) -> str | None:
        """The name every process of this GPU holds ``key``'s one device copy by, or None
        where this process holds a copy of its own (a key held in memory, a transient one)."""
        if self.shared_keys is None or key.directory is None or self._transient(key):
            return None
        return self.shared_keys.name(key)

    def _tables_left(self, key: ProvingKey) -> int:
        """The process's table allowance less what the other resident keys' tables hold."""
        held = sum(resident.table_bytes for resident in self._states.others(key))
        return self.table_budget_bytes - held

    def _plan(self, key: ProvingKey) -> tuple[set[str], dict[str, int]]:
        return residency_plan(key, self.vram_budget_bytes, self._tables_left(key),
                              RING_BUFFERS * self.ring_buffer_bytes, self.msm_tuning,
                              transient=self._transient(key))

    def _resident_bases(self, points: PointArray, lead: int, tabled: bool) -> MsmBases:
        if tabled:
            try:
                return MsmBases(points, self.stream, lead,
                                table_plan(lead + len(points), tuning=self.msm_tuning))
            except DeviceMemoryError:
                pass  # the device is fuller than the budget assumed: plain bases still prove
        return MsmBases(points, self.stream, lead)

    def extra_resident_bytes(self, key: ProvingKey) -> int:
        """Device bytes of the key beyond its bases and matrices (``extra_bytes``: window
        tables, the streaming ring less the bases that stream): as built once resident, as
        planned (within what other keys left) before."""
        resident = self._states.get(key)
        if resident is None:
            streamed, tables = self._plan(key)
            return extra_bytes(key, streamed, sum(tables.values()),
                               RING_BUFFERS * self.ring_buffer_bytes)
        return extra_bytes(key, resident.streamed, resident.table_bytes,
                           resident.ring.nbytes if resident.ring else 0)

    def streamed_bases(self, key: ProvingKey) -> set[str]:
        """The key's bases that stream from the host (as built, or as planned)."""
        resident = self._states.get(key)
        return resident.streamed if resident is not None else self._plan(key)[0]

    def _upload_matrix(self, m: SparseMatrix | CodedMatrix) -> ResidentMatrix:
        cupy = self._cupy
        coded = m if isinstance(m, CodedMatrix) else CodedMatrix.from_sparse(m)
        table = cupy.asarray(np.ascontiguousarray(coded.table, dtype=np.uint64))
        if len(table):
            self._mul_raw(_blocks(len(table)), (THREADS,),
                          (table, cupy.asarray(_TWICE_MONTGOMERY), np.uint32(len(table))))
        indptr = cupy.asarray(np.asarray(coded.indptr, dtype=np.int64))
        return ResidentMatrix(indptr, cupy.asarray(np.asarray(coded.indices, dtype=np.uint32)),
                       cupy.asarray(np.asarray(coded.codes, dtype=np.uint32)), table, coded.rows,
                       spmv_plan.chunk_rows(indptr, cupy))

    def _of(self, key: ProvingKey) -> Resident:
        self.prepare(key)
        return self._states.get(key)

    # -- the proof's steps ----------------------------------------------------------------
    def load_witness(self, key: ProvingKey, witness: np.ndarray):
        expected = (key.r1cs.num_variables, 4)
        if witness.shape != expected:
            raise ValueError(f"witness: expected shape {expected}, got {witness.shape}")
        witness = np.ascontiguousarray(witness, dtype=np.uint64)
        bad = np.flatnonzero(~is_canonical(witness, FR_MODULUS))
        if bad.size:
            raise ValueError(f"witness: entry {bad[0]} is not a canonical Fr element (>= r)")
        with self.on_device() as cupy:
            return cupy.asarray(witness)

    def evaluate_abc(self, key: ProvingKey, witness):
        """A·w, B·w, C·w (Montgomery form, zero up to the domain) by ``spmv.cuh``'s chunks
        of equal work and their fix-ups."""
        resident = self._of(key)
        n = 1 << resident.log_n
        if witness.shape != (key.r1cs.num_variables, 4):
            raise ValueError(f"witness handle: shape {witness.shape} does not fit this key")
        with self.on_device() as cupy:
            out = []
            for m in resident.matrices:
                v = cupy.zeros((n, 4), dtype=cupy.uint64)
                chunks = len(m.chunk_rows)
                if chunks:
                    carry_rows = cupy.empty(2 * chunks, dtype=cupy.uint32)
                    carry_values = cupy.empty((2 * chunks, 4), dtype=cupy.uint64)
                    self._spmv_chunks(_blocks(chunks), (THREADS,),
                                      (m.indptr, m.indices, m.codes, m.table,
                                       np.int64(m.indices.size), m.chunk_rows, witness, v,
                                       carry_rows, carry_values, np.uint64(chunks)))
                    self._spmv_fixups(_blocks(2 * chunks), (THREADS,),
                                      (carry_rows, carry_values, v, np.uint64(chunks)))
                out.append(v)
            return tuple(out)

    def quotient(self, key: ProvingKey, abc):
        """Coset form: intt (DIF, 1/n and the coset shift fused) → coset ntt (DIT) on a and
        b; their product; the coset intt gathering from natural order; then minus C's
        coefficients (c's intt alone: C has degree < n, so its coset evaluations' coset intt
        would give them back), all over Z, leaving Montgomery form (standard-form h for the
        MSM). Six transforms instead of seven, and b's buffer holds h: three vectors live.
        Odd form: c = a∘b; the intt, then the shift by ψ onto the odd points of the
        2n-domain, on a, b and c; then a·b − c leaving Montgomery form: that is h (no
        division by Z). a, b and c are spent either way (the prover releases them)."""
        resident = self._of(key)
        a, b, c = abc
        n = 1 << resident.log_n
        if log_size(a, "abc") != resident.log_n:
            raise ValueError(f"abc: length {a.shape[0]} is not the domain size {n}")
        odd = key.qap.odd_points
        with self.on_device() as cupy:
            if odd:
                self._mul_pointwise(_blocks(n), (THREADS,), (c, a, b, np.uint32(n)))
                for v in (a, b, c):
                    self.ntt.dif(v, inverse=True, post="odd_n_inv")
                    self.ntt.dit(v, v)
                h = a.copy()  # its own buffer: the prover releases a, b, c before the MSMs
                self._quotient_odd(_blocks(n), (THREADS,), (h, b, c, resident.h_factor,
                                                              np.uint32(n)))
                return h
            self.ntt.dif(c, inverse=True, post="n_inv")
            for v in (a, b):
                self.ntt.dif(v, inverse=True, post="shift_n_inv")
                self.ntt.dit(v, v)
            self._mul_pointwise(_blocks(n), (THREADS,), (a, a, b, np.uint32(n)))
            self.release(b)  # stream-ordered: h takes its memory
            h = cupy.empty_like(a)
            self.ntt.dit(a, h, inverse=True, gather=True, post="unshift_n_inv")
            self._quotient_coefficients(_blocks(n), (THREADS,),
                                        (h, c, resident.h_factor, np.uint32(resident.log_n)))
            return h[: n - 1]

    def msm_g1(self, key: ProvingKey, basis: G1Basis, scalars):
        return self._msm(key, basis, scalars)

    def msm_g2(self, key: ProvingKey, basis: G2Basis, scalars):
        return self._msm(key, basis, scalars)

    def proof_msms(self, key: ProvingKey, witness, h) -> dict:
        """The proof's five MSMs as one ``gpu.msm.msm_many`` batch: the MSMs that read the
        whole witness share its digit sort; b_g2 runs on its own stream, and the G1 MSMs take
        two streams in turn, so that one's latency-bound steps (sorts, reductions) overlap
        another's bucket sums."""
        resident = self._of(key)
        bases = resident.bases
        if witness.shape[0] != key.r1cs.num_variables:
            raise ValueError(f"witness: {witness.shape[0]} entries for "
                             f"{key.r1cs.num_variables} variables")
        if h.shape[0] != len(key.h_g1):
            raise ValueError(f"h_g1: {h.shape[0]} scalars for {len(key.h_g1)} bases")
        with self.on_device():
            # every MSM but h_g1 reads the whole witness (l_g1 through its leading
            # infinities), so they share one split of its ones and one digit sort (h is
            # uniform: not split); a density-form basis reads only its variables' entries
            # instead (b_g1 and b_g2 the same ones, b_density's: one vector, so they share
            # its split and sort)
            jobs = {name: self._density_scalars(resident, name, witness)
                    for name in ("a_g1", "b_g1")}
            jobs.update(b_g2=jobs["b_g1"], l_g1=witness, h_g1=h)
            points = msm_many([(bases[b], s) for b, s in jobs.items()], stream=self.stream,
                              g2_stream=self.g2_stream, g1_streams=self.g1_streams,
                              tuning=self.msm_tuning,
                              ones_apart=[s for b, s in jobs.items() if b != "h_g1"])
        return dict(zip(jobs, points))

    @staticmethod
    def _density_scalars(resident: Resident, name: str, witness):
        gather = resident.gathers.get(name)
        return witness if gather is None else witness[gather]

    def _msm(self, key: ProvingKey, basis: str, scalars):
        resident = self._of(key)
        bases = resident.bases[basis]
        if basis in resident.gathers and scalars.shape[0] == key.r1cs.num_variables:
            scalars = scalars[resident.gathers[basis]]
        if scalars.shape[0] != len(getattr(key, basis)):
            raise ValueError(f"{basis}: {scalars.shape[0]} scalars for "
                             f"{len(getattr(key, basis))} bases")
        with self.on_device() as cupy:
            if bases.leading_infinity:  # zero scalars for them: no digits
                scalars = cupy.concatenate(
                    (cupy.zeros((bases.leading_infinity, 4), dtype=cupy.uint64), scalars))
            return msm(bases, scalars, stream=self.stream, tuning=self.msm_tuning)

    def cached_bytes(self) -> int:
        """The pool's free blocks (CuPy's own count: no device query)."""
        pool = self._cupy.get_default_memory_pool()
        return pool.total_bytes() - pool.used_bytes()

    def return_cached(self) -> None:
        with self.on_device() as cupy:
            cupy.get_default_memory_pool().free_all_blocks()

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


def backend_from_settings(device_id: int, settings: dict) -> GpuBackend:
    """A backend without device steps that builds keys as ``shared_settings`` says (the
    keeper's)."""
    return GpuBackend(device_id, settings["table_budget_bytes"], device_steps=False,
                      msm_tuning=MsmTuning(**settings["msm_tuning"]),
                      vram_budget_bytes=settings["vram_budget_bytes"],
                      ring_buffer_bytes=settings["ring_buffer_bytes"])
