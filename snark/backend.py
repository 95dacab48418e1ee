"""The prover backend interface (docs/ARCHITECTURE.md §4), implemented by
``snark.cpu_backend`` and ``gpu``.

A backend offers a few coarse calls on whole vectors so a GPU keeps data resident between
them. Handles returned by one call are opaque to the prover and passed back to the next;
they only need to support slicing along the first axis (``w[num_inputs:]`` is the aux part).
The Groth16 prover (``snark.groth16``) sequences these calls once for every backend, and
the worker runtime runs them inside its lock phases:

    memory phase   prepare, load_witness         (allocate, upload; may raise DeviceMemoryError)
    compute phase  evaluate_abc → quotient → msm_g1 × 4, msm_g2 (or proof_msms)
    finalize       randomisation and serialisation (snark.groth16, no backend)

What ``prepare`` makes resident for a key is the backend's own state, kept by the key
object's identity (``KeyStates``): a ``ProvingKey`` is a value and carries none of it.
``evict`` gives it back. A key whose device part is transient (``mark_transient``: a key
proved seldom beside a larger one that stays) keeps its bulk in host memory, and ``shed``
gives back its device part alone after each partition, so the next ``prepare`` is quick.

A proof type may have device steps of its own (porep: its witness from compact inputs). It
names them by a ``Capability`` in its package; a backend that has them returns them, composed
with itself, from ``extension``; one that has not returns None. The capability also says how
its steps are fenced (``Capability.fenced``), so the worker can check its lock's lease before
each of them as it does before the backend's own calls.

Inputs and outputs at this seam follow ``snark.fields``: standard-form Fr limbs in, arkworks
points out. Both backends must yield byte-identical proofs for the same witness and r, s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

import numpy as np

from snark.errors import WorkerFault

if TYPE_CHECKING:
    from snark.curve import G1Point, G2Point
    from snark.keys import ProvingKey

#: Bases of the proving key, by the MSM that uses them.
G1Basis = Literal["a_g1", "b_g1", "l_g1", "h_g1"]
G2Basis = Literal["b_g2"]


class BackendUnavailable(WorkerFault, RuntimeError):
    """The backend cannot run here (no GPU, no CuPy, …); the message says why."""


class DeviceLost(WorkerFault):
    """This process's device context is lost (a kernel faulted, an uncorrectable ECC error):
    CUDA refuses every later call here, so the work goes to another worker and this one
    counts towards its quarantine (``workers.quarantine``), never failing a user's job."""


class DeviceMemoryError(MemoryError):
    """An allocation on the device failed; callers fall back (e.g. stream inside compute)."""


#: A proof type's device steps, as a backend's ``extension`` returns them.
E = TypeVar("E")
#: What a backend keeps per resident key.
S = TypeVar("S")


@dataclass(frozen=True)
class Capability(Generic[E]):
    """A proof type's device steps, by name (what a backend looks its extension up by), and
    ``fenced(steps, check)``: the same steps calling ``check()`` before each device call."""

    name: str
    fenced: Callable[[E, Callable[[], None]], E]


class KeyStates(Generic[S]):
    """A backend's state per proving key, by the key object: two keys of one circuit (two
    setups, the two H forms) never share state. A state keeps its key alive until it is
    popped, so an id is never reused while it is here."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[ProvingKey, S]] = {}

    def get(self, key: ProvingKey) -> S | None:
        entry = self._by_id.get(id(key))
        return None if entry is None else entry[1]

    def put(self, key: ProvingKey, state: S) -> S:
        self._by_id[id(key)] = (key, state)
        return state

    def pop(self, key: ProvingKey) -> S | None:
        entry = self._by_id.pop(id(key), None)
        return None if entry is None else entry[1]

    def keys(self) -> list[ProvingKey]:
        """Every key with a state here."""
        return [key for key, _ in self._by_id.values()]

    def others(self, key: ProvingKey) -> Iterator[S]:
        """The states of every key but ``key``."""
        return (state for k, state in self._by_id.values() if k is not key)


@runtime_checkable
class ProverBackend(Protocol):
    name: str

    def prepare(self, key: "ProvingKey") -> None:
        """Make the key's bases and R1CS resident; called once per key, idempotent."""

    def load_witness(self, key: "ProvingKey", witness: np.ndarray) -> Any:
        """Take a ``(num_variables, 4)`` standard-form witness; return a handle to it."""

    def evaluate_abc(self, key: "ProvingKey", witness: Any) -> Any:
        """A·w, B·w, C·w evaluated on the domain (zero-padded to ``domain_size``)."""

    def quotient(self, key: "ProvingKey", abc: Any) -> Any:
        """The scalars of the H MSM, by ``key.qap`` (``snark.qap``): ``coset``, the
        coefficients h_0 … h_{n-2} of H = (A·B − C)/Z via the coset of docs/ARCHITECTURE.md §4;
        ``odd``, A·B − C on the n odd points of the 2n-domain with C = A∘B (abc's C unused).
        ``abc`` is spent: a backend may overwrite or release it (the caller only releases it)."""

    def msm_g1(self, key: "ProvingKey", basis: G1Basis, scalars: Any) -> "G1Point":
        """Σ scalars[i] · basis[i] over G1 (``len(scalars) == len(basis)``). For a_g1 and
        b_g1 ``scalars`` is the witness handle; with a density key (``snark.keys``:
        ``key.density_of(basis)`` not None) the basis has points only for the variables of
        that mask, and the backend pairs them with those witness entries."""

    def msm_g2(self, key: "ProvingKey", basis: G2Basis, scalars: Any) -> "G2Point":
        """Σ scalars[i] · basis[i] over G2; b_g2 takes the witness like b_g1."""

    def release(self, *handles: Any) -> None:
        """Free what the handles hold (device memory); a no-op on the CPU."""

    def evict(self, key: "ProvingKey") -> None:
        """Forget what ``prepare`` made resident for ``key`` and free its memory (a later
        ``prepare`` makes it resident again); nothing if it is not resident."""

    def mark_transient(self, key: "ProvingKey") -> None:
        """Make ``key``'s device part transient, before its first ``prepare`` and until
        ``evict``: what can stay on the host does (a GPU streams every basis from pinned
        host memory), so that ``shed`` leaves the device little to reload."""

    def shed(self, key: "ProvingKey") -> None:
        """Give back the device memory ``prepare`` took for ``key`` and keep its host part
        for the next ``prepare`` (only once no work of this process reads the key); nothing
        if it is not resident. The CPU's state is all host: it keeps it."""

    def extra_resident_bytes(self, key: "ProvingKey") -> int:
        """Device bytes a prepared key holds beyond its bases and R1CS (the GPU's MSM
        window tables), for the VRAM ledger; 0 on the CPU."""

    def shared_name(self, key: "ProvingKey") -> str | None:
        """The name under which all the processes of this device hold ``key``'s one copy
        (the VRAM ledger counts it once), or None where this process holds its own."""

    def cached_bytes(self) -> int:
        """Device memory this process keeps for reuse but holds nothing in (a partition's
        scratch, once its work is done); 0 on the CPU."""

    def return_cached(self) -> None:
        """Give the cached memory back to the device (only once every stream of this
        process has finished with it: the worker calls it at the end of its compute phase,
        while no other process runs kernels)."""

    def extension(self, capability: Capability[E]) -> E | None:
        """This backend's implementation of a proof type's device steps, composed with it,
        or None where it has none (the CPU; a GPU backend made without device steps)."""


@runtime_checkable
class ProofMsmBackend(Protocol):
    """Optional: a backend that runs a proof's five MSMs as one batch, in whatever order
    and overlap suits it (the GPU shares the witness's digit sort among a_g1, b_g1, b_g2
    and l_g1 and runs the G2 MSM beside the G1 ones). Same results as the single calls."""

    def proof_msms(self, key: "ProvingKey", witness: Any, h: Any) -> dict:
        """``{basis: point}`` for a_g1, b_g1, b_g2 (witness, gathered by the key's density
        masks as in ``msm_g1``), l_g1 (witness[num_inputs:]) and h_g1 (h)."""
