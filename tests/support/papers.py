"""Paper folders written by the tests, and where the real papers are when present."""

from __future__ import annotations

from pathlib import Path

SHARED_PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"
"""The twelve published papers' sources beside the repository (absent on a fresh clone)."""


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
