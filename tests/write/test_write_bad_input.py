"""Bad input to ``papergym write``: one line each, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from support.writer import BIB

runner = CliRunner()
LLM = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]


def errors(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error")]


def test_no_llm_says_which_options_are_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("PAPERGYM_BASE_URL", "PAPERGYM_MODEL", "PAPERGYM_LLM_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    bib = tmp_path / "a.bib"
    bib.write_text(BIB, encoding="utf-8")
    result = runner.invoke(app, ["write", str(bib), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    [line] = errors(result.output)
    assert "--base-url" in line and "--model" in line and "--llm-config" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("@article{a, title = {never closed\n", "does not parse as BibTeX"),
        ("", "no BibTeX entries"),
        ("% only a comment\n", "no BibTeX entries"),
        ("@misc{a, author={X}}\n", "no BibTeX entry with a title (1 without one)"),
    ],
)
def test_unusable_bib_is_one_line_and_nothing_is_written(
    tmp_path: Path, text: str, reason: str
) -> None:
    good = tmp_path / "good.bib"
    good.write_text(BIB, encoding="utf-8")
    bad = tmp_path / "bad.bib"
    bad.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(app, ["write", str(good), str(bad), "-o", str(out), *LLM])
    assert result.exit_code == 2
    [line] = errors(result.output)
    assert str(bad) in line and reason in line
    assert not out.exists()  # every .bib is checked before anything is written


def test_a_bib_whose_entries_mostly_fail_is_refused_not_written_from_one(tmp_path: Path) -> None:
    # issue 20 #15: 4 of 5 entries broken used to give a paper written from 1 reference
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{good, title={Attention Is All You Need}, year=2017}\n"
        "@article{nocomma title={Deep Residual Learning}, year=2016}\n"
        "@article{glued, title={Adam} year={2014}}\n"
        "@article{unclosed, title={Layer Normalization, year=2016}\n"
        "@article{, title={Batch Normalization}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = runner.invoke(app, ["write", str(bib), "-o", str(out), *LLM])
    assert result.exit_code == 2, result.output
    [line] = errors(result.output)
    assert str(bib) in line
    assert "only 1 usable reference, fewer than the 3 needed (write.min_references)" in line
    assert "4 entries could not be parsed (first at line 2:" in line
    assert not out.exists()


def test_missing_bib_and_output_that_is_a_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["write", str(tmp_path / "nope.bib"), "-o", str(tmp_path), *LLM])
    assert result.exit_code == 2 and "no such file" in errors(result.output)[0]
    bib = tmp_path / "a.bib"
    bib.write_text(BIB, encoding="utf-8")
    afile = tmp_path / "file"
    afile.write_text("x")
    result = runner.invoke(app, ["write", str(bib), "-o", str(afile), *LLM])
    assert result.exit_code == 2 and "not a folder" in errors(result.output)[0]


def test_an_output_folder_another_command_wrote_is_refused(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    out = tmp_path / "reviews"  # a `papergym review -o` folder
    out.mkdir()
    (out / "reviews.jsonl").write_text("{}\n", encoding="utf-8")
    result = runner.invoke(app, ["write", str(bib), "-o", str(out), *LLM])
    assert result.exit_code == 2, result.output
    [line] = errors(result.output)
    assert "not a `papergym write` folder" in line
    assert sorted(p.name for p in out.iterdir()) == ["reviews.jsonl"]


def test_a_users_own_paper_folder_of_the_same_name_is_never_written_into(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    own = tmp_path / "papers" / "refs"  # where `write refs.bib -o papers` would write
    own.mkdir(parents=True)
    (own / "paper.tex").write_text("\\documentclass{article} my own paper", encoding="utf-8")
    result = runner.invoke(app, ["write", str(bib), "-o", str(tmp_path / "papers"), *LLM])
    assert result.exit_code == 2, result.output
    [line] = errors(result.output)
    assert str(own) in line and "no job.json" in line
    assert (own / "paper.tex").read_text(encoding="utf-8").endswith("my own paper")
    assert sorted(p.name for p in own.iterdir()) == ["paper.tex"]
