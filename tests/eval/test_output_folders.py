"""``eval -o``, ``compare -o`` and ``report -o`` never replace another command's files
(issue 20, item 12): a folder or file they did not write is refused with one line, exit 2,
and left as it was; their own is resumed or replaced."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm.server import FakeOpenAIServer
from papergym.jsonl import write_jsonl
from support.reward_load import mixed_instances

runner = CliRunner()


def _pick(body: dict[str, Any]) -> dict[str, str]:
    return {"reason": "scripted", "overall": "A", "method": "A", "experiment": "A"}


@pytest.fixture
def servers() -> Iterator[tuple[FakeOpenAIServer, FakeOpenAIServer]]:
    """A system's server (echoes the question) and a compare judge (always picks A)."""
    system = FakeOpenAIServer(responder=lambda body: str(body["messages"][-1]["content"]))
    judge = FakeOpenAIServer(responder=_pick)
    with system, judge:
        yield system, judge


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "build"
    folder.mkdir()
    write_jsonl(folder / "instances.jsonl", mixed_instances(2))
    return folder


def _foreign(folder: Path) -> dict[str, bytes]:
    """A folder of the user's own: a config and a summary of something else, and notes."""
    folder.mkdir(parents=True)
    files = {
        "config.yaml": b"mine: true\n",
        "summary.json": b'{"mine": true}\n',
        "notes.txt": b"keep me\n",
    }
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return files


def _untouched(folder: Path, files: dict[str, bytes]) -> None:
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == files


def _refused(result: Any, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    shown = " ".join(result.output.split())
    assert all(needle in shown for needle in needles), shown


def _eval(out: Path, data: Path, server: FakeOpenAIServer) -> Any:
    return runner.invoke(
        app,
        [
            "eval",
            f"a=openai:m@{server.base_url}",
            f"b=openai:n@{server.base_url}",
            "--data",
            str(data),
            "-o",
            str(out),
            "--judge",
            "offline",
            "--split",
            "all",
            "llm.cache=false",
            "eval.resamples=100",
        ],
    )


def test_eval_refuses_a_folder_it_did_not_write(
    tmp_path: Path, data: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    system, _ = servers
    out = tmp_path / "mine"
    files = _foreign(out)
    _refused(_eval(out, data, system), "not a `papergym eval` folder", "use another -o")
    _untouched(out, files)
    assert system.request_count == 0
    # an empty folder is used, and then resumed as its own
    (tmp_path / "empty").mkdir()
    assert _eval(tmp_path / "empty", data, system).exit_code == 0
    asked = system.request_count
    assert _eval(tmp_path / "empty", data, system).exit_code == 0
    assert system.request_count == asked == 2 * 2


def _compare(out: Path, eval_dir: Path, judge: FakeOpenAIServer) -> Any:
    return runner.invoke(
        app,
        [
            "compare",
            str(eval_dir),
            "-o",
            str(out),
            "--base-url",
            judge.base_url,
            "--model",
            "judge-m",
            "--no-cache",
        ],
    )


def test_compare_refuses_a_folder_it_did_not_write_and_shows_its_usage(
    tmp_path: Path, data: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    system, judge = servers
    evaluated = tmp_path / "eval"
    assert _eval(evaluated, data, system).exit_code == 0
    out = tmp_path / "mine"
    files = _foreign(out)
    _refused(_compare(out, evaluated, judge), "not a `papergym compare` folder")
    _untouched(out, files)
    eval_files = {p.name: p.read_bytes() for p in evaluated.iterdir()}
    _refused(_compare(evaluated, evaluated, judge), "not a `papergym compare` folder")
    _untouched(evaluated, eval_files)
    assert judge.request_count == 0
    # its own folder: written, then resumed
    done = _compare(tmp_path / "cmp", evaluated, judge)
    assert done.exit_code == 0, done.output
    asked = judge.request_count
    assert asked == 2 * 2  # questions × orderings of two systems
    # the judge's calls are shown, as every other LLM-using command shows them (item 27)
    table = done.output[done.output.index("LLM usage") :]
    (row,) = [line.split("│") for line in table.splitlines() if "judge-m" in line]
    assert row[1].strip() == "compare" and int(row[4]) == asked
    assert _compare(tmp_path / "cmp", evaluated, judge).exit_code == 0
    assert judge.request_count == asked


def test_report_never_replaces_a_markdown_file_it_did_not_write(
    tmp_path: Path, data: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    system, _ = servers
    evaluated = tmp_path / "eval"
    assert _eval(evaluated, data, system).exit_code == 0
    page = tmp_path / "site" / "report.html"
    page.parent.mkdir()
    mine = page.with_suffix(".md")
    mine.write_text("# My own report notes\n", encoding="utf-8")
    refused = runner.invoke(app, ["report", str(evaluated), "-o", str(page)])
    _refused(refused, "report.md", "not written by `papergym report`")
    assert mine.read_text(encoding="utf-8") == "# My own report notes\n" and not page.exists()
    # nor a page of the user's at the default name
    page.write_text("<html><title>My page</title></html>", encoding="utf-8")
    mine.unlink()
    _refused(runner.invoke(app, ["report", str(evaluated), "-o", str(page)]), "report.html")
    assert page.read_text(encoding="utf-8").startswith("<html><title>My page")
    # its own files are replaced on the next run
    page.unlink()
    for _ in range(2):
        written = runner.invoke(app, ["report", str(evaluated), "-o", str(page)])
        assert written.exit_code == 0, written.output
    assert mine.read_text(encoding="utf-8").startswith("# PaperGym report: evaluation\n")
    assert "<title>PaperGym report: evaluation</title>" in page.read_text(encoding="utf-8")
    # a page and notes written by an earlier version (titled "evaluation report") are its own
    page.write_text("<html><title>PaperGym evaluation report</title></html>", encoding="utf-8")
    mine.write_text("# PaperGym evaluation report\n", encoding="utf-8")
    assert runner.invoke(app, ["report", str(evaluated), "-o", str(page)]).exit_code == 0


def test_compare_never_mixes_in_verdicts_of_the_judge_model_on_another_server(
    tmp_path: Path, data: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    """Before: verdicts were keyed by the judge's role and model name, so a resume with the
    judge behind another server kept the first server's verdicts."""
    system, judge = servers
    evaluated = tmp_path / "eval"
    assert _eval(evaluated, data, system).exit_code == 0
    out = tmp_path / "cmp"
    assert _compare(out, evaluated, judge).exit_code == 0
    with FakeOpenAIServer(responder=_pick) as moved:
        again = _compare(out, evaluated, moved)
        assert again.exit_code == 2, again.output
        assert "holds a verdict of another comparison" in again.output
        assert f"judge-m@{moved.base_url}" not in again.output  # the old one is named
        assert f"judge-m@{judge.base_url}" in " ".join(again.output.split())
        assert moved.request_count == 0
