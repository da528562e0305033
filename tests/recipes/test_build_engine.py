"""build.engine=datatrove: the papers as datatrove tasks give what one process gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from synthetic_papers import PAPERS
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible import responder
from papergym.jsonl import read_jsonl
from papergym.llm.config import LLMConfig
from papergym.recipes.output import settings_for
from papergym.recipes.paper_tasks import PaperJob, in_share, run_task
from papergym.recipes.run import build_papers, prepare
from papergym.recipes.settings import BuildSection
from papergym.records import Drop, Instance

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "papers" / "sparse-attention-toy"
ENGINE = ["build.engine=datatrove", "build.tasks=3", "build.workers=2"]


def write_sources(root: Path) -> Path:
    """Five sources: the three synthetic papers, the bundled one, and one with no paper."""
    for name, text in PAPERS.items():
        (root / name).mkdir(parents=True)
        (root / name / "main.tex").write_text(text, encoding="utf-8")
    shutil.copytree(EXAMPLE, root / "toy")
    (root / "empty").mkdir()
    (root / "empty" / "main.tex").write_text("\\documentclass{article}\n", encoding="utf-8")
    return root


def outputs(out: Path) -> tuple[list[Instance], list[Drop], str]:
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    card.pop("config", None)  # records the engine
    return (
        read_jsonl(out / "instances.jsonl", Instance),
        read_jsonl(out / "dropped.jsonl", Drop),
        json.dumps(card, sort_keys=True),
    )


def test_each_paper_goes_to_exactly_one_task_in_turn() -> None:
    owners = [[rank for rank in range(3) if in_share(k, rank, 3)] for k in range(7)]
    assert owners == [[0], [1], [2], [0], [1], [2], [0]]
    assert [k for k in range(7) if in_share(k, 1, 3, limit=4)] == [1]
    assert [k for k in range(7) if in_share(k, 0, 1)] == list(range(7))


@pytest.mark.slow  # two offline builds with their leakage screen
def test_tasks_run_in_turn_then_the_assembly_gives_the_single_process_build(
    tmp_path: Path,
) -> None:
    """The tasks' function for every rank in this process (no datatrove), then the command,
    which finds every paper finished and only assembles."""
    sources = write_sources(tmp_path / "papers")
    section = BuildSection(builder="extractive")
    single = build_papers([sources], tmp_path / "single", section, LLMConfig())
    assert len(single.instances) == 4 and len(single.drops) == 1
    settings = prepare([sources], tmp_path / "tasks", section, LLMConfig())  # as a launch does
    assert settings == settings_for("papergym", "extractive", LLMConfig())
    job = PaperJob(sources=(str(sources),), out=str(tmp_path / "tasks"), settings=settings)
    kept = [run_task(job.model_dump_json(), rank, 3) for rank in (2, 0, 1)]
    assert sum(kept) == 4 and not (tmp_path / "tasks" / "instances.jsonl").exists()
    again = build_papers([sources], tmp_path / "tasks", section, LLMConfig())
    assert again.resumed == 4  # the assembly built nothing
    assert outputs(tmp_path / "tasks") == outputs(tmp_path / "single")


@pytest.mark.slow
def test_three_tasks_on_two_workers_give_the_extractive_single_process_build(
    tmp_path: Path,
) -> None:
    pytest.importorskip("datatrove")
    sources = write_sources(tmp_path / "papers")
    runner = CliRunner()
    for out, extra in (("single", []), ("engine", ENGINE)):
        args = ["build", str(sources), "-o", str(tmp_path / out), "--builder", "extractive"]
        result = runner.invoke(app, [*args, "--json", *extra])
        assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "engine" / "datatrove" / "completions").iterdir())) == 3
    assert outputs(tmp_path / "engine") == outputs(tmp_path / "single")
    assert len(outputs(tmp_path / "engine")[0]) == 4


def llm_build(server: FakeOpenAIServer, sources: Path, out: Path, cache: Path, *extra: str) -> dict:
    args = ["build", str(sources), "-o", str(out), "--base-url", server.base_url, "--model", "m"]
    args += ["--cache-dir", str(cache), "--json", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary: dict = json.loads(result.stdout[result.stdout.index("{\n") :])
    return summary


@pytest.mark.slow
def test_three_tasks_on_two_workers_give_the_llm_single_process_build(tmp_path: Path) -> None:
    """Same instances, and the same calls: the tasks share the cache and ask each question once."""
    pytest.importorskip("datatrove")
    sources = write_sources(tmp_path / "papers")
    with FakeOpenAIServer(responder=responder) as server:
        single = llm_build(server, sources, tmp_path / "single", tmp_path / "cache-single")
        calls = server.request_count
        engine = llm_build(server, sources, tmp_path / "engine", tmp_path / "cache", *ENGINE)
        engine_calls = server.request_count - calls
        built = outputs(tmp_path / "engine")  # the card of the rerun records its own usage
        # a rerun on the engine: every paper finished, every call already cached
        again = llm_build(server, sources, tmp_path / "engine", tmp_path / "cache", *ENGINE)
        assert server.request_count - calls == engine_calls
    assert engine_calls == calls > 0
    # every usage row, field for field: the tasks' saved rows merge into one process's
    assert engine["usage"] == single["usage"] and engine["usage"]
    # the fake's plausible answers fail some papers' gates: drops, the same on both engines
    assert engine["instances"] == again["instances"] == single["instances"] >= 1
    assert (engine["resumed_papers"], again["resumed_papers"]) == (0, 4)  # kept or dropped
    single_out = outputs(tmp_path / "single")
    assert built[:2] == single_out[:2]
    card, single_card = json.loads(built[2]), json.loads(single_out[2])
    assert [k for k in card if card[k] != single_card.get(k)] == []
    assert outputs(tmp_path / "engine")[:2] == built[:2]


@pytest.mark.slow
def test_a_killed_task_is_resumed_from_its_papers_folders(tmp_path: Path) -> None:
    """A task killed mid-paper (its last step's file gone, nothing assembled) is resumed by the
    next run: finished papers cost nothing, the unfinished one continues, no call is repeated."""
    pytest.importorskip("datatrove")
    sources = write_sources(tmp_path / "papers")
    with FakeOpenAIServer(responder=responder) as server:
        single = llm_build(server, sources, tmp_path / "single", tmp_path / "cache-single")
        calls = server.request_count
        first = llm_build(server, sources, tmp_path / "engine", tmp_path / "cache", *ENGINE)
        assert first["instances"] == single["instances"] >= 1
        for name in ("instances.jsonl", "card.json", "card.md", "dropped.jsonl"):
            (tmp_path / "engine" / name).unlink()
        killed = next(p.parent for p in (tmp_path / "engine" / "papers").glob("*/instance.json"))
        (killed / "instance.json").unlink()
        (killed / "screened.json").unlink(missing_ok=True)
        resumed = llm_build(server, sources, tmp_path / "engine", tmp_path / "cache", *ENGINE)
        assert server.request_count - calls == calls  # the resume asked nothing new
    assert resumed["resumed_papers"] == 3  # of 4: the killed one was built again
    assert outputs(tmp_path / "engine")[:2] == outputs(tmp_path / "single")[:2]


@pytest.mark.slow
def test_a_paper_given_to_two_tasks_is_built_once(tmp_path: Path) -> None:
    """Two sources with the same content, adjacent in build order, fall to two tasks running at
    once: the tasks ask no more calls than one process, which drops the copy before building."""
    pytest.importorskip("datatrove")
    sources = write_sources(tmp_path / "papers")
    shutil.copytree(sources / "toy", sources / "toy-again")  # the next source: the other task
    two = ["build.engine=datatrove", "build.tasks=2", "build.workers=2"]
    with FakeOpenAIServer(responder=responder, latency=0.05) as server:
        single = llm_build(server, sources, tmp_path / "single", tmp_path / "cache-single")
        calls = server.request_count
        engine = llm_build(server, sources, tmp_path / "engine", tmp_path / "cache", *two)
        engine_calls = server.request_count - calls
    assert engine_calls == calls > 0
    assert engine["instances"] == single["instances"]
    assert outputs(tmp_path / "engine")[:2] == outputs(tmp_path / "single")[:2]
