"""WinningPoSt and WindowPoSt partitions of 2 KiB test sectors proved on the CPU under
development keys written in bellperson's formats, verified from the .vk; proofs refused for
another randomness or sector, tampered vanilla proofs refused before proving."""

from __future__ import annotations

import numpy as np
import pytest

from snark.cpu_backend import CpuBackend
from snark.filecoin.errors import FilecoinError
from snark.filecoin.params import load_proving_key, load_verifying_key, make_development_key
from snark.filecoin.post import generate
from snark.filecoin.post.prove import Partition, prove_partition, verify_partition
from snark.filecoin.post.registered_proofs import post_proof
from snark.filecoin.post.vanilla import SectorProofs, decode, encode
from snark.filecoin.seal import random_fields


@pytest.mark.slow
@pytest.mark.parametrize("go_id, sectors, partition_index", [(0, 1, 0), (10, 1, 2)])
def test_a_2kib_partition_proves_and_verifies(module_rng, tmp_path, go_id, sectors,
                                              partition_index):
    rng = np.random.default_rng(module_rng.getrandbits(64))
    proof = post_proof(go_id)
    randomness = random_fields(rng, 1)[0].tobytes()
    made = [generate.whole_sector(proof, rng, 10 + i) for i in range(sectors)]
    vanilla = decode(encode(generate.vanilla_proofs(proof, made, randomness, partition_index)),
                     proof)
    partition = Partition(vanilla, randomness, partition_index)
    params_path, vk_path = make_development_key(proof, tmp_path)
    proof_bytes = prove_partition(partition, load_proving_key(proof, params_path), CpuBackend())
    vk = load_verifying_key(vk_path)
    assert len(proof_bytes) == 192 and verify_partition(partition, vk, proof_bytes)

    other = bytes([randomness[0] ^ 4]) + randomness[1:]
    assert not verify_partition(Partition(vanilla, other, partition_index), vk, proof_bytes)
    comm_r = vanilla.comm_r.copy()
    comm_r[0, 0] ^= 1
    moved = SectorProofs(proof, vanilla.sector_ids, comm_r, vanilla.comm_c, vanilla.comm_r_last,
                         vanilla.paths)
    assert not verify_partition(Partition(moved, randomness, partition_index), vk, proof_bytes)
    with pytest.raises(FilecoinError, match=r"vanilla_proofs\[0\]\.comm_r"):
        prove_partition(Partition(moved, randomness, partition_index),
                        load_proving_key(proof, params_path), CpuBackend())
