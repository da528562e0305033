"""The LLM recipe and `papergym build` end to end over HTTP, against the test server."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible import responder
from papergym.jsonl import read_jsonl
from papergym.records import Drop, Instance

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "papers"
runner = CliRunner()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=responder) as running:
        yield running


def build_args(server: FakeOpenAIServer, out: Path, cache: Path, *extra: str) -> list[str]:
    return [
        "build",
        str(EXAMPLE),
        "-o",
        str(out),
        "--base-url",
        server.base_url,
        "--model",
        "m",
        "--cache-dir",
        str(cache),
        "--json",
        *extra,
    ]


def test_llm_build_end_to_end_over_http(server: FakeOpenAIServer, tmp_path: Path) -> None:
    out = tmp_path / "env"
    result = runner.invoke(app, build_args(server, out, tmp_path / "cache"))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["instances"] == 1 and summary["drops"] == []
    [instance] = read_jsonl(out / "instances.jsonl", Instance)
    assert instance.builder == "llm" and instance.recipe == "papergym"
    # discipline and sub-field come from the goal's reduce call, as metadata beside the goal
    assert instance.domain and instance.subfield
    stages = json.loads(next((out / "papers").iterdir()).joinpath("stages.json").read_text())
    assert stages["research_goal"] and "field" not in stages
    assert len(instance.rubric.specific) == 10
    assert [c.rank for c in instance.rubric.specific] == list(range(1, 11))
    assert {c.origin for c in instance.rubric.specific} <= {"answer", "question"}
    assert {c.dimension for c in instance.rubric.specific} == {"method", "experiment"}
    assert all(any(v.method == "overlap" for v in c.leakage) for c in instance.rubric.specific)
    judged = [v for c in instance.rubric.specific for v in c.leakage if v.method == "judge"]
    assert len(judged) == 10 and all(v.leaked is False for v in judged)
    assert len(instance.rubric.general) == 7
    for name in ("card.md", "card.json", "config.yaml", "dropped.jsonl"):
        assert (out / name).is_file(), name
    paper_dirs = list((out / "papers").iterdir())
    assert {p.name for p in paper_dirs[0].iterdir()} >= {
        "paper.json",
        "stages.json",
        "instance.json",
    }
    calls = sum(row["calls"] for row in summary["usage"])
    assert calls == len(
        server.requests
    )  # every chat request is accounted for (the ping is not one)
    assert calls <= 21  # units + 4 reduces + question + reference + R_A + R_Q + merge + leakage


def test_rerun_makes_no_calls_and_no_duplicates(server: FakeOpenAIServer, tmp_path: Path) -> None:
    out = tmp_path / "env"
    assert runner.invoke(app, build_args(server, out, tmp_path / "cache")).exit_code == 0
    chat_calls = len([r for r in server.requests if "messages" in r])
    # simulate a kill after the stages: remove the instance, keep stages.json
    [paper_dir] = list((out / "papers").iterdir())
    (paper_dir / "instance.json").unlink()
    again = runner.invoke(app, build_args(server, out, tmp_path / "cache"))
    assert again.exit_code == 0, again.output
    assert len([r for r in server.requests if "messages" in r]) == chat_calls  # all from the cache
    assert len(read_jsonl(out / "instances.jsonl", Instance)) == 1


def test_different_configuration_in_the_same_folder_is_refused(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    out = tmp_path / "env"
    assert runner.invoke(app, build_args(server, out, tmp_path / "cache")).exit_code == 0
    other = runner.invoke(app, build_args(server, out, tmp_path / "cache", "--recipe", "innov"))
    assert other.exit_code == 2
    assert "different configuration (recipe: papergym → innov)" in other.output


@pytest.mark.parametrize("recipe", ["innov", "design"])
def test_innov_and_design_recipes(server: FakeOpenAIServer, tmp_path: Path, recipe: str) -> None:
    out = tmp_path / recipe
    result = runner.invoke(app, build_args(server, out, tmp_path / "cache", "--recipe", recipe))
    assert result.exit_code == 0, result.output
    [instance] = read_jsonl(out / "instances.jsonl", Instance)
    wanted = "method" if recipe == "innov" else "experiment"
    assert instance.recipe == recipe
    assert {c.dimension for c in instance.rubric.specific} == {wanted}


def test_unreachable_endpoint_fails_fast_before_work(tmp_path: Path) -> None:
    out = tmp_path / "env"
    args = [
        "build",
        str(EXAMPLE),
        "-o",
        str(out),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert "unreachable" in result.output
    assert not out.exists()  # checked before the output folder is created


def test_unparseable_answers_drop_the_paper_with_a_reason(tmp_path: Path) -> None:
    with FakeOpenAIServer(default="malformed") as broken:
        out = tmp_path / "env"
        result = runner.invoke(app, build_args(broken, out, tmp_path / "cache"))
    # Output still invalid after the repairs is the paper's drop, and no instance is a failure.
    assert result.exit_code == 2, result.output
    assert "no instance built" in result.stderr
    [drop] = read_jsonl(out / "dropped.jsonl", Drop)
    assert drop.step.startswith("llm:") and "attempt" in drop.reason
    assert read_jsonl(out / "instances.jsonl", Instance) == []


def test_a_bad_paper_among_good_ones_is_dropped_and_the_rest_finish(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    papers = tmp_path / "papers"
    shutil.copytree(EXAMPLE / "sparse-attention-toy", papers / "good")
    (papers / "broken.tar.gz").write_bytes(b"\x1f\x8b garbage")
    out = tmp_path / "env"
    args = [
        "build",
        str(papers),
        "-o",
        str(out),
        "--base-url",
        server.base_url,
        "--model",
        "m",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--json",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(read_jsonl(out / "instances.jsonl", Instance)) == 1
    [drop] = read_jsonl(out / "dropped.jsonl", Drop)
    assert drop.step == "ingest" and "corrupt archive" in drop.reason
