"""The train package's layout: its command-line code lives in papergym/cli/train/, its cycle in
the train/cycle/ sub-package, and no train module reaches up to papergym.settings (train takes
its configuration as an argument, of the shape train/config.py's TrainConfig describes)."""

from __future__ import annotations

import ast
from pathlib import Path

import papergym.train

TRAIN = Path(papergym.train.__file__).parent


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def modules() -> dict[str, set[str]]:
    return {str(path.relative_to(TRAIN)): imported_modules(path) for path in TRAIN.rglob("*.py")}


def test_no_command_line_code_in_train() -> None:
    typer_users = {
        name
        for name, imports in modules().items()
        if any(m == "typer" or m.startswith(("typer.", "papergym.cli")) for m in imports)
    }
    assert typer_users == set()


def test_no_train_module_imports_settings() -> None:
    settings_users = {
        name
        for name, imports in modules().items()
        if any(m == "papergym.settings" or m.startswith("papergym.settings.") for m in imports)
    }
    assert settings_users == set()


def test_the_cycle_is_a_sub_package_not_a_prefix() -> None:
    assert not list(TRAIN.glob("cycle_*.py"))
    assert {p.name for p in (TRAIN / "cycle").glob("*.py")} >= {
        "run.py",
        "records.py",
        "reviewers.py",
    }
