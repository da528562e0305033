"""``papergym build --help`` says what --limit and --paper-concurrency mean for --recipe ares."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from papergym.cli import app


def test_build_help_speaks_of_rows_and_documents_for_ares() -> None:
    result = CliRunner().invoke(app, ["build", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())
    assert "with --recipe ares, read the first N rows of the corpus only" in text
    assert "Not used by --recipe ares: documents in flight there are ares.concurrency" in text
