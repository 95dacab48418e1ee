"""``toy-product`` (``tests.product_type``) installed as a third party would install it: a
distribution of its own whose metadata has the one entry-point line, written into a
directory put on ``sys.path`` here and on ``PYTHONPATH`` of the workers a test starts."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from snark import registry
from snark.plugins import ENTRY_POINT_GROUP

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from dist_info import write  # noqa: E402  (bench/dist_info.py)

#: The one line a new type adds to its distribution's metadata.
ENTRY_POINT = {"toy-product": "tests.product_type:PLUGIN"}


@contextmanager
def toy_distribution(site: Path, entry_points: dict[str, str] = ENTRY_POINT) -> Iterator[str]:
    """The toy's distribution (or one of ``entry_points``) in ``site`` and on this process's
    path while in the block; gives the ``PYTHONPATH`` a worker started meanwhile needs
    (``site``, the tree, then what was set)."""
    write(site, "toy-product", "0", {ENTRY_POINT_GROUP: entry_points})
    sys.path.insert(0, str(site))
    registry.reread()
    try:
        yield os.pathsep.join([str(site), str(ROOT), os.environ.get("PYTHONPATH", "")])
    finally:
        sys.path.remove(str(site))
        registry.reread()
