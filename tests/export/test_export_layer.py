"""The export package sits below the recipes (issue 21's layers): it reads build folders and
never imports :mod:`papergym.recipes`, not even lazily; what an unfinished ARES folder holds is
told to it by the command line (``missing_note``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.export.run import read_instances

EXPORT = Path(__file__).resolve().parents[2] / "src" / "papergym" / "export"


def _imported(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
    return modules


def test_export_imports_nothing_from_the_recipes() -> None:
    offenders = {
        f"{path.name}: {module}"
        for path in sorted(EXPORT.rglob("*.py"))
        for module in _imported(path)
        if module == "papergym.recipes" or module.startswith("papergym.recipes.")
    }
    assert offenders == set()


def test_missing_instances_are_explained_by_the_note_given(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="a note for this folder"):
        read_instances(tmp_path, missing_note=lambda folder: f"a note for this folder {folder}")
