"""The writer and ``write prepare`` called from Python, without the command line (sections in,
results out, progress through callbacks), and their output folders refused before anything is
written: a paper written with other settings names what differs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.fakellm import FakeOpenAIServer
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.write.run import prepare_data, write_papers
from papergym.write.settings import WriteSection
from support.writer import BIB, ScriptedWriter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "papers"
runner = CliRunner()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        running.responder = ScriptedWriter()
        yield running


def bib(tmp_path: Path) -> Path:
    path = tmp_path / "in" / "attention.bib"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BIB, encoding="utf-8")
    return path


def llm(server: FakeOpenAIServer) -> LLMConfig:
    backend = BackendConfig(base_url=server.base_url, model="writer-m", max_retries=0)
    return LLMConfig(default=backend, cache=False)


def test_write_papers_from_python_reports_each_step(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    started: list[tuple[int | None, int]] = []
    steps: list[tuple[str, str]] = []
    run = write_papers(
        [bib(tmp_path)],
        out,
        WriteSection(),
        llm(server),
        topic="attention",
        on_start=lambda total, done: started.append((total, done)),
        on_step=lambda name, step: steps.append((name, step)),
    )
    assert started == [(None, 0)]
    [paper] = run.written
    assert steps[0] == ("attention", "outline") and steps[-1] == ("attention", "abstract")
    assert len(steps) == len(paper.sections) + 2
    assert (run.drops, run.failures, [j.name for j in run.jobs]) == ([], [], ["attention"])
    assert (out / "attention" / "paper.tex").is_file() and (out / "drops.jsonl").is_file()
    assert run.usage.as_dict()  # the writer's calls, counted


def test_a_paper_written_with_another_topic_is_refused_naming_it(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    source, out = bib(tmp_path), tmp_path / "out"
    flags = ["--base-url", server.base_url, "--model", "writer-m", "--no-cache"]
    first = runner.invoke(
        app, ["write", str(source), "-o", str(out), "--topic", "attention", *flags]
    )
    assert first.exit_code == 0, first.output
    written = sorted(p.name for p in (out / "attention").rglob("*"))
    again = runner.invoke(app, ["write", str(source), "-o", str(out), "--topic", "pruning", *flags])
    assert again.exit_code == 2, again.output
    [line] = [line for line in again.output.splitlines() if line.startswith("error")]
    # it used to say "written with other settings (topic)", without the values
    assert "topic: attention → pruning" in line and str(out / "attention") in line
    assert sorted(p.name for p in (out / "attention").rglob("*")) == written


def test_prepare_data_from_python_records_the_command_given(tmp_path: Path) -> None:
    out = tmp_path / "data"
    names: list[str] = []
    prepared = prepare_data(
        [EXAMPLES], out, WriteSection(), command="papergym write prepare X", on_paper=names.append
    )
    assert prepared.manifest.examples == 1 and names == ["sparse-attention-toy"]
    assert prepared.manifest.command == "papergym write prepare X"
    assert {p.name for p in out.iterdir()} == {
        "sft.jsonl", "prompts.jsonl", "drops.jsonl", "manifest.json",
    }  # fmt: skip


def test_prepare_into_a_path_under_a_file_is_bad_input(tmp_path: Path) -> None:
    # it used to read every paper, then fail creating the folder: "internal error", exit 1
    afile = tmp_path / "afile"
    afile.write_text("mine", encoding="utf-8")
    result = runner.invoke(app, ["write", "prepare", str(EXAMPLES), "-o", str(afile / "data")])
    assert result.exit_code == 2, result.output
    assert "is not a folder" in result.output and afile.read_text(encoding="utf-8") == "mine"
    with pytest.raises(BadInputError, match="not a folder"):
        prepare_data([EXAMPLES], afile / "data", WriteSection(), command="x")
