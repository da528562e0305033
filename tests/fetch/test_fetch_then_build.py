"""A build made from fetched papers: ingestion takes the arXiv id, date and licence from
metadata.json, and the card lists the licences."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import read_jsonl
from papergym.records import Instance
from support.arxiv_server import ArxivServer, Paper, tarball

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "papers" / "sparse-attention-toy"
CC_BY = "http://creativecommons.org/licenses/by/4.0/"
runner = CliRunner()


@pytest.mark.slow  # a whole offline build: about a minute on a shared machine
def test_the_card_of_a_build_from_fetched_papers_lists_their_licences(tmp_path: Path) -> None:
    files = {p.relative_to(EXAMPLE).as_posix(): p.read_bytes() for p in EXAMPLE.rglob("*.*")}
    paper = Paper("2405.00042", version=3, licence=CC_BY, eprint=tarball(files, top="toy"))
    with ArxivServer([paper]) as arxiv:
        fetched = runner.invoke(
            app,
            ["fetch", "2405.00042", "-o", str(tmp_path / "PAPERS"), "--base-url", arxiv.base_url,
             "--delay", "0"],
        )  # fmt: skip
    assert fetched.exit_code == 0, fetched.output
    built = runner.invoke(app, ["build", str(tmp_path / "PAPERS"), "-o", str(tmp_path / "BUILD")])
    assert built.exit_code == 0, built.output
    [instance] = read_jsonl(tmp_path / "BUILD" / "instances.jsonl", Instance)
    assert (instance.arxiv_id, instance.date, instance.licence) == (
        "2405.00042v3",
        "2024-01-02",
        CC_BY,
    )
    card = (tmp_path / "BUILD" / "card.md").read_text()
    assert "### Licences" in card and f"| {CC_BY} | 1 |" in card
