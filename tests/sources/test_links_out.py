"""Links leading out of a folder are not read (issue 20, item 9).

A folder of papers or data prepared by someone else can hold ``leak.txt -> /etc/passwd``: every
reader that lists a folder reads, and sends to an LLM, only what stays inside it. A file named on
the command line is read wherever it is. The secret here is a file of the test's own, outside the
folder, standing for /etc/passwd.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.eval.data import load_eval_data
from papergym.ingestion import ingest_sources
from papergym.jsonl import write_jsonl
from papergym.report.parts import load_input
from papergym.review.papers import load_papers
from papergym.sources.bib import references_of
from papergym.sources.discover import discover
from papergym.sources.files import leads_out
from papergym.write.prepare import prepare_papers
from papergym.write.settings import WriteSection
from support.papers import MINIMAL_MAIN, write_paper
from support.reward_load import mixed_instances

runner = CliRunner()

SECRET = "HUNTER2 the secret password"
PAPER = "# A Paper\n\n1 INTRODUCTION\n\nWe propose a method and test it on two benchmarks.\n"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "passwd.txt"
    path.parent.mkdir()
    path.write_text(f"# {SECRET}\n\n1 INTRODUCTION\n\n{SECRET}.\n", encoding="utf-8")
    return path


def link(at: Path, target: Path) -> Path:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(target)
    return at


def test_leads_out_follows_every_link_on_the_way(tmp_path: Path, secret: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "real.txt").write_text(PAPER, encoding="utf-8")
    inner = link(folder / "inner.txt", folder / "real.txt")
    outer = link(folder / "leak.txt", secret)
    assert not leads_out(folder / "real.txt", folder) and not leads_out(inner, folder)
    assert leads_out(outer, folder)
    assert not leads_out(link(tmp_path / "alias", folder) / "real.txt", tmp_path / "alias")


def test_review_refuses_a_text_paper_linked_out_of_its_folder(tmp_path: Path, secret: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "real.txt").write_text(PAPER, encoding="utf-8")
    link(folder / "leak.txt", secret)
    with pytest.raises(BadInputError, match="a link leading out of"):
        load_papers([folder])
    out = tmp_path / "out"
    result = runner.invoke(app, ["review", str(folder), "-o", str(out), "--reviewer", "offline"])
    assert result.exit_code == 2 and "leak.txt: a link leading out of" in result.output
    assert not out.exists()
    # named on the command line, the file is the user's choice
    assert [p.paper_id for p in load_papers([folder / "leak.txt"])] == ["leak"]


def test_review_and_ingest_refuse_a_paper_folder_linked_out(tmp_path: Path) -> None:
    secret_paper = write_paper(tmp_path / "elsewhere" / "secret-paper", {"main.tex": MINIMAL_MAIN})
    folder = tmp_path / "papers"
    write_paper(folder / "ok", {"main.tex": MINIMAL_MAIN.replace("Minimal", "Kept")})
    link(folder / "stolen", secret_paper)
    with pytest.raises(BadInputError, match="stolen: a link leading out of"):
        load_papers([folder])
    report = ingest_sources([folder])
    assert [p.title for p in report.papers] == ["A Kept Paper"]
    [failure] = report.failures
    assert "a link leading out of" in failure.reason
    assert [s.path.name for s in discover(folder / "stolen")] == ["stolen"]  # named: read


def test_a_tex_linked_out_of_a_paper_folder_is_not_its_main_file(tmp_path: Path) -> None:
    secret_tex = tmp_path / "elsewhere" / "main.tex"
    secret_tex.parent.mkdir()
    secret_tex.write_text(MINIMAL_MAIN.replace("Minimal", "Secret"), encoding="utf-8")
    folder = tmp_path / "papers"
    write_paper(folder / "ok", {"main.tex": MINIMAL_MAIN.replace("Minimal", "Kept")})
    link(folder / "other.tex", secret_tex)
    # it used to make the folder one paper, then fail with an internal ValueError
    report = ingest_sources([folder])
    assert [p.title for p in report.papers] == ["A Kept Paper"]
    [failure] = report.failures
    assert failure.source.endswith("other.tex") and "a link leading out of" in failure.reason
    [named] = ingest_sources([folder / "other.tex"]).papers  # named: read
    assert named.title == "A Secret Paper"


def test_write_prepare_reads_no_bbl_linked_out(tmp_path: Path) -> None:
    bbl = tmp_path / "elsewhere" / "stolen.bbl"
    bbl.parent.mkdir()
    bbl.write_text(
        "\\begin{thebibliography}{1}\n\\bibitem{k} A. Author. \\newblock " + SECRET
        + ". \\newblock 2020.\n\\end{thebibliography}\n",
        encoding="utf-8",
    )  # fmt: skip
    root = write_paper(tmp_path / "paper", {"main.tex": MINIMAL_MAIN})
    link(root / "main.bbl", bbl)
    refs = references_of(root)
    assert not any(SECRET in r.title for r in refs.references)
    folder = tmp_path / "papers"
    folder.mkdir()
    link(folder / "stolen", root)
    [dropped] = prepare_papers(discover(folder), WriteSection())
    assert dropped.drop is not None and "a link leading out of" in dropped.drop.reason


def test_eval_data_and_eval_folders_linked_out_are_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere" / "instances.jsonl"
    elsewhere.parent.mkdir()
    write_jsonl(elsewhere, mixed_instances(2))
    build = tmp_path / "build"
    build.mkdir()
    link(build / "instances.jsonl", elsewhere)
    with pytest.raises(BadInputError, match="a link leading out of"):
        load_eval_data(build, "all", None)
    assert load_eval_data(elsewhere, "all", None).instances  # named: read
    folder = tmp_path / "eval"
    folder.mkdir()
    summary = tmp_path / "elsewhere" / "summary.json"
    summary.write_text(json.dumps({"secret": SECRET}), encoding="utf-8")
    link(folder / "summary.json", summary)
    with pytest.raises(BadInputError, match="a link leading out of"):
        load_input(folder)
