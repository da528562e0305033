from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import read_jsonl
from papergym.records import Paper
from support.papers import MINIMAL_MAIN, write_paper

runner = CliRunner()


def test_ingest_writes_papers_and_prints_a_summary(minimal_paper: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["ingest", str(minimal_paper), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "A Minimal Paper" in result.output
    assert "main.tex" in result.output
    [paper] = read_jsonl(out / "papers.jsonl", Paper)
    assert paper.title == "A Minimal Paper"


def test_json_output_without_out_writes_nothing(
    minimal_paper: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["ingest", str(minimal_paper), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["papers"][0]["title"] == "A Minimal Paper"
    assert data["failures"] == [] and data["written"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["minimal"]


def test_missing_source_is_one_line_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ingest", str(tmp_path / "nope"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "nope: no such file or folder" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_partial_failure_finishes_the_rest_and_lists_failures(
    minimal_paper: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    args = ["ingest", str(minimal_paper), str(tmp_path / "nope"), "-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0
    assert "1 source(s) skipped" in result.output and "nope" in result.output
    assert len(read_jsonl(out / "papers.jsonl", Paper)) == 1
    failures = [
        json.loads(line) for line in (out / "ingest_failures.jsonl").read_text().splitlines()
    ]
    assert failures[0]["reason"] == "no such file or folder"
    assert runner.invoke(app, [*args, "--strict"]).exit_code == 2


def test_output_path_that_is_a_file_is_bad_input(minimal_paper: Path, tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("keep me")
    result = runner.invoke(app, ["ingest", str(minimal_paper), "-o", str(target)])
    assert result.exit_code == 2
    assert target.read_text() == "keep me"


def test_usage_errors_exit_2() -> None:
    assert runner.invoke(app, ["ingest"]).exit_code == 2
    assert runner.invoke(app, ["ingest", "x", "--no-such-flag"]).exit_code == 2


def test_help_explains_every_option() -> None:
    result = runner.invoke(app, ["ingest", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for option in ("--out", "--json", "--strict", "--debug", "arXiv e-print"):
        assert option in " ".join(result.output.split())  # help wraps at the terminal's width


def test_internal_error_exits_1_with_traceback_only_under_debug(
    minimal_paper: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("papergym.cli.ingest.ingest_sources", explode)
    args = ["ingest", str(minimal_paper), "-o", str(tmp_path / "o")]
    quiet = runner.invoke(app, args)
    assert quiet.exit_code == 1
    assert "internal error: RuntimeError: boom" in quiet.output
    assert "Traceback" not in quiet.output
    loud = runner.invoke(app, [*args, "--debug"])
    assert loud.exit_code == 1
    assert "Traceback" in loud.output


def test_a_crashing_paper_is_reported_and_exits_1_after_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import papergym.ingestion as ingest_module

    real = ingest_module.read_paper

    def flaky(source, limits=None):  # type: ignore[no-untyped-def]
        if source.path.name == "bad":
            raise ZeroDivisionError("bug")
        return real(source, limits)

    monkeypatch.setattr(ingest_module, "read_paper", flaky)
    write_paper(tmp_path / "papers" / "bad", {"main.tex": MINIMAL_MAIN})
    write_paper(tmp_path / "papers" / "good", {"main.tex": MINIMAL_MAIN.replace("Minimal", "Good")})
    result = runner.invoke(app, ["ingest", str(tmp_path / "papers"), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "internal error" in result.output
    assert [p.title for p in read_jsonl(tmp_path / "out" / "papers.jsonl", Paper)] == [
        "A Good Paper"
    ]


def test_installed_entry_point_runs(minimal_paper: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "papergym.cli", "ingest", str(minimal_paper), "--json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["papers"][0]["title"] == "A Minimal Paper"
    bad = subprocess.run(
        [sys.executable, "-m", "papergym.cli", "ingest", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("error:") and bad.stderr.strip().count("\n") == 0


def test_bracketed_user_text_is_printed_verbatim_not_as_markup(tmp_path: Path) -> None:
    paper = write_paper(
        tmp_path / "p",
        {"main.tex": MINIMAL_MAIN.replace("A Minimal Paper", "On [cite] and [bold] Things")},
    )
    result = runner.invoke(
        app, ["ingest", str(paper), "-o", str(tmp_path / "out")], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0
    assert "On [cite] and [bold] Things" in result.output
    missing = runner.invoke(app, ["ingest", str(tmp_path / "x[1]")])
    assert "x[1]: no such file or folder" in missing.output


def test_exit_unfinished_lists_five_failures_and_what_is_kept(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import typer

    from papergym.cli.common import exit_unfinished

    failures = [f"q{n}: endpoint down [503]" for n in range(7)]
    with pytest.raises(typer.Exit) as raised:
        exit_unfinished(failures, "answer(s) could not be generated; run the same command again")
    assert raised.value.exit_code == 1
    err = capsys.readouterr().err
    assert "error: q4: endpoint down [503]" in err  # shown as written, brackets and all
    assert "q5" not in err
    assert "7 answer(s) could not be generated; run the same command again" in err
