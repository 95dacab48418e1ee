"""The Poseidon permutation on Python ints, written exactly as the reference describes it.

Every round: add the round's constants, apply x^alpha (to every element in a full round,
to element 0 only in a partial round), multiply by the MDS matrix. This is the
specification the fast schedule (``fast.py``) and the R1CS gadget are tested against.
"""

from __future__ import annotations

from collections.abc import Sequence

from snark.poseidon.params import PoseidonParams, poseidon_x5_255_3


def permute(state: Sequence[int], params: PoseidonParams | None = None) -> list[int]:
    """The permutation of ``state`` (t field elements, each already reduced)."""
    params = params or poseidon_x5_255_3()
    p, t = params.modulus, params.t
    if len(state) != t:
        raise ValueError(f"Poseidon state must have {t} elements, got {len(state)}")
    for value in state:
        if not 0 <= value < p:
            raise ValueError(f"Poseidon state element {value:#x} is not a reduced field element")
    first_partial = params.half_full_rounds
    last_partial = first_partial + params.partial_rounds
    words = list(state)
    for r, constants in enumerate(params.round_constants):
        words = [(w + c) % p for w, c in zip(words, constants)]
        sboxed = t if not first_partial <= r < last_partial else 1
        words[:sboxed] = [pow(w, params.alpha, p) for w in words[:sboxed]]
        words = [sum(m * w for m, w in zip(row, words)) % p for row in params.mds]
    return words
