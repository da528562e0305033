"""The card's code snippets run as written: every name they use is imported or assigned, and
every PaperGym import names something that exists."""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import re

import pytest
from export_samples import sample_drops, sample_instances

from papergym.export.card import card_stats, render_card

PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _cards() -> dict[str, str]:
    stats = card_stats(sample_instances(), sample_drops())
    common = {"config": {}, "usage": None, "builder_note": None, "leakage": None}
    return {
        "build": render_card(stats, **common),  # every format, under export/<format>/
        "trl export": render_card(stats, formats=["trl"], **common),
    }


def _undefined_names(code: str) -> set[str]:
    tree = ast.parse(code)
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            defined |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
    used = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    return used - defined


@pytest.mark.parametrize("card", ["build", "trl export"])
def test_every_python_snippet_defines_what_it_uses(card: str) -> None:
    blocks = PYTHON_BLOCK.findall(_cards()[card])
    assert any("rubric_reward" in block for block in blocks)
    for block in blocks:
        assert _undefined_names(block) == set(), block
        for node in ast.walk(ast.parse(block)):
            if not isinstance(node, ast.ImportFrom) or node.module is None:
                continue
            if node.module.split(".")[0] == "papergym":  # ours: the names must exist
                module = importlib.import_module(node.module)
                for alias in node.names:
                    assert hasattr(module, alias.name), f"{node.module}.{alias.name}"
            else:  # third-party (trl, datasets): installed with PaperGym
                assert importlib.util.find_spec(node.module) is not None, node.module
