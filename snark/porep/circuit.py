"""The porep circuit of one partition (docs/ARCHITECTURE.md §5).

Public inputs, in order: comm_d, comm_r, replica_id, then the K challenge indices. For
each challenge the circuit proves, with the index's bits b_0 … b_{depth-1} (private):

* every b_k is boolean and Σ 2^k·b_k equals the public index c;
* key = H(replica_id, c) and ρ = d + key, for private leaves d and ρ;
* d's Merkle path (the bits choose left/right) ends at comm_d and ρ's at comm_r.

The constraint structure depends only on (sector_size, K), never on values, so one
proving key serves every sector of that shape: ``circuit_r1cs`` compiles one challenge
from a placeholder assignment and repeats its rows K times. ``synthesize`` is the reference
and the structure; provers take the witness from ``snark.porep.witness``, which computes the
same assignment without building constraints. Size: K × ((2·depth + 1)·240 + 3·depth + 5)
constraints (240 per Poseidon hash, one swap per Merkle level, one input row per index) plus
4 input rows.
"""

from __future__ import annotations

import functools

import numpy as np

from snark.merkle import merkle_root_gadget
from snark.poseidon.gadget import poseidon_hash2_gadget
from snark.porep.c1 import (C1, NODE_BYTES, C1Error, ChallengeProof, PartitionProof,
                            check_sector_size)
from snark.r1cs import ONE, R1CS, ConstraintSystem, SparseMatrix, as_lc, lc, lc_add

#: Public inputs that are not challenge indices: comm_d, comm_r, replica_id.
FIXED_PUBLIC_INPUTS = 3
#: Bump whenever the constraints change: recorded shape → circuit id mappings
#: (``snark.params``) of another version are refused instead of naming a stale key.
CIRCUIT_VERSION = 1


def synthesize(c1: C1, partition: int, *, check: bool = False) -> ConstraintSystem:
    """Constraints and witness of ``partition`` of ``c1``."""
    cs = ConstraintSystem(check=check)
    comm_d = cs.alloc_input(c1.comm_d)
    comm_r = cs.alloc_input(c1.comm_r)
    replica_id = cs.alloc_input(c1.replica_id)
    challenges = partition_challenges(c1, partition)
    indices = [cs.alloc_input(ch.index) for ch in challenges]
    for ch, index in zip(challenges, indices):
        _challenge(cs, ch, index, c1.depth, comm_d, comm_r, replica_id)
    return cs


def _challenge(cs: ConstraintSystem, ch: ChallengeProof, index: int, depth: int,
               comm_d: int, comm_r: int, replica_id: int) -> None:
    bits = [cs.alloc((ch.index >> k) & 1) for k in range(depth)]
    for bit in bits:
        cs.enforce(bit, lc((ONE, 1), (bit, -1)), {}, "index bit is boolean")
    cs.enforce(lc(*((bit, 1 << k) for k, bit in enumerate(bits))), ONE, index,
               "index bits recompose to the public index")

    key = poseidon_hash2_gadget(cs, replica_id, index)
    data = cs.alloc(ch.data_leaf)
    replica = cs.alloc(ch.replica_leaf)
    cs.enforce(lc_add(as_lc(key), {data: 1}), ONE, replica, "replica leaf = data leaf + key")

    for leaf, path, root in ((data, ch.d_path, comm_d), (replica, ch.r_path, comm_r)):
        siblings = [cs.alloc(s) for s in path]
        cs.enforce(merkle_root_gadget(cs, leaf, bits, siblings), ONE, root,
                   "Merkle path ends at the commitment")


def public_inputs(c1: C1, partition: int) -> list[int]:
    """The public inputs of ``partition`` (without the constant ONE), circuit order."""
    return [c1.comm_d, c1.comm_r, c1.replica_id,
            *(ch.index for ch in partition_challenges(c1, partition))]


def partition_challenges(c1: C1, partition: int) -> list[ChallengeProof]:
    if not 0 <= partition < c1.partitions:
        raise C1Error(f"partition: {partition} is out of range for {c1.partitions} partitions")
    return c1.vanilla_proofs[partition].challenges


def placeholder_c1(sector_size: int, challenges: int) -> C1:
    """A one-partition C1 of the right shape with zero values: enough to fix the structure."""
    check_sector_size(sector_size)
    depth = (sector_size // NODE_BYTES).bit_length() - 1
    ch = ChallengeProof.model_construct(index=0, data_leaf=0, replica_leaf=0,
                                        d_path=[0] * depth, r_path=[0] * depth)
    return C1.model_construct(
        sector_size=sector_size, partitions=1, challenges=challenges, comm_d=0, comm_r=0,
        replica_id=0, seed=0, ticket=0,
        vanilla_proofs=[PartitionProof.model_construct(challenges=[ch] * challenges)])


@functools.lru_cache(maxsize=8)
def circuit_r1cs(sector_size: int, challenges: int) -> R1CS:
    """The compiled circuit for this shape: one challenge's rows compiled once, then
    repeated K times (the Python builder needs minutes for millions of constraints)."""
    if challenges < 1:
        raise C1Error(f"challenges: must be at least 1, got {challenges}")
    return _repeat_challenge(_one_challenge_r1cs(sector_size), challenges)


@functools.lru_cache(maxsize=None)
def _one_challenge_r1cs(sector_size: int) -> R1CS:
    """The one-challenge circuit, once repeating it is confirmed against a compiled
    two-challenge circuit: a circuit whose challenges stop being independent copies
    fails here instead of yielding a key for another circuit."""
    one = synthesize(placeholder_c1(sector_size, 1), 0).compile()
    two = synthesize(placeholder_c1(sector_size, 2), 0).compile()
    if _repeat_challenge(one, 2).circuit_id() != two.circuit_id():
        raise RuntimeError(f"porep circuit ({sector_size} bytes): challenges are not "
                           "independent copies of one block; circuit_r1cs cannot repeat it")
    return one


def _repeat_challenge(one: R1CS, challenges: int) -> R1CS:
    """``challenges`` copies of ``one``'s challenge rows, then one input row per input.

    In copy j, fixed columns (ONE, comm_d, comm_r, replica_id) stay, the index column moves
    to its own input j, and aux column a moves to copy j's aux block. The map is monotone,
    so every row stays sorted as ``R1CS.from_constraints`` writes it.
    """
    fixed = 1 + FIXED_PUBLIC_INPUTS
    inputs, aux = fixed + challenges, one.num_aux
    rows = one.num_constraints - one.num_inputs
    copies = np.arange(challenges)[:, None]

    def repeat(m: SparseMatrix) -> SparseMatrix:
        end = m.indptr[rows]
        cols = m.indices[:end]
        is_aux = cols > fixed
        start = np.where(is_aux, cols - one.num_inputs + inputs, cols)
        step = np.where(is_aux, aux, (cols == fixed).astype(np.int64))
        input_nnz = np.diff(m.indptr[rows:])  # rows x_i·0 = 0: the same for every input
        counts = np.concatenate([np.tile(np.diff(m.indptr[:rows + 1]), challenges),
                                 np.full(inputs, input_nnz[0])])
        indices = [(start + copies * step).reshape(-1)]
        data = [np.tile(m.data[:end], (challenges, 1))]
        if input_nnz[0]:
            indices.append(np.arange(inputs))
            data.append(np.tile(m.data[end:end + 1], (inputs, 1)))
        return SparseMatrix(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                            np.concatenate(indices).astype(np.int64), np.concatenate(data))

    return R1CS(inputs, challenges * aux, repeat(one.a), repeat(one.b), repeat(one.c))


def _per_challenge(sector_size: int) -> tuple[int, int]:
    """(constraints, aux variables) that one challenge adds."""
    one = _one_challenge_r1cs(sector_size)
    return one.num_constraints - one.num_inputs, one.num_aux


def constraints_estimate(sector_size: int, challenges: int) -> int:
    """Exact ``R1CS.num_constraints`` for this shape, without synthesizing it.

    Every challenge adds its own constraints plus one input row (its index); the fixed
    public inputs and ONE add one input row each.
    """
    return challenges * (_per_challenge(sector_size)[0] + 1) + FIXED_PUBLIC_INPUTS + 1


def circuit_sizes(sector_size: int, challenges: int) -> tuple[int, int, int]:
    """Exact (num_inputs, num_aux, num_constraints) of the compiled circuit, without it."""
    return (1 + FIXED_PUBLIC_INPUTS + challenges, challenges * _per_challenge(sector_size)[1],
            constraints_estimate(sector_size, challenges))


def challenges_for(sector_size: int, constraints: int) -> int:
    """The largest K whose circuit fits in ``constraints`` (at least 1)."""
    per = _per_challenge(sector_size)[0] + 1
    return max(1, (constraints - FIXED_PUBLIC_INPUTS - 1) // per)
