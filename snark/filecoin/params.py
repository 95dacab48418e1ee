"""Groth16 keys for Filecoin's PoRep, SnapDeals and PoSt: the ceremony's official files, and
development keys (a PoSt proof, ``snark.filecoin.post.registered_proofs.PostProof``, is
keyed like a PoRep one).

Official ``.params`` and ``.vk`` files come from Filecoin's trusted-setup ceremony, by the
names the registry derives (``RegisteredProof.params_file_stem``; a SnapDeals update's
``SnapShape.params_file_stem``), in
``PROOFQ_FILECOIN_PARAMS_DIR``. rust-fil-proofs' ``parameters.json`` gives each one's digest
(the first 32 hex digits of its blake2b-512); a file by an official name whose digest
differs is refused. Those digests are facts copied here; nothing else of the files is.

A *development key* is proofq's own setup of the same circuit (``snark.groth16.setup``
in bellperson's density form), named so that it cannot be taken for an official one
(``proofq-dev-…``), its ``.vk`` and a JSON label in ``<params_dir>/filecoin/``: a worker's
goes straight into proofq's layout (below), ``make_development_key`` writes the ``.params``
too for export. Proofs under it verify with its ``.vk`` and nowhere else: a chain
accepts only proofs under the ceremony's keys.

Workers prove from a key converted once into proofq's key layout (``resident_key_dir``:
``<params_dir>/<file stem>/``, memory-mapped arrays, the circuit's coded R1CS beside them),
so a 47 GB ``.params`` is decoded once per host, not once per process.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from snark import groth16
from snark.bellperson import (ParamsFile, digest, read_key, read_vk, verifying_key, write_key,
                               write_vk)
from snark.filecoin.circuit import StackedShape, circuit_r1cs
from snark.filecoin.errors import FilecoinError
from snark.filecoin.post.registered_proofs import POST_DIGESTS, PostProof
from snark.filecoin.registered_proofs import DEV_PREFIX, RegisteredProof, dev_stem, key_stem
from snark.filecoin.snap import circuit as snap_circuit
from snark.filecoin.snap.shape import SnapShape
from snark.keys import KeyFileError, ProvingKey, VerifyingKey
from snark.r1cs import R1CS

#: rust-fil-proofs ``parameters.json`` (v28): digest of every official PoRep file, by name.
OFFICIAL_DIGESTS = {
    "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
    "032d3138d22506ec0082ed72b2dcba18df18477904e35bafee82b3793b06832f":
        ("434fb1338ecfaf0f59256f30dde4968f", "dc1ade9929ade1708238f155343044ac"),
    "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
    "ecd683648512ab1765faa2a5f14bab48f676e633467f0aa8aad4b55dcb0652bb":
        ("09e612e4eeb7a0eb95679a88404f960c", "b687beb9adbd9dabe265a7e3620813e4"),
    "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-0-0-sha256_hasher-"
    "6babf46ce344ae495d558e7770a585b2382d54f225af8ed0397b8be7c3fcd472":
        ("6c77597eb91ab936c1cef4cf19eba1b3", "065179da19fbe515507267677f02823e"),
    "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-0-sha256_hasher-"
    "82a357d2f2ca81dc61bb45f4a762807aedee1b0a53fd6c4e77b46a01bfef7820":
        ("6a388072a518cf46ebd661f5cc46900a", "0c7b4aac1c40fdb7eb82bc355b41addf"),
    "v28-stacked-proof-of-replication-merkletree-poseidon_hasher-8-8-2-sha256_hasher-"
    "96f1b4a04c5c51e4759bbf224bbc2ef5a42c7100f16ec0637123f16a845ddfb2":
        ("1801f8a6e1b00bceb00cc27314bb5ce3", "a89884252c04c298d0b3c81bfd884164"),
    # SnapDeals (EmptySectorUpdate, the api's merkletree-poseidon variant): 2 KiB … 64 GiB
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-"
    "fb9e095bebdd77511c0269b967b4d87ba8b8a525edaa0e165de23ba454510194":
        ("311f92a3e75036ced01b1c0025f1fa0c", "eadad9784969890d30f2749708c79771"),
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-"
    "92180959e1918d26350b8e6cfe217bbdd0a2d8de51ebec269078b364b715ad63":
        ("5aedd2cf3e5c0a15623d56a1b43110ad", "abd80269054d391a734febdac0d2e687"),
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-0-0-"
    "61fa69f38b9cc771ba27b670124714b4ea77fbeae05e377fb859c4a43b73a30c":
        ("c3ad7bb549470b82ad52ed070aebb4f4", "994c5b7d450ca9da348c910689f2dc7f"),
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-0-"
    "3b7f44a9362e3985369454947bc94022e118211e49fd672d52bec1cbfd599d18":
        ("1b3cfd761a961543f9eb273e435a06a2", "3a6941983754737fde880d29c7094905"),
    "v28-empty-sector-update-merkletree-poseidon_hasher-8-8-2-"
    "102e1444a7e9a97ebf1e3d6855dcc77e66c011ea66f936d9b2c508f87f2f83a7":
        ("1a392e7b759fb18e036c7559b5ece816", "80e366df2f1011953c2d01c7b7c9ee8e"),
}
OFFICIAL_DIGESTS.update(POST_DIGESTS)
#: What a key is for: a registered seal proof (PoRep), a SnapDeals update's shape or a PoSt
#: registered proof. Each names its official files (``params_file_stem``) and itself (``name``).
KeyTarget = RegisteredProof | SnapShape | PostProof


DEV_WARNING = ("development key made by proofq: NOT from Filecoin's trusted-setup ceremony; "
               "proofs under it verify only with its own .vk, never on chain")


def official_paths(proof: KeyTarget, directory: Path) -> tuple[Path, Path]:
    stem = proof.params_file_stem
    return Path(directory) / f"{stem}.params", Path(directory) / f"{stem}.vk"


def check_digest(path: Path) -> None:
    """Refuse a file named as an official one whose digest is not parameters.json's."""
    path = Path(path)
    stem, ext = path.stem, path.suffix
    expected = OFFICIAL_DIGESTS.get(stem)
    if expected is None:
        return
    wanted = expected[0] if ext == ".params" else expected[1]
    got = digest(path)
    if got != wanted:
        raise FilecoinError(f"{path}: digest {got} is not parameters.json's {wanted} for this "
                            "official name: a corrupt or foreign file (fetch it again)")


def partition_circuit(proof: KeyTarget) -> tuple[str, R1CS]:
    """The name and R1CS of the partition circuit a key of ``proof`` is for."""
    if isinstance(proof, SnapShape):
        return proof.name, snap_circuit.circuit_r1cs(proof)
    if isinstance(proof, PostProof):
        from snark.filecoin.post.circuit import PostShape
        from snark.filecoin.post.circuit import circuit_r1cs as post_r1cs

        post = PostShape.of(proof)
        return post.name, post_r1cs(post)
    shape = StackedShape.of(proof)
    return shape.name, circuit_r1cs(shape)


def development_key(proof: KeyTarget, *, fixed_base=None,
                    progress=None) -> tuple[str, ProvingKey]:
    """proofq's setup of ``proof``'s partition circuit in density form, named by its
    development stem (as ``read_key`` names a key read from its files), with the circuit's
    name."""
    circuit_name, r1cs = partition_circuit(proof)
    return circuit_name, groth16.setup(r1cs, fixed_base=fixed_base, density=True,
                                       progress=progress, circuit_id=dev_stem(proof))


def make_development_key(proof: KeyTarget, out_dir: Path, *, fixed_base=None,
                         progress=None) -> tuple[Path, Path]:
    """Set up the partition circuit of ``proof`` and write it in bellperson's formats."""
    circuit_name, key = development_key(proof, fixed_base=fixed_base, progress=progress)
    params_path, vk_path = _development_paths(proof, out_dir)
    write_key(key, params_path, vk_path)
    _write_label(proof, circuit_name, out_dir)
    return params_path, vk_path


def _development_paths(proof: KeyTarget, out_dir: Path) -> tuple[Path, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = dev_stem(proof)
    return out_dir / f"{stem}.params", out_dir / f"{stem}.vk"


def _write_label(proof: KeyTarget, circuit_name: str, out_dir: Path) -> None:
    (Path(out_dir) / f"{dev_stem(proof)}.json").write_text(json.dumps({
        "development": True, "warning": DEV_WARNING, "registered_proof": proof.name,
        "circuit": circuit_name, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }, indent=1))


def is_development(path: Path) -> bool:
    return Path(path).name.startswith(DEV_PREFIX)


def development_dir(params_dir: Path) -> Path:
    return Path(params_dir) / "filecoin"


def bellperson_files(proof: KeyTarget, kind: str, params_dir: Path,
                     official_dir: Path) -> tuple[Path, Path]:
    """Where the key's .params and .vk are: the official directory, or the development
    keys' own."""
    directory = official_dir if kind == "official" else development_dir(params_dir)
    stem = key_stem(proof, kind)
    return Path(directory) / f"{stem}.params", Path(directory) / f"{stem}.vk"


def resident_key_dir(proof: KeyTarget, kind: str, params_dir: Path) -> Path:
    return Path(params_dir) / key_stem(proof, kind)


def verifying_key_for(proof: KeyTarget, kind: str, params_dir: Path,
                      official_dir: Path) -> VerifyingKey:
    """The key's verifying key: from its converted form, else from its .vk file."""
    resident = resident_key_dir(proof, kind, params_dir)
    if (resident / "manifest.json").exists():
        return VerifyingKey.load(resident)
    _, vk_path = bellperson_files(proof, kind, params_dir, official_dir)
    if not vk_path.exists():
        raise KeyFileError(f"{vk_path}: no verifying key of {proof.name} ({kind})")
    return load_verifying_key(vk_path)


def convert_key(proof: KeyTarget, kind: str, params_dir: Path, official_dir: Path, *,
                fixed_base=None, progress=None) -> Path:
    """The key in proofq's layout, converted from its bellperson files once (a missing
    development key is set up straight into that layout, its .vk and label written beside
    the others; a missing official one is a ``KeyFileError`` saying where it must be put)."""
    target = resident_key_dir(proof, kind, params_dir)
    if (target / "manifest.json").exists():
        return target
    params_path, _ = bellperson_files(proof, kind, params_dir, official_dir)
    if not params_path.exists():
        if kind == "official":
            raise KeyFileError(f"{params_path}: the official key of {proof.name} is not there "
                               "(fetch Filecoin's parameters into PROOFQ_FILECOIN_PARAMS_DIR; "
                               "on a test cluster name the development key: the job "
                               "{\"key\": \"development\", \"c1\": <c1.json>}, "
                               "proofq submit --key development, or "
                               "PROOFQ_FILECOIN_KEY=development on the workers)")
        # Straight into proofq's layout, its .vk and label beside the others: at 32 GiB a
        # .params written and read back would add ~3 min and 47 GB of disk.
        circuit_name, key = development_key(proof, fixed_base=fixed_base, progress=progress)
        _, vk_path = _development_paths(proof, development_dir(params_dir))
        write_vk(key, vk_path)
        _write_label(proof, circuit_name, development_dir(params_dir))
        if progress is not None:
            progress("save the key in proofq's layout", 0, None)
        return key.save(params_dir)
    if progress is not None:
        progress("convert the .params to proofq's layout", 0, None)
    load_proving_key(proof, params_path).save(params_dir)
    return target

def load_proving_key(proof: KeyTarget, params_path: Path) -> ProvingKey:
    """The proving key in a .params file (official names digest-checked first)."""
    check_digest(params_path)
    params = ParamsFile(params_path)
    try:
        return read_key(params, partition_circuit(proof)[1], Path(params_path).stem)
    finally:
        params.close()


def load_verifying_key(vk_path: Path) -> VerifyingKey:
    check_digest(vk_path)
    return verifying_key(read_vk(vk_path), Path(vk_path).stem)
