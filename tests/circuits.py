"""Random satisfiable R1CS instances for tests of the proving core and the backends."""

from __future__ import annotations

import random

from snark.fields import FR_MODULUS as R
from snark.r1cs import ConstraintSystem


def random_circuit(num_inputs: int, num_constraints: int, *, rng: random.Random,
                   width: int = 3) -> ConstraintSystem:
    """Products of random linear combinations of earlier variables, inputs included."""
    cs = ConstraintSystem(check=True)
    pool = [cs.alloc_input(rng.randrange(R)) for _ in range(num_inputs)]
    pool += [cs.alloc(rng.randrange(R)) for _ in range(4)]
    for _ in range(num_constraints):
        a = {rng.choice(pool): rng.randrange(R) for _ in range(width)}
        b = {rng.choice(pool): rng.randrange(R) for _ in range(rng.randint(1, width))}
        out = cs.alloc(cs.eval(a) * cs.eval(b))
        cs.enforce(a, b, out)
        pool.append(out)
    return cs
