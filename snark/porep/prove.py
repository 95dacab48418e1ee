"""Prove and verify porep C1s: one Groth16 proof per partition, 192·P bytes in order.

A key is tied to a circuit shape (sector size, K), named by the compiled R1CS's circuit id.
Compiling a large circuit takes minutes, so the params directory records each shape's
circuit id (``snark.params``): provers find their key by shape and compile only to make or
first record it. Using params made for another shape is reported as such (``KeyFileError``)
rather than as a proof that does not verify. Verification also recomputes what the public
inputs must be (replica_id from the ticket, the indices from the seed), so a proof of a
statement about self-chosen challenges is refused.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

from snark import groth16
from snark.backend import ProverBackend
from snark.groth16 import FixedBaseMul, SetupProgress
from snark.keys import KeyFileError, ProvingKey, VerifyingKey
from snark.params import (CircuitShape, check_shape, key_dir, load_or_setup_shape,
                          recorded_circuit_id)
from snark.porep.c1 import C1
from snark.porep.circuit import CIRCUIT_VERSION, circuit_r1cs, circuit_sizes, public_inputs
from snark.porep.vanilla import check_public_inputs
from snark.porep.staging import partition_work
from snark.proof import Proof, split_proofs
from snark.unit_work import prove_work


def circuit_shape(c1: C1) -> CircuitShape:
    return CircuitShape(c1.circuit_name, CIRCUIT_VERSION,
                        *circuit_sizes(c1.sector_size, c1.challenges))


def circuit_id_for(c1: C1, params_dir: Path | None = None) -> str:
    """The C1's circuit id: as recorded in ``params_dir`` if it is, else by compiling."""
    if params_dir is not None:
        recorded = recorded_circuit_id(Path(params_dir), circuit_shape(c1))
        if recorded is not None:
            return recorded
    return _circuit_id(c1.sector_size, c1.challenges)


@functools.lru_cache(maxsize=8)
def _circuit_id(sector_size: int, challenges: int) -> str:
    """Hashing the matrices is not free at 2^20 constraints; every partition asks again."""
    return circuit_r1cs(sector_size, challenges).circuit_id()


def load_or_setup_key(c1: C1, params_dir: Path, *, fixed_base: FixedBaseMul | None = None,
                      progress: SetupProgress | None = None) -> ProvingKey:
    """The proving key of the C1's circuit from ``params_dir`` (found by shape, no compile),
    or made there (compiles, slow; ``fixed_base`` as ``snark.groth16.setup`` takes it)."""
    return load_or_setup_shape(circuit_shape(c1), Path(params_dir),
                               lambda: circuit_r1cs(c1.sector_size, c1.challenges),
                               fixed_base=fixed_base, progress=progress)


def has_recorded_key(c1: C1, params_dir: Path) -> bool:
    """Whether ``params_dir`` holds the key of the C1's shape, known without compiling
    (no record: ``load_or_setup_key`` compiles once to find or make it)."""
    circuit_id = recorded_circuit_id(Path(params_dir), circuit_shape(c1))
    return circuit_id is not None and key_dir(Path(params_dir), circuit_id).exists()


def load_verifying_key(c1: C1, params_dir: Path) -> VerifyingKey:
    """Just the verifying key (vk.json) of the C1's circuit from ``params_dir``, checked
    against the key's manifest: a corrupt vk.json must not make good proofs look invalid."""
    directory = Path(params_dir) / circuit_id_for(c1, params_dir)
    if not (directory / "vk.json").exists():
        raise KeyFileError(f"{directory}: no params for {c1.circuit_name} here "
                           f"(run setup for this C1 first)")
    return VerifyingKey.load(directory)


def check_params(c1: C1, vk: VerifyingKey, params_dir: Path | None = None) -> None:
    """Refuse params made for another circuit shape, naming both (``params_dir``: look the
    expected id up in its shape records instead of compiling the circuit)."""
    expected = circuit_id_for(c1, params_dir)
    if vk.circuit_id != expected:
        raise KeyFileError(f"params {vk.circuit_id}: made for another circuit; "
                           f"{c1.circuit_name} needs circuit {expected}")


def prove_partition(c1: C1, partition: int, key: ProvingKey,
                    backend: ProverBackend | None = None) -> bytes:
    """The 192-byte proof of one partition (``C1Error`` if its witness would not satisfy
    the circuit)."""
    # Sizes differ between any two shapes (inputs count K, aux count K and the tree depth),
    # so this refuses a key of another shape without compiling; the record guards versions.
    check_shape(key, circuit_shape(c1), f"params {key.circuit_id}")
    backend = backend or groth16.default_backend()
    return prove_work(key, partition_work(c1, partition, backend), backend).to_bytes()


def prove_c1(c1: C1, key: ProvingKey, backend: ProverBackend | None = None,
             progress: Callable[[int], None] | None = None) -> bytes:
    """All partitions' proofs concatenated; ``progress(done)`` after each partition."""
    proofs = []
    for partition in range(c1.partitions):
        proofs.append(prove_partition(c1, partition, key, backend))
        if progress is not None:
            progress(partition + 1)
    return b"".join(proofs)


def verify_partition(c1: C1, partition: int, vk: VerifyingKey, proof: bytes,
                     params_dir: Path | None = None) -> bool:
    """Check one partition's proof (``ProofFormatError``/``C1Error`` for malformed input)."""
    check_params(c1, vk, params_dir)
    check_public_inputs(c1)
    decoded = Proof.from_bytes(proof, name=f"proof[{partition}]")
    return groth16.verify(vk, public_inputs(c1, partition), decoded)


def verify_c1(c1: C1, vk: VerifyingKey, proof: bytes, params_dir: Path | None = None) -> bool:
    """Check a whole C1's proofs: ``False`` if any partition's proof is wrong."""
    check_params(c1, vk, params_dir)
    check_public_inputs(c1)
    proofs = split_proofs(proof, c1.partitions)
    return all(groth16.verify(vk, public_inputs(c1, p), decoded)
               for p, decoded in enumerate(proofs))
