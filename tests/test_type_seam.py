"""The proof-type seam (docs/ARCHITECTURE.md §5): ``client/``, ``tasks/``, ``workers/`` and
``gpu/``'s generic modules name no proof type. What they know of a type comes from its
plug-in record (``snark.plugins``), found by the ``proofq.proof_types`` entry point; only the
modules a record names (its commands, its device steps: the type's faces in those rooms)
may import the type's package or spell its name."""

from __future__ import annotations

import ast
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from snark.plugins import ENTRY_POINT_GROUP
from snark.registry import plugins

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("client", "tasks", "workers", "gpu")

def _face_modules() -> set[str]:
    """The files of the modules the installed records name in the rooms."""
    named = {path.partition(":")[0] for p in plugins()
             for path in (p.commands, p.device_steps, p.curio_kinds) if path is not None}
    return {module.replace(".", "/") + ".py" for module in named}


def _type_packages() -> set[str]:
    """The packages the records live in (``snark.porep`` for ``snark.porep.plugin``)."""
    return {point.module.rpartition(".")[0] for point in entry_points(group=ENTRY_POINT_GROUP)}


def _type_names() -> set[str]:
    return {name for p in plugins() for name in p.names}


def _generic_files() -> list[str]:
    faces = _face_modules()
    files = [path.relative_to(ROOT).as_posix() for room in ROOMS
             for path in sorted((ROOT / room).rglob("*.py"))]
    return [f for f in files if f not in faces and "_pb2" not in f]


def naming(tree: ast.AST, packages: set[str], names: set[str]) -> list[str]:
    """Where ``tree`` imports one of ``packages`` or spells one of ``names``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            modules = []
        found += [f"line {node.lineno}: imports {m}" for m in modules
                  if any(m == p or m.startswith(p + ".") for p in packages)]
        if isinstance(node, ast.Constant) and node.value in names:
            found.append(f"line {node.lineno}: names {node.value!r}")
    return found


@pytest.mark.parametrize("path", _generic_files())
def test_a_generic_module_names_no_proof_type(path):
    found = naming(ast.parse((ROOT / path).read_text(), path), _type_packages(), _type_names())
    assert not found, f"{path}: " + "; ".join(found)


def test_the_walk_sees_an_import_and_a_name():
    tree = ast.parse("from snark.porep.c1 import C1\nimport snark.filecoin\nx = 'circom'\n"
                     "y = 'porep-demo-ish'\nfrom snark.porepx import z\n")
    assert naming(tree, {"snark.porep", "snark.filecoin"}, {"circom", "porep-demo"}) == [
        "line 1: imports snark.porep.c1", "line 2: imports snark.filecoin",
        "line 3: names 'circom'"]


def test_the_faces_are_the_records_own():
    """Every module a record names exists, in the room its libraries belong to."""
    faces = _face_modules()
    assert faces and all((ROOT / face).is_file() for face in faces)
    assert all(face.split("/")[0] in ("client", "gpu") for face in faces)
    assert "gpu/backend.py" not in faces and "gpu/extensions.py" not in faces
