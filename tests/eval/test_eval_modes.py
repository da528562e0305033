"""``papergym eval`` with the ARES ablation rewards and graded verdicts (scripted judge)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.eval.records import EvalScore
from papergym.fakellm.plausible import responder as plausible
from papergym.fakellm.server import FakeOpenAIServer
from papergym.jsonl import write_jsonl
from support.reward_load import mixed_instances

runner = CliRunner()
INSTANCES = mixed_instances(2)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "build" / "instances.jsonl"
    path.parent.mkdir()
    write_jsonl(path, INSTANCES)
    return path.parent


@pytest.fixture
def servers() -> Iterator[tuple[FakeOpenAIServer, FakeOpenAIServer, FakeOpenAIServer]]:
    """A system answering with the reference, one evading, and the plausible judge."""
    references = {i.question: i.reference_answer for i in INSTANCES}

    def good_answer(body: dict[str, Any]) -> str:
        return references[str(body["messages"][-1]["content"])]

    good = FakeOpenAIServer(responder=good_answer)
    poor = FakeOpenAIServer(responder=lambda body: "I would think about it carefully.")
    judge = FakeOpenAIServer(responder=plausible)
    with good, poor, judge:
        yield good, poor, judge


def _scores(out: Path) -> list[EvalScore]:
    lines = (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    return [EvalScore.model_validate_json(line) for line in lines]


@pytest.mark.parametrize(
    "setting", ["reward.mode=holistic", "reward.mode=generic_only", "reward.verdict=graded"]
)
def test_eval_scores_in_each_llm_mode(
    data: Path,
    tmp_path: Path,
    servers: tuple[FakeOpenAIServer, FakeOpenAIServer, FakeOpenAIServer],
    setting: str,
) -> None:
    good, poor, judge = servers
    out = tmp_path / "eval"
    backend = {"model": "j", "base_url": [judge.base_url], "max_retries": 0}
    result = runner.invoke(
        app,
        [
            "eval", f"good=openai:m@{good.base_url}", f"poor=openai:m@{poor.base_url}",
            "--data", str(data), "-o", str(out), "--judge", "llm", "--split", "all",
            "llm.cache=false", "eval.resamples=50", f"llm.roles.judge={json.dumps(backend)}",
            setting,
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    scores = _scores(out)
    mode = setting.split("=")[1] if "mode" in setting else "rubric"
    assert len(scores) == 4 and {s.mode for s in scores} == {mode}
    assert all(s.value is not None for s in scores)
    if mode == "holistic":
        assert all(s.verdicts == () and s.alpha is None for s in scores)
        mean = {n: sum(s.value or 0 for s in scores if s.system == n) for n in ("good", "poor")}
        assert mean["good"] > mean["poor"]
    if setting == "reward.verdict=graded":
        assert all(v.grade is not None for s in scores for v in s.verdicts)
    if mode == "generic_only":
        assert all(v.kind == "general" for s in scores for v in s.verdicts)


def test_a_folder_scored_in_another_mode_is_refused(
    data: Path,
    tmp_path: Path,
    servers: tuple[FakeOpenAIServer, FakeOpenAIServer, FakeOpenAIServer],
) -> None:
    """generic_only's judge has the rubric judge's name: the mode itself must part them."""
    good, _, judge = servers
    out = tmp_path / "eval"
    backend = {"model": "j", "base_url": [judge.base_url], "max_retries": 0}
    args = [
        "eval", f"good=openai:m@{good.base_url}", "--data", str(data), "-o", str(out),
        "--judge", "llm", "--split", "all", "llm.cache=false", "eval.resamples=50",
        f"llm.roles.judge={json.dumps(backend)}",
    ]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0
    before = (out / "scores.jsonl").read_bytes()
    other = runner.invoke(app, [*args, "reward.mode=generic_only"])
    assert other.exit_code == 2 and "mode" in other.output
    assert len(other.output.strip().splitlines()) == 1
    assert (out / "scores.jsonl").read_bytes() == before


def test_generic_only_is_refused_with_the_offline_judge(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    result = runner.invoke(
        app,
        ["eval", "x=openai:m@http://127.0.0.1:9", "--data", str(data), "-o", str(out),
         "--judge", "offline", "--split", "all", "reward.mode=generic_only"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "generic_only needs an LLM judge" in result.output
    assert not out.exists()
