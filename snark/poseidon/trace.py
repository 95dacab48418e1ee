"""H(x, y) for a batch, together with the S-box values the R1CS gadget allocates.

The gadget (``gadget.py``) allocates x², x⁴ and x⁵ for every S-box whose input is not a
constant, in permutation order. A witness generator that skips building constraints still
needs exactly those values; this runs the fast schedule over whole vectors and keeps them.
The fast schedule changes only what flows *between* S-boxes (constants pushed forward,
sparse matrices), never an S-box's input, so its intermediates are the gadget's.
"""

from __future__ import annotations

import numpy as np

from snark.poseidon.fast import FastSchedule, fast_schedule, permute_words

#: Values the gadget allocates per S-box: x², x⁴, x⁵.
SBOX_POWERS = 3


class _Recorder:
    """Applies x⁵ to vectors and keeps (x², x⁴, x⁵) of each; constant inputs are folded."""

    def __init__(self, p: int) -> None:
        self.p = p
        self.powers: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def fifth(self, x):
        if not isinstance(x, np.ndarray):
            return pow(x, 5, self.p)
        p = self.p
        x2 = x * x % p
        x4 = x2 * x2 % p
        x5 = x4 * x % p
        self.powers.append((x2, x4, x5))
        return x5


def hash2_trace(xs: np.ndarray, ys: np.ndarray,
                schedule: FastSchedule | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(H(x_i, y_i), powers)`` for object arrays of reduced ints ``xs`` and ``ys``.

    ``powers`` has shape ``(num_sboxes, 3, n)``: x², x⁴, x⁵ of every non-constant S-box, in
    the order the gadget allocates them.
    """
    s = schedule or fast_schedule()
    if s.alpha != 5:
        raise ValueError(f"the gadget's S-box is x^5, this schedule's is x^{s.alpha}")
    rec = _Recorder(s.modulus)
    words = permute_words([0, xs, ys], s, sbox=rec.fifth)
    powers = np.empty((len(rec.powers), SBOX_POWERS, len(xs)), dtype=object)
    for k, triple in enumerate(rec.powers):
        powers[k] = triple
    return words[0], powers
