"""The tests' own plumbing: shared helpers come from ``support``, never from a conftest."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# pytest loads every conftest.py as the module ``conftest``: importing from it gets whichever
# conftest was loaded last (tests/train/conftest.py under `pytest -m slow`), an ImportError.
CONFTEST_IMPORT = re.compile(r"^\s*(from\s+conftest\s+import|import\s+conftest\b)", re.MULTILINE)


def test_no_test_imports_from_a_conftest() -> None:
    offenders = [
        str(path.relative_to(TESTS))
        for path in sorted(TESTS.rglob("*.py"))
        if CONFTEST_IMPORT.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], f"import shared helpers from tests/support instead: {offenders}"


def test_support_helpers_import_as_a_package() -> None:
    from support.papers import MINIMAL_MAIN, SHARED_PAPERS, write_paper

    assert SHARED_PAPERS.parts[-2:] == ("shared", "papers")
    assert "\\documentclass" in MINIMAL_MAIN and callable(write_paper)
