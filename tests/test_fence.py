"""The fenced backend (``workers.fence``): every device call, a proof type's device steps
included, checks the lock's lease first; freeing never does; arguments pass through as
given, keywords too; and the fenced view offers what the backend offers, no more."""

from __future__ import annotations

import pytest

from snark import groth16
from snark.backend import Capability, ProofMsmBackend
from snark.cpu_backend import CpuBackend
from snark.fields import FR_MODULUS, fr_to_limbs
from tests.circuits import random_circuit
from workers.fence import FencedProofMsmBackend, fence
from workers.locks import LeaseLost


class _Held:
    """A held lock whose lease can be lost (``HeldLock.check`` raises then)."""

    def __init__(self) -> None:
        self.lost = False

    def check(self) -> None:
        if self.lost:
            raise LeaseLost("compute lock: lease lost")


class _Steps:
    """A proof type's device steps, recording what reached them."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def step(self, value: int, *, scale: int = 1) -> int:
        self.calls.append((value, scale))
        return value * scale


class _FencedSteps:
    def __init__(self, steps: _Steps, check) -> None:
        self._steps, self._check = steps, check

    def step(self, value: int, *, scale: int = 1) -> int:
        self._check()
        return self._steps.step(value, scale=scale)


STEPS = Capability("test-steps", _FencedSteps)


class _Extended(CpuBackend):
    """The CPU backend with the test capability, counting the calls that reached it."""

    def __init__(self) -> None:
        super().__init__()
        self.steps = _Steps()
        self.reached: list[str] = []

    def extension(self, capability):
        return self.steps if capability is STEPS else None

    def msm_g1(self, key, basis, scalars):
        self.reached.append(basis)
        return super().msm_g1(key, basis, scalars)

    def release(self, *handles) -> None:
        self.reached.append("release")


def _witness(key, rng):
    """Values for every variable of the key (any will do: the MSMs do not care)."""
    return fr_to_limbs([rng.randrange(FR_MODULUS) for _ in range(key.r1cs.num_variables)])


@pytest.fixture(scope="module")
def key(module_rng):
    return groth16.setup(random_circuit(num_inputs=2, num_constraints=20,
                                        rng=module_rng).compile())


def test_calls_pass_through_as_given_until_the_lease_is_lost(key, rng):
    backend, held = _Extended(), _Held()
    fenced = fence(backend, held)
    scalars = fenced.load_witness(key, _witness(key, rng))
    by_keyword = fenced.msm_g1(key=key, basis="a_g1", scalars=scalars)
    assert by_keyword == backend.msm_g1(key, "a_g1", scalars)
    steps = fenced.extension(STEPS)
    assert steps.step(3, scale=rng.randrange(2, 9)) > 3 and backend.steps.calls
    held.lost = True
    reached = list(backend.reached)
    for call in (lambda: fenced.prepare(key), lambda: fenced.msm_g1(key, "b_g1", scalars),
                 lambda: fenced.evaluate_abc(key, scalars), lambda: steps.step(1)):
        with pytest.raises(LeaseLost):
            call()
    assert backend.reached == reached and len(backend.steps.calls) == 1
    fenced.release(scalars)  # freeing our own buffers: always
    fenced.evict(key)
    assert backend.reached[-1] == "release"
    assert fenced.extension(Capability("none", _FencedSteps)) is None


def test_the_fenced_view_offers_proof_msms_only_where_the_backend_does(key):
    assert not isinstance(fence(CpuBackend(), _Held()), ProofMsmBackend)

    class Batched(CpuBackend):
        def proof_msms(self, key, witness, h):
            return {"called": True}

    fenced = fence(Batched(), _Held())
    assert isinstance(fenced, FencedProofMsmBackend) and isinstance(fenced, ProofMsmBackend)
    assert fenced.proof_msms(key, None, None) == {"called": True}


