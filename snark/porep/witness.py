"""The witness of a porep partition without building its constraints.

``synthesize(c1, p).witness()`` builds every linear combination and constraint in Python
(~10 µs per constraint) only to read the assignment back. The assignment itself needs just
the Poseidon hashes, and the hashes of one partition at the same Merkle level are
independent: the key hashes and level 0 of every challenge's two paths go through one
vectorised permutation, then level 1, and so on; ``hash2_trace`` keeps the S-box values the
gadget allocates. They land in the aux vector through per-shape slot arrays.

The slot layout is not written down a second time. It is learned once per sector size from
the reference circuit: one challenge with random values is synthesized, and every value
computed here is looked up in its aux vector (the index bits, which repeat 0 and 1, by their
coefficients 2^k in the recomposition constraint). A slot that nothing claims, or a value
found twice, is a ``WitnessLayoutError``: a circuit that drifted from this module cannot
produce a different witness silently. Every challenge then owns one block of ``stride`` aux
slots, in challenge order, and its index is public input ``FIXED_PUBLIC_INPUTS + 1 + j``.
"""

from __future__ import annotations

import functools
import secrets
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from snark.fields import FR_MODULUS, fr_to_limbs
from snark.poseidon.trace import hash2_trace
from snark.porep.c1 import C1, C1Error, ChallengeProof, PartitionProof, check_sector_size
from snark.porep.circuit import (FIXED_PUBLIC_INPUTS, partition_challenges, placeholder_c1,
                                 public_inputs, synthesize)
from snark.r1cs import ONE, ConstraintSystem

#: Public variable of challenge 0's index: after ONE and the fixed public inputs.
_FIRST_INDEX_INPUT = 1 + FIXED_PUBLIC_INPUTS


class WitnessLayoutError(RuntimeError):
    """The circuit allocates something this module does not compute (a code mismatch)."""


def _objects(values) -> np.ndarray:
    """A 1-D (ints) or 2-D (lists of ints) object array of Python ints: numpy would pick
    int64, which overflows, or fail on 255-bit values."""
    rows = list(values)
    width = len(rows[0]) if rows and isinstance(rows[0], list) else None
    out = np.empty((len(rows),) if width is None else (len(rows), width), dtype=object)
    out[...] = rows
    return out


@dataclass(frozen=True)
class ChallengeTrace:
    """Every aux value of some challenges, and what their constraints compare.

    ``values`` by role, the last axis being the challenge: ``bits`` (depth, K); ``data``,
    ``replica`` (K,); ``siblings`` (2, depth, K), data path first; ``key`` (sboxes, 3, K)
    for H(replica_id, index); ``swaps`` (2, depth, K); ``hashes`` (2, depth, sboxes, 3, K).
    ``keys`` (K,) are the digests H(replica_id, index), ``roots`` (2, K) where each path ends.
    """

    values: dict[str, np.ndarray]
    keys: np.ndarray
    roots: np.ndarray


def trace_challenges(c1: C1, challenges: list[ChallengeProof]) -> ChallengeTrace:
    """Hash every challenge's key and paths, one vectorised permutation per tree level."""
    k = len(challenges)
    index = _objects(ch.index for ch in challenges)
    bits = np.stack([(index >> level) & 1 for level in range(c1.depth)])
    leaves = _objects([[ch.data_leaf for ch in challenges],
                       [ch.replica_leaf for ch in challenges]]) % FR_MODULUS
    siblings = np.stack([_objects([[getattr(ch, path)[level] for ch in challenges]
                                   for level in range(c1.depth)])
                         for path in ("d_path", "r_path")]) % FR_MODULUS

    key_x = np.full(k, c1.replica_id % FR_MODULUS, dtype=object)
    key_y = index % FR_MODULUS
    cur = leaves.reshape(-1)
    swaps, hashes = [], []
    for level in range(c1.depth):  # depth >= 6: the smallest sector has 64 nodes
        sibling = siblings[:, level, :].reshape(-1)
        t = np.tile(bits[level], 2) * ((sibling - cur) % FR_MODULUS) % FR_MODULUS
        left, right = (cur + t) % FR_MODULUS, (sibling - t) % FR_MODULUS
        if level == 0:  # the key hashes depend on nothing: they ride with level 0
            digest, powers = hash2_trace(np.concatenate([key_x, left]),
                                         np.concatenate([key_y, right]))
            keys, key_powers = digest[:k], powers[..., :k]
            digest, powers = digest[k:], powers[..., k:]
        else:
            digest, powers = hash2_trace(left, right)
        swaps.append(t.reshape(2, k))
        hashes.append(powers.reshape(*powers.shape[:2], 2, k))
        cur = digest
    values = {"bits": bits, "data": leaves[0], "replica": leaves[1], "siblings": siblings,
              "key": key_powers, "swaps": np.stack(swaps, axis=1),
              "hashes": np.stack(hashes).transpose(3, 0, 1, 2, 4)}
    return ChallengeTrace(values, keys, cur.reshape(2, k))


@dataclass(frozen=True)
class Layout:
    """Aux slots of one challenge's values (same keys and leading shapes as the values)."""

    stride: int
    slots: dict[str, np.ndarray]


def _probe_c1(sector_size: int) -> C1:
    """One challenge with random leaves and siblings at the last index (all bits 1, so no
    swap value is 0): every aux value but the bits is then unique."""
    shape = placeholder_c1(sector_size, 1)
    depth = shape.depth

    def rand() -> int:
        return secrets.randbelow(FR_MODULUS)

    ch = ChallengeProof.model_construct(
        index=shape.nodes - 1, data_leaf=rand(), replica_leaf=rand(),
        d_path=[rand() for _ in range(depth)], r_path=[rand() for _ in range(depth)])
    return shape.model_copy(update=dict(
        comm_d=rand(), comm_r=rand(), replica_id=rand(),
        vanilla_proofs=[PartitionProof.model_construct(challenges=[ch])]))


def _bit_slots(cs: ConstraintSystem, depth: int) -> np.ndarray:
    """Slots of index bits 0…depth-1: the terms 2^k·b_k of the constraint Σ 2^k·b_k · 1 = c."""
    for a, b, c in cs.constraints:
        if c == {_FIRST_INDEX_INPUT: 1} and b == {ONE: 1}:
            by_power = {coeff: var for var, coeff in a.items()}
            if sorted(by_power) == [1 << level for level in range(depth)]:
                return np.asarray([-1 - by_power[1 << level] for level in range(depth)])
    raise WitnessLayoutError("no constraint recomposes the index from its bits")


@functools.lru_cache(maxsize=16)
def challenge_layout(sector_size: int) -> Layout:
    """Where each value of one challenge lands, learned from one reference synthesis."""
    check_sector_size(sector_size)
    probe = _probe_c1(sector_size)
    cs = synthesize(probe, 0)
    if cs.num_inputs != _FIRST_INDEX_INPUT + 1:
        raise WitnessLayoutError(f"a one-challenge circuit has {cs.num_inputs} public "
                                 f"variables, expected {_FIRST_INDEX_INPUT + 1}")
    slot_of: dict[int, int | None] = {}
    for slot, value in enumerate(cs.aux):
        slot_of[value] = None if value in slot_of else slot
    slots = {"bits": _bit_slots(cs, probe.depth)}
    for name, values in trace_challenges(probe, partition_challenges(probe, 0)).values.items():
        if name in slots:
            continue
        found = [slot_of.get(v) for v in values[..., 0].reshape(-1)]
        if None in found:
            raise WitnessLayoutError(f"{name}: value {found.index(None)} is not (or not "
                                     f"uniquely) in the reference circuit's aux vector")
        slots[name] = np.asarray(found, dtype=np.int64).reshape(values.shape[:-1])
    claimed = np.sort(np.concatenate([s.reshape(-1) for s in slots.values()]))
    if not np.array_equal(claimed, np.arange(cs.num_aux)):
        raise WitnessLayoutError(f"the values computed here claim {claimed.size} slots, "
                                 f"the reference circuit allocates {cs.num_aux} distinct ones")
    return Layout(cs.num_aux, slots)


def partition_witness(c1: C1, partition: int, *, check: bool = False) -> np.ndarray:
    """``synthesize(c1, partition).witness()``, the same limbs, without the constraints.

    ``check=True`` raises ``C1Error`` naming the first challenge whose witness would not
    satisfy the circuit. It costs nothing extra: every other constraint holds by
    construction, only ρ = d + key and the two path roots compare values from the C1.
    """
    challenges = partition_challenges(c1, partition)
    layout = challenge_layout(c1.sector_size)
    trace = trace_challenges(c1, challenges)
    if check:
        _check(c1, partition, trace)
    blocks = layout.stride * np.arange(len(challenges))
    aux = np.empty(layout.stride * len(challenges), dtype=object)
    for name, slots in layout.slots.items():
        aux[slots[..., None] + blocks] = trace.values[name]
    inputs = [1, *(v % FR_MODULUS for v in public_inputs(c1, partition))]
    return fr_to_limbs([*inputs, *aux])


#: What the witness check compares, one bit each (the device kernel reports the same bits).
CHECKS = (
    (1, "replica_leaf is not data_leaf + H(replica_id, index)"),
    (2, "data_leaf with d_path does not hash to comm_d"),
    (4, "replica_leaf with r_path does not hash to comm_r"),
)


def check_failures(partition: int, flags: npt.ArrayLike) -> None:
    """Raise ``C1Error`` for the first challenge with a failure bit set in ``flags`` (K,)."""
    for bit, message in CHECKS:
        wrong = np.flatnonzero(np.asarray(flags) & bit)
        if wrong.size:
            raise C1Error(f"vanilla_proofs[{partition}].challenges[{wrong[0]}]: {message}")


def _check(c1: C1, partition: int, trace: ChallengeTrace) -> None:
    values = trace.values
    bad = (((values["data"] + trace.keys) % FR_MODULUS != values["replica"]),
           trace.roots[0] != c1.comm_d % FR_MODULUS,
           trace.roots[1] != c1.comm_r % FR_MODULUS)
    flags = sum(np.asarray(b, dtype=bool).astype(np.uint32) * bit
                for b, (bit, _) in zip(bad, CHECKS))
    check_failures(partition, flags)


@dataclass(frozen=True)
class WitnessInputs:
    """What a device needs to compute a partition's witness itself: ~64·(depth + 1) bytes
    per challenge (160 KiB at 2^20 constraints), where the witness has 32 bytes per
    variable (33.6 MB). Standard-form Fr limbs, reduced like the CPU trace.

    ``public`` (num_inputs, 4): ONE, then the public inputs. ``commitments`` (3, 4):
    replica_id, comm_d, comm_r. ``index`` (K,). ``leaves`` (2, K, 4): data, replica.
    ``siblings`` (2, depth, K, 4): data path, replica path.
    """

    sector_size: int
    partition: int
    public: np.ndarray
    commitments: np.ndarray
    index: np.ndarray
    leaves: np.ndarray
    siblings: np.ndarray

    @property
    def challenges(self) -> int:
        return self.index.shape[0]


def witness_inputs(c1: C1, partition: int) -> WitnessInputs:
    """The compact inputs of ``partition``'s witness; the device checks them (``CHECKS``)."""
    challenges = partition_challenges(c1, partition)
    k, depth = len(challenges), c1.depth
    leaves = ([ch.data_leaf % FR_MODULUS for ch in challenges]
              + [ch.replica_leaf % FR_MODULUS for ch in challenges])
    siblings = [getattr(ch, path)[level] % FR_MODULUS for path in ("d_path", "r_path")
                for level in range(depth) for ch in challenges]
    return WitnessInputs(
        sector_size=c1.sector_size, partition=partition,
        public=fr_to_limbs([1, *(v % FR_MODULUS for v in public_inputs(c1, partition))]),
        commitments=fr_to_limbs([v % FR_MODULUS for v in (c1.replica_id, c1.comm_d, c1.comm_r)]),
        index=np.asarray([ch.index for ch in challenges], dtype=np.uint64),
        leaves=fr_to_limbs(leaves).reshape(2, k, 4),
        siblings=fr_to_limbs(siblings).reshape(2, depth, k, 4))
