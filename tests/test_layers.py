"""Constants and helpers that several layers use are defined once (issue 11, layers)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "papergym"


def _definitions() -> dict[str, list[str]]:
    """Module-level names assigned or functions defined, by name → the modules that do so."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        module = str(path.relative_to(SRC))
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        found[target.id].append(module)
            elif isinstance(node, ast.FunctionDef):
                found[node.name].append(module)
    return found


@pytest.mark.parametrize(
    ("name", "home"),
    [
        ("RUBRIC_SIZE", "records.py"),
        ("REVEAL_SIMILARITY", "recipes/criteria.py"),
        ("bind", "netutil.py"),
        ("in_order", "llm/verdicts.py"),
        ("failure_reason", "llm/verdicts.py"),
    ],
)
def test_defined_once(name: str, home: str) -> None:
    assert _definitions()[name] == [home]


def test_tokens_per_verdict_differs_by_judge_on_purpose() -> None:
    """Two values, each documented: the leakage prompt asks for one sentence of reason, the
    rubric prompt for one or two; the shared helper takes the judge's value."""
    from papergym.audit.judge import TOKENS_PER_VERDICT as LEAKAGE
    from papergym.reward.judge import TOKENS_PER_VERDICT as RUBRIC

    assert _definitions()["TOKENS_PER_VERDICT"] == ["audit/judge.py", "reward/judge.py"]
    assert LEAKAGE < RUBRIC
