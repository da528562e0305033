"""The import structure (docs/architecture.md): packages on floors that import only downwards,
no circles between modules, configuration handed down (only the entry points read the whole
configuration), and all command-line code in ``papergym.cli``. Read from the source with
``ast``: every import counts, lazy ones and those for type checkers included."""

from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "papergym"
ENTRY_POINTS = ("papergym.cli", "papergym.integrations", "papergym.settings")
"""The packages that may read the whole configuration: the command line, the framework
integrations, and the composition itself."""

FLOORS = {
    **dict.fromkeys(
        (
            "errors",
            "redact",
            "text",
            "environment",
            "configbase",
            "configload",
            "records",
            "jsonl",
            "netutil",
            "quotes",
        ),
        0,
    ),
    "reward_protocol": 0,
    "processconfig": 0,
    **dict.fromkeys(("llm", "sources", "embed", "runfolder", "adapters"), 1),
    **dict.fromkeys(("ingestion", "audit", "export", "fetch"), 2),
    **dict.fromkeys(("recipes", "reward"), 3),
    **dict.fromkeys(("review", "eval", "write"), 4),
    **dict.fromkeys(("fakellm", "calibrate", "report"), 5),
    "train": 6,
    "settings": 7,
    **dict.fromkeys(("cli", "integrations"), 8),
}
"""Each package's floor, bottom up, as docs/architecture.md draws them. ``papergym`` itself (its
``__version__`` and the lazy public names) sits apart: it imports nothing when imported."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str | None:
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, path: Path) -> set[str]:
    """The papergym modules ``module`` imports anywhere in its file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if path.name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            names = [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            target = _resolve(name) if name.startswith("papergym") else None
            if target is not None and target != module:
                found.add(target)
    return found


@cache
def graph() -> dict[str, frozenset[str]]:
    return {module: frozenset(_imported(module, path)) for module, path in modules().items()}


def package_of(module: str) -> str:
    """``papergym.reward.judge`` → ``papergym.reward``; a top-level module is its own package."""
    return ".".join(module.split(".")[:2])


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node (each is a circle of imports)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _floor(module: str) -> int | None:
    return FLOORS.get(module.split(".")[1]) if module != "papergym" else None


def upward_imports() -> set[tuple[str, str]]:
    """(importer, imported) pairs where the imported module sits on a higher floor."""
    found: set[tuple[str, str]] = set()
    for module, targets in graph().items():
        here = _floor(module)
        for target in targets:
            there = _floor(target)
            if here is not None and there is not None and there > here:
                found.add((module, target))
    return found


def test_every_package_has_a_floor() -> None:
    packages = {module.split(".")[1] for module in modules() if module != "papergym"}
    assert sorted(packages - FLOORS.keys()) == []


def test_imports_run_down_the_floors() -> None:
    assert sorted(upward_imports()) == []


def test_no_module_imports_another_that_imports_it_back() -> None:
    edges = {module: set(targets) for module, targets in graph().items()}
    assert strongly_connected(edges) == []


def test_packages_form_layers_with_no_loop() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, targets in graph().items():
        for target in targets:
            if package_of(target) != package_of(module):
                edges[package_of(module)].add(package_of(target))
    assert strongly_connected(edges) == []


def test_only_entry_points_read_the_whole_configuration() -> None:
    readers = sorted(
        module
        for module, targets in graph().items()
        if any(t.startswith("papergym.settings") for t in targets)
        and not module.startswith(ENTRY_POINTS)
    )
    assert readers == []


def test_command_line_code_lives_in_the_cli_package() -> None:
    typer_users = sorted(
        module
        for module, path in modules().items()
        if not module.startswith("papergym.cli")
        and any(
            (isinstance(node, ast.Import) and any(a.name == "typer" for a in node.names))
            or (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("typer"))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        )
    )
    assert typer_users == []
