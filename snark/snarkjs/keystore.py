"""Imported zkeys in the params directory, under their content hash.

The key id is the sha256 of the zkey file (32 hex digits, like a circuit id), so importing
the same file twice, or from several workers at once, lands on one ``params/<key_id>/``
directory; ``ProvingKey.save`` writes it atomically with the usual manifest and sha256 of
every array, and ``ProvingKey.load`` checks them. Points are checked (on the curve, in the
subgroup) once, here; workers load the stored arrays without checking them again.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from snark.keys import ProvingKey
from snark.params import key_dir, load_key
from snark.snarkjs.job import ID_HEX_DIGITS
from snark.snarkjs.zkey import read_zkey



def zkey_id(path: str | Path) -> str:
    """The key id of a zkey file: its sha256, shortened like a circuit id."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:ID_HEX_DIGITS]


def import_zkey(path: str | Path, params_dir: str | Path) -> ProvingKey:
    """The imported key of ``path``: parsed, checked and stored unless already there."""
    key_id = zkey_id(path)
    if not (key_dir(Path(params_dir), key_id) / "manifest.json").exists():
        zkey = read_zkey(path)
        zkey.check_points()
        zkey.to_proving_key(key_id).save(Path(params_dir))
    return load_key(Path(params_dir), key_id)
