"""The worker half of the ``toy-product`` proof type (``tests.product_type``): one constraint
x·y = c per unit, a development key made on first use, the proofs concatenated."""

from __future__ import annotations

from snark import groth16
from snark.backend import ProverBackend
from snark.fields import FR_MODULUS
from snark.groth16 import FixedBaseMul, SetupProgress
from snark.keys import ProvingKey
from snark.params import CircuitShape, key_dir, load_or_setup_shape, recorded_circuit_id
from snark.proof import split_proofs
from snark.proof_types import Storage
from snark.r1cs import ConstraintSystem
from snark.unit_work import HostWitness
from tests.product_type import ProductJob, ProductJobError, ProductSettings

#: ONE and c; x and y; x·y = c and the compiled system's row per input.
SHAPE = CircuitShape("toy-product", 1, num_inputs=2, num_aux=2, num_constraints=1 + 2)


def product_circuit(x: int, y: int) -> ConstraintSystem:
    cs = ConstraintSystem(check=True)
    c = cs.alloc_input(x * y % FR_MODULUS)
    cs.enforce(cs.alloc(x), cs.alloc(y), c, "x·y = c")
    return cs


class ProductWorker:
    def __init__(self, storage: Storage, settings: ProductSettings) -> None:
        self.params_dir = storage.params_dir
        self.max_pairs = settings.max_pairs

    def check(self, job_input: ProductJob) -> None:
        if len(job_input.pairs) > self.max_pairs:
            raise ProductJobError(f"pairs: {len(job_input.pairs)} pairs, above this cluster's "
                                  f"PROOFQ_TOY_PRODUCT_MAX_PAIRS ({self.max_pairs})")
        for i, (x, y) in enumerate(job_input.pairs):
            if x == 0 or y == 0:
                raise ProductJobError(f"pairs[{i}]: a factor of 0 makes c = 0 for any partner")

    def has_key(self, job_input: ProductJob) -> bool:
        circuit_id = recorded_circuit_id(self.params_dir, SHAPE)
        return circuit_id is not None and key_dir(self.params_dir, circuit_id).exists()

    def make_key(self, job_input: ProductJob, *, fixed_base: FixedBaseMul | None = None,
                 progress: SetupProgress | None = None) -> None:
        self.load_key(job_input, fixed_base=fixed_base)

    def load_key(self, job_input: ProductJob, *,
                 fixed_base: FixedBaseMul | None = None) -> ProvingKey:
        return load_or_setup_shape(SHAPE, self.params_dir,
                                   lambda: product_circuit(1, 1).compile(),
                                   fixed_base=fixed_base)

    def work(self, job_input: ProductJob, unit: int, key: ProvingKey,
             backend: ProverBackend) -> HostWitness:
        if not 0 <= unit < len(job_input.pairs):
            raise ProductJobError(f"pairs[{unit}]: the job has {len(job_input.pairs)} pairs")
        return HostWitness(product_circuit(*job_input.pairs[unit]).witness())

    def public_inputs(self, job_input: ProductJob, unit: int, key: ProvingKey,
                      work: HostWitness) -> list[int]:
        x, y = job_input.pairs[unit]
        return [x * y % FR_MODULUS]

    def part(self, proof: bytes, public: list[int]) -> bytes:
        return proof

    def assemble(self, job_input: ProductJob, parts: list[bytes]) -> bytes:
        return b"".join(parts)

    def verify(self, job_input: ProductJob, result: bytes) -> bool:
        vk = self.load_key(job_input).vk
        return all(groth16.verify(vk, [x * y % FR_MODULUS], proof)
                   for (x, y), proof in zip(job_input.pairs,
                                            split_proofs(result, len(job_input.pairs))))
