"""Verdicts backed by quotes: a scripted LLM judge that invents its quotes against one that
copies them, through the fake OpenAI server, into scores, ``score``'s summary, training logs
and eval's summary."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from papergym.cli import app
from papergym.eval.evaluate import eval_score
from papergym.eval.records import EvalAnswer, EvalSystem
from papergym.eval.summary import Bootstrap, system_summary, unbacked_text
from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible_judge import first_span, graded_text
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.records import Instance, Score
from papergym.reward.judge import RubricJudge, judgement_schema
from papergym.reward.reward import RubricReward, openrlhf_logs, trl_logs
from papergym.reward.run import score_summary
from support.instances import rubric_instance

PLAN = (
    "We route each query through a learned gate.\n"
    "The gate is evaluated on long-range benchmarks over five seeds."
)


def _instance() -> Instance:
    return rubric_instance(
        "a",
        ["Uses a learned gate.", "Evaluates on long-range benchmarks.", "Reports variance."],
        question="How can attention be made cheaper?",
        reference_answer="Route queries with a gate; evaluate on long-range tasks.",
        title="Cheap attention",
    )


def _numbers(request: dict[str, Any]) -> list[int]:
    prompt = str(request["messages"][0]["content"])
    listed = prompt.split("Criteria (", 1)[1].split("Plan to grade:", 1)[0]
    return [int(n) for n in re.findall(r"^(\d+)\. ", listed, re.MULTILINE)]


def _all_met(quote_of: Any) -> Any:
    """A judge that says every criterion is met, with the quote ``quote_of(request, n)``."""

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        return {
            "verdicts": [
                {"criterion_id": n, "reason": "met", "quote": quote_of(request, n), "verdict": 1}
                for n in _numbers(request)
            ]
        }

    return respond


def copies(request: dict[str, Any], _n: int) -> str | None:
    """The plan's first sentence, as the graded text shows it, shouted: case is forgiven."""
    span = first_span(request)
    return span.upper() if span else None


def invents(request: dict[str, Any], n: int) -> str | None:
    """Criterion 1 quotes the plan; the others quote what it never says, or nothing."""
    if n == 1:
        return first_span(request)
    return "We compare against ten strong baselines." if n == 2 else None


def _reward(server: FakeOpenAIServer) -> RubricReward:
    backend = BackendConfig(model="judge", base_url=(server.base_url,), retry_base_delay=0.0)
    return RubricReward(RubricJudge(LLMClient(LLMConfig(default=backend)), mode="all"))


def _score(responder: Any, answer: str = PLAN) -> Score:
    with FakeOpenAIServer(responder=responder) as server:
        reward = _reward(server)

        async def go() -> Score:
            try:
                return await reward.ascore(_instance(), answer)
            finally:
                await reward.judge.llm.aclose()  # type: ignore[attr-defined]

        return asyncio.run(go())


def test_a_judge_that_copies_its_quotes_keeps_every_met() -> None:
    score = _score(_all_met(copies))
    assert score.value == 1.0
    assert all(v.passed and v.unbacked is None and v.quote for v in score.verdicts)
    assert trl_logs([score])["rubric/unbacked_rate"] == 0.0


def test_a_judge_that_invents_quotes_loses_those_verdicts_and_they_are_counted() -> None:
    score = _score(_all_met(invents))
    by_id = {v.criterion_id: v for v in score.verdicts}
    assert by_id["a-c1"].passed and by_id["a-c1"].unbacked is None
    assert not by_id["a-c2"].passed and by_id["a-c2"].unbacked == "quote_not_found"
    assert by_id["a-c2"].quote == "We compare against ten strong baselines."  # kept, to inspect
    assert not by_id["a-c3"].passed and by_id["a-c3"].unbacked == "quote_missing"
    assert by_id["g1"].passed and by_id["g1"].unbacked is None  # its own call: criterion 1
    assert score.specific == pytest.approx(1 / 3) and score.general == 1.0
    # four "met" claims, two unbacked: the rate a training run logs per batch
    assert trl_logs([score])["rubric/unbacked_rate"] == pytest.approx(2 / 4)
    assert openrlhf_logs([score])["rubric_unbacked"] == [2.0]


def test_a_quote_of_the_reasoning_block_is_not_in_the_answer() -> None:
    """The judge sees the answer without its ``<think>``: a quote of the thinking backs nothing."""

    def quotes_the_thinking(request: dict[str, Any], _n: int) -> str:
        assert "SECRET" not in graded_text(request)
        return "SECRET musing about gates"

    score = _score(_all_met(quotes_the_thinking), f"<think>SECRET musing about gates</think>{PLAN}")
    assert {v.unbacked for v in score.verdicts} == {"quote_not_found"}
    assert score.value == 0.0


def test_not_met_needs_no_quote_and_the_schema_asks_for_one() -> None:
    schema = judgement_schema(1)
    parsed = schema.model_validate(
        {"verdicts": [{"criterion_id": 1, "reason": "r", "quote": None, "verdict": 0}]}
    )
    assert parsed.verdicts[0].quote is None
    properties = schema.model_json_schema()["$defs"]["JudgeVerdict"]["properties"]
    assert list(properties) == ["criterion_id", "reason", "quote", "verdict"]


def test_the_offline_judge_reports_no_rate(tmp_path: Path) -> None:
    """A judge that quotes nothing has no unbacked rate: never a rate of 0."""
    score = Score(instance_id="a", value=1.0, specific=1.0)
    assert "rubric/unbacked_rate" not in trl_logs([score])
    assert "rubric_unbacked" not in openrlhf_logs([score])
    assert "unbacked_rate" not in score_summary([score], [], "offline", tmp_path / "s.jsonl")


def test_score_reports_the_unbacked_rate_in_text_and_json(tmp_path: Path) -> None:
    instances = tmp_path / "instances.jsonl"
    instances.write_text(_instance().model_dump_json() + "\n")
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"instance_id": "a", "answer": PLAN}) + "\n")
    runner = CliRunner()
    with FakeOpenAIServer(responder=_all_met(invents)) as server:
        outputs = [
            runner.invoke(
                app,
                ["score", str(instances), str(answers), "-o", str(tmp_path / "s.jsonl"),
                 "--judge", "llm", f"llm.default.base_url={server.base_url}",
                 "llm.default.model=m", f"llm.cache_dir={tmp_path / 'cache'}", *json_flag],
            )
            for json_flag in ([], ["--json"])
        ]  # fmt: skip
    text, as_json = outputs
    assert text.exit_code == 0 and as_json.exit_code == 0, text.output + as_json.output
    summary = json.loads(as_json.stdout)
    assert (summary["unbacked"], summary["met_claimed"]) == (2, 4)
    assert summary["unbacked_rate"] == pytest.approx(0.5)
    assert "unbacked" in text.output and "0.5" in text.output
    written = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert sum(v["unbacked"] is not None for v in written[0]["verdicts"]) == 2


def test_eval_summary_counts_unbacked_verdicts() -> None:
    instance = _instance()
    answer = EvalAnswer(system="s", instance_id="a", sample=0, answer=PLAN, words=18)
    invented = eval_score(answer, instance, _score(_all_met(invents)))
    copied = eval_score(answer.model_copy(update={"sample": 1}), instance, _score(_all_met(copies)))
    system = EvalSystem(name="s", spec="s", kind="model", model="m")
    summary = system_summary(system, [invented, copied], Bootstrap(resamples=10))
    assert (summary.unbacked, summary.met_claimed) == (2, 8)
    assert summary.unbacked_rate == pytest.approx(2 / 8)
    assert unbacked_text(summary) == "2/8 (25.0%)"
    assert [v.unbacked for v in invented.verdicts].count("quote_not_found") == 1
