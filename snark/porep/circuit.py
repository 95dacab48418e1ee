"""The porep circuit of one partition (DESIGN.md §5).

Public inputs, in order: comm_d, comm_r, replica_id, then the K challenge indices. For
each challenge the circuit proves, with the index's bits b_0 … b_{depth-1} (private):

* every b_k is boolean and Σ 2^k·b_k equals the public index c;
* key = H(replica_id, c) and ρ = d + key, for private leaves d and ρ;
* d's Merkle path (the bits choose left/right) ends at comm_d and ρ's at comm_r.

The constraint structure depends only on (sector_size, K), never on values, so one
proving key serves every sector of that shape: ``circuit_r1cs`` compiles it once from a
placeholder assignment. ``synthesize`` is the reference and the structure; provers take the
witness from ``snark.porep.witness``, which computes the same assignment without building
constraints. Size: K × ((2·depth + 1)·240 + 3·depth + 5) constraints (240 per
Poseidon hash, one swap per Merkle level, one input row per index) plus 4 input rows.
"""

from __future__ import annotations

import functools

from snark.merkle import merkle_root_gadget
from snark.poseidon import poseidon_hash2_gadget
from snark.porep.c1 import (C1, NODE_BYTES, C1Error, ChallengeProof, PartitionProof,
                            check_sector_size)
from snark.r1cs import ONE, R1CS, ConstraintSystem, as_lc, lc, lc_add

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
    """The compiled circuit for this shape (cached: compiling 2^16 constraints takes seconds)."""
    return synthesize(placeholder_c1(sector_size, challenges), 0).compile()


@functools.lru_cache(maxsize=None)
def _per_challenge(sector_size: int) -> tuple[int, int]:
    """(constraints, aux variables) that one challenge adds."""
    cs = synthesize(placeholder_c1(sector_size, 1), 0)
    return len(cs.constraints), cs.num_aux


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
