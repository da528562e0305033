"""``papergym eval`` and the servers behind its systems and its judge (issue 20, items 1, 6, 27).

One model name behind two servers is two systems, with the response cache on; the judge is set
with ``--base-url``/``--model`` like the other commands' LLMs, ``--no-cache`` bypasses the
cache, the judge's calls join the usage table, and the α the reward applied is what the summary
says.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.eval.records import EvalAnswer, EvalSummary
from papergym.fakellm.server import FakeOpenAIServer
from papergym.jsonl import read_jsonl, write_jsonl
from papergym.records import Instance
from support.plans_server import responder as judge_responder
from support.reward_load import mixed_instances

runner = CliRunner()


@pytest.fixture(scope="module")
def instances() -> list[Instance]:
    return mixed_instances(4)


@pytest.fixture
def data(tmp_path: Path, instances: list[Instance]) -> Path:
    folder = tmp_path / "build"
    folder.mkdir()
    write_jsonl(folder / "instances.jsonl", instances)
    return folder


@pytest.fixture
def servers(instances: list[Instance]) -> Iterator[tuple[FakeOpenAIServer, FakeOpenAIServer]]:
    """Two servers that both call their model ``m`` and answer differently."""
    references = {i.question: i.reference_answer for i in instances}

    def question(body: dict[str, Any]) -> str:
        return str(body["messages"][-1]["content"])

    first = FakeOpenAIServer(responder=lambda body: references[question(body)])
    second = FakeOpenAIServer(responder=lambda body: "I would think about it carefully.")
    with first, second:
        yield first, second


def _eval(out: Path, data: Path, *args: str | Path) -> Any:
    command = ["eval", *map(str, args), "--data", str(data), "-o", str(out), "--split", "all"]
    return runner.invoke(app, [*command, "eval.resamples=200"])


def _summary(out: Path) -> EvalSummary:
    return EvalSummary.model_validate_json((out / "summary.json").read_text(encoding="utf-8"))


def test_one_model_name_on_two_servers_is_two_systems_with_the_cache_on(
    data: Path, tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    """Before: the second server was never asked (0 calls, every answer a cache hit of the
    first server's) and the difference was 0."""
    first, second = servers
    systems = [f"a=openai:m@{first.base_url}", f"b=openai:m@{second.base_url}"]
    cache = f"llm.cache_dir={tmp_path / 'cache'}"  # the cache on, in a folder of this test
    result = _eval(tmp_path / "e1", data, *systems, "--judge", "offline", cache)
    assert result.exit_code == 0, result.output
    assert first.request_count == second.request_count == 4
    answers = {(a.system, a.instance_id): a.answer for a in _answers(tmp_path / "e1")}
    assert all(answers[("a", key)] != answers[("b", key)] for _, key in answers)
    (pair,) = _summary(tmp_path / "e1").pairs
    assert pair.reward.value is not None and pair.reward.value > 0.5

    # the cache still serves each server its own answers...
    again = _eval(tmp_path / "e2", data, *systems, "--judge", "offline", cache)
    assert again.exit_code == 0, again.output
    assert first.request_count == second.request_count == 4
    assert {(a.system, a.instance_id): a.answer for a in _answers(tmp_path / "e2")} == answers
    # ...and --no-cache asks them again
    bypass = _eval(tmp_path / "e3", data, *systems, "--judge", "offline", cache, "--no-cache")
    assert bypass.exit_code == 0, bypass.output
    assert first.request_count == second.request_count == 8


def _answers(out: Path) -> list[EvalAnswer]:
    return read_jsonl(out / "answers.jsonl", EvalAnswer)


def test_a_system_moved_to_another_server_does_not_resume_the_old_answers(
    data: Path, tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    first, second = servers
    out = tmp_path / "eval"
    args = ("--judge", "offline", "llm.cache=false")
    assert _eval(out, data, f"a=openai:m@{first.base_url}", *args).exit_code == 0
    before = (out / "answers.jsonl").read_bytes()
    moved = _eval(out, data, f"a=openai:m@{second.base_url}", *args)
    assert moved.exit_code == 2, moved.output
    # runfolder's refusal: the dotted key, its old and new values
    assert f"systems.a: m@{first.base_url} → m@{second.base_url}" in " ".join(moved.output.split())
    assert (out / "answers.jsonl").read_bytes() == before and second.request_count == 0


def test_the_judge_is_set_with_base_url_and_model_like_the_other_commands_llms(
    data: Path, tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    first, _ = servers
    with FakeOpenAIServer(responder=judge_responder) as judge:  # a verdict per criterion
        flags = ["--base-url", judge.base_url, "--model", "judge-m", "--no-cache"]
        result = _eval(tmp_path / "eval", data, f"a=openai:m@{first.base_url}", *flags)
        assert result.exit_code == 0, result.output
        assert judge.request_count > 0
        assert _summary(tmp_path / "eval").judge.startswith("llm:judge-m")
        # the system keeps its own server: it was asked once per question
        assert first.request_count == 4


def test_the_judges_calls_are_in_the_usage_table(
    data: Path, tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    """Before: the table listed the systems' calls only."""
    first, _ = servers
    with FakeOpenAIServer(responder=judge_responder) as judge:
        judge_llm = [f"llm.default.base_url={judge.base_url}", "llm.default.model=judge-m"]
        out = tmp_path / "eval"
        result = _eval(out, data, f"a=openai:m@{first.base_url}", *judge_llm, "llm.cache=false")
        assert result.exit_code == 0, result.output
        table = result.output[result.output.index("LLM usage") :]
        rows = [line.split("│") for line in table.splitlines() if "reward:" in line]
        assert {row[1].strip() for row in rows} == {"reward:specific", "reward:general"}
        # counted as the server saw them
        assert sum(int(row[4].replace(",", "")) for row in rows) == judge.request_count > 0
        assert "eval:a" in table
    # every answer was judged on its general criteria too: reward.alpha applied
    from papergym.eval.records import AlphaUse  # here: the rest runs on older versions too

    summary = _summary(out)
    scored = sum(s.scored for s in summary.systems)
    assert scored > 0 and summary.alphas == (AlphaUse(alpha=0.7, answers=scored),)
    assert "α = 0.7," in " ".join(result.output.split())


def test_the_alpha_the_offline_judge_applied_is_recorded_and_shown(
    data: Path, tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    """Before: summary and report said α = 0.7 while every reward was the specific score
    alone (α = 1): the offline judge grades no general criterion."""
    first, _ = servers
    out = tmp_path / "eval"
    args = ("--judge", "offline", "llm.cache=false")
    result = _eval(out, data, f"a=openai:m@{first.base_url}", *args)
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    assert "α = 1 (reward.alpha 0.7 not applied: no general criterion graded)" in shown
    from papergym.eval.records import AlphaUse  # here: the rest runs on older versions too

    summary = _summary(out)
    assert summary.alpha == 0.7 and summary.alphas == (AlphaUse(alpha=1.0, answers=4),)
    report = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "report.html")])
    assert report.exit_code == 0, report.output
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "α = 1 (reward.alpha 0.7 not applied: no general criterion graded)" in markdown


def test_the_judges_calls_tokens_and_the_answers_latency_are_recorded_per_system(
    data: Path, tmp_path: Path, servers: tuple[FakeOpenAIServer, FakeOpenAIServer]
) -> None:
    """Issue 26: the report's cost per system needs the judge's calls per system and each
    answer's tokens and latency in the folder, not only in the terminal's table."""
    from papergym.eval.records import EvalJudgeUsage  # here: the rest runs on older versions too

    first, second = servers
    with FakeOpenAIServer(responder=judge_responder) as judge:
        judge_llm = [f"llm.default.base_url={judge.base_url}", "llm.default.model=judge-m"]
        out = tmp_path / "eval"
        systems = [f"a=openai:m@{first.base_url}", f"b=openai:m@{second.base_url}"]
        result = _eval(out, data, *systems, *judge_llm, "llm.cache=false")
        assert result.exit_code == 0, result.output
        lines = read_jsonl(out / "judge_usage.jsonl", EvalJudgeUsage)
        assert sorted(line.system for line in lines) == ["a", "b"]
        assert sum(line.calls for line in lines) == judge.request_count > 0
        assert all(line.answers == 4 and line.cost_usd is None for line in lines)  # unpriced
    answers = read_jsonl(out / "answers.jsonl", EvalAnswer)
    assert all(a.latency_s is not None and a.latency_s > 0 and not a.cached for a in answers)
    assert all(a.completion_tokens is not None and a.cost_usd is None for a in answers)
    page = tmp_path / "report.html"
    assert runner.invoke(app, ["report", str(out), "-o", str(page)]).exit_code == 0
    cells = " ".join(page.read_text(encoding="utf-8").split())
    assert "Cost, tokens and latency" in cells and "unpriced" in cells
    calls = {line.system: line.calls for line in lines}
    assert "<td>a</td>" in cells and f"{calls['a']:,} (0 from cache)" in cells
