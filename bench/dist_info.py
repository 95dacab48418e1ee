"""A distribution's metadata (name, version, entry points) written where Python finds it,
without installing the distribution: proofq's proof types are its ``proofq.proof_types``
entry points (snark.registry), so a tree run from its source needs them.

    python3 bench/dist_info.py /tmp/site    # proofq's, from pyproject.toml, into /tmp/site

``bench/device.sh`` runs it on the device (whose copy of the tree is not installed); the
tests write a toy distribution with ``write``.
"""

from __future__ import annotations

import argparse
import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write(site: Path, name: str, version: str,
          entry_points: dict[str, dict[str, str]]) -> Path:
    """``site/<name>-<version>.dist-info`` with METADATA and entry_points.txt (replaced if
    there); ``site`` must be on ``sys.path`` of the processes that read it."""
    info = Path(site) / f"{name.replace('-', '_')}-{version}.dist-info"
    shutil.rmtree(info, ignore_errors=True)
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items()) + "\n"
        for group, points in entry_points.items()))
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a directory on PYTHONPATH")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    info = write(parser.parse_args().site, project["name"], project["version"],
                 project.get("entry-points", {}))
    print(f"wrote {info}")


if __name__ == "__main__":
    main()
