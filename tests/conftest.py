"""Shared fixtures: small paper folders written by the tests, and the real papers when present.

Fixtures only: helpers the tests import live in ``tests/support`` (see its docstring for why).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support.papers import MINIMAL_MAIN, SHARED_PAPERS, write_paper

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def minimal_paper(tmp_path: Path) -> Path:
    return write_paper(tmp_path / "minimal", {"main.tex": MINIMAL_MAIN})


@pytest.fixture(scope="session")
def shared_index() -> list[dict[str, object]]:
    index = SHARED_PAPERS / "index.json"
    if not index.is_file():
        pytest.skip("../shared/papers is not available")
    data: list[dict[str, object]] = json.loads(index.read_text(encoding="utf-8"))
    return data
