"""Shared fixtures: small paper folders written by the tests, and the real papers when present."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED_PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"


def write_paper(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path → text) under ``root`` and return ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


MINIMAL_MAIN = r"""\documentclass{article}
\title{A Minimal Paper}
\begin{document}
\maketitle
\begin{abstract}
We study a small question with a simple method and report what we find.
\end{abstract}
\section{Introduction}
Large models are expensive to train, and the gap we address is the cost of attention.
\section{Method}
We route queries to a few key blocks.
\end{document}
"""


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
