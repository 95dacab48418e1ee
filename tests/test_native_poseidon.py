"""The native Poseidon batch against fast.py's schedule, for the reference width and others."""

from __future__ import annotations

import numpy as np
import pytest

from snark import native
from snark.fields import FR_MODULUS as R
from snark.fields import fr_to_limbs, limbs_to_ints, random_fr
from snark.poseidon.fast import fast_schedule, permute_words
from snark.poseidon.params import derive_params, poseidon_x5_255_3


def _check(schedule, t: int, np_rng, count: int) -> None:
    states = random_fr(count * t, np_rng).reshape(count, t, 4)
    states[0] = 0
    states[1] = fr_to_limbs([R - 1] * t)
    out = native.permute_batch(states, schedule)
    assert out.shape == (count, t, 4)
    for i in range(count):
        want = permute_words(limbs_to_ints(states[i]), schedule)
        assert limbs_to_ints(out[i]) == want, i


def test_the_reference_instance(np_rng):
    _check(fast_schedule(poseidon_x5_255_3()), 3, np_rng, 40)


@pytest.mark.parametrize("t, partial", [(2, 56), (5, 60)])
def test_other_widths(t, partial, np_rng):
    """Any FastSchedule: other widths and round counts (alpha 5, 8 full rounds)."""
    schedule = fast_schedule(derive_params(R, 255, t=t, alpha=5, full_rounds=8,
                                           partial_rounds=partial))
    _check(schedule, t, np_rng, 12)


def test_batch_errors(np_rng):
    schedule = fast_schedule()
    with pytest.raises(ValueError, match=r"states: expected shape \(n, 3, 4\)"):
        native.permute_batch(random_fr(4, np_rng).reshape(2, 2, 4), schedule)
    states = random_fr(6, np_rng).reshape(2, 3, 4)
    states[1, 2] = fr_to_limbs([R])[0]
    with pytest.raises(ValueError, match=r"states\[5\] is not a canonical Fr element"):
        native.permute_batch(states, schedule)
    assert native.permute_batch(np.zeros((0, 3, 4), dtype=np.uint64), schedule).shape == \
        (0, 3, 4)
