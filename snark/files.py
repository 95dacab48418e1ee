"""Files and directories that appear whole or not at all.

Everything proofq writes (C1s, proofs, keys, shape records) is first written to a temporary
sibling and renamed into place, so a crash or a concurrent reader never sees half of it. The
temporary is made private by ``tempfile``; before the rename it gets the mode a plain
``open`` would have given it (0666 or 0777 less the umask), like other tools' outputs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0o022)  # the only portable way to read it is to set it
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(final: Path, *, directory: bool = False) -> Iterator[Path]:
    """A temporary sibling of ``final`` to fill, renamed onto it when the block ends.

    A failure in the block removes the temporary. A directory never replaces an existing
    one: the first writer wins (concurrent setups of one key write the same content).
    """
    final = Path(final)
    prefix = f".{final.name}."
    try:
        if directory:
            tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=final.parent))
        else:
            fd, name = tempfile.mkstemp(prefix=prefix, dir=final.parent)
            os.close(fd)
            tmp = Path(name)
    except OSError as exc:  # name the file the user asked for, not the temporary
        raise OSError(exc.errno, exc.strerror, str(final)) from None
    try:
        yield tmp
        os.chmod(tmp, (0o777 if directory else 0o666) & ~_umask())
        if directory and final.exists():
            shutil.rmtree(tmp)
        else:
            os.replace(tmp, final)
    except BaseException:
        if directory:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
