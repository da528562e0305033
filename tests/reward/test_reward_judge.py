"""The LLM rubric judge over real HTTP against the fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest

from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.plausible_judge import first_span
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.types import SamplingParams
from papergym.records import Criterion, GeneralCriterion, Instance, Rubric, Verdict
from papergym.reward.judge import (
    ADVISORY_REFERENCE_INTRO,
    GENERAL_STAGE,
    SPECIFIC_STAGE,
    RubricJudge,
    judgement_schema,
)

QUESTION = "How can attention be made cheaper on long sequences? Propose a research plan."
REFERENCE = (
    "Route each query to a few key blocks with a learned gate; evaluate on long-range tasks."
)
PLAN = "Use a learned gate to route queries to key blocks. Evaluate on long-range benchmarks."


def _instance(specific: int = 5, general: int = 3) -> Instance:
    criteria = tuple(
        Criterion(
            id=f"s{n}",
            text=f"Specific criterion {n} {'YES' if n % 2 else 'NO'}.",
            dimension="method",
            origin="extractive",
            rank=n,
        )
        for n in range(1, specific + 1)
    )
    generals = tuple(
        GeneralCriterion(id=f"g{n}", text=f"General criterion {n} {'YES' if n == 1 else 'NO'}.")
        for n in range(1, general + 1)
    )
    return Instance(
        id="inst",
        recipe="papergym",
        builder="extractive",
        paper_id="paper",
        title="Cheap attention",
        question=QUESTION,
        reference_answer=REFERENCE,
        rubric=Rubric(specific=criteria, general=generals),
    )


def _prompt(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def _criteria_in(request: dict[str, Any]) -> list[tuple[int, str]]:
    # a paper's prompt ends "Plan to grade:", a document's "Answer to grade:"
    listed = re.split(r"(?:Plan|Answer) to grade:", _prompt(request).split("Criteria (", 1)[1])[0]
    return [(int(n), text) for n, text in re.findall(r"^(\d+)\. (.*)$", listed, re.MULTILINE)]


def scripted(request: dict[str, Any]) -> dict[str, Any]:
    """Criteria containing YES are met (quoting the plan's first sentence); verdicts come back
    in reverse order."""
    quote = first_span(request)
    verdicts = [
        {
            "criterion_id": n,
            "reason": f"reason for {text}",
            "quote": quote if "YES" in text else None,
            "verdict": int("YES" in text),
        }
        for n, text in _criteria_in(request)
    ]
    return {"verdicts": verdicts[::-1]}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def _client(server: FakeOpenAIServer, **backend: Any) -> LLMClient:
    settings: dict[str, Any] = {"model": "judge-m", "base_url": server.base_url}
    settings.update({"retry_base_delay": 0.0, **backend})
    return LLMClient(LLMConfig(default=BackendConfig.model_validate(settings)))


def _run(
    judge: RubricJudge, instance: Instance, answer: str = PLAN
) -> tuple[list[Verdict], list[Verdict]]:
    async def go() -> tuple[list[Verdict], list[Verdict]]:
        try:
            return await judge.judge(instance, answer)
        finally:
            await judge.llm.aclose()

    return asyncio.run(go())


def _expected(instance: Instance) -> tuple[list[bool], list[bool]]:
    return (
        ["YES" in c.text for c in instance.rubric.specific],
        ["YES" in c.text for c in instance.rubric.general],
    )


def test_reward_judge_all_mode_one_call_per_pass_mapped_by_id(server: FakeOpenAIServer) -> None:
    server.responder = scripted
    instance = _instance()
    # The role asks for temperature 0.7: the judge still sends 0.
    llm = _client(server, params=SamplingParams(temperature=0.7, max_tokens=64))
    specific, general = _run(RubricJudge(llm), instance, f"<think>SECRET musing</think>{PLAN}")
    assert server.request_count == 2
    assert [v.criterion_id for v in specific] == [c.id for c in instance.rubric.specific]
    assert [v.criterion_id for v in general] == [c.id for c in instance.rubric.general]
    assert ([v.passed for v in specific], [v.passed for v in general]) == _expected(instance)
    assert specific[1].reason == "reason for Specific criterion 2 NO."  # out-of-order ids mapped
    assert {v.kind for v in specific} == {"specific"} and {v.kind for v in general} == {"general"}
    for request in server.requests:
        prompt = _prompt(request)
        assert request["temperature"] == 0
        assert request["max_tokens"] >= 64
        assert "SECRET" not in prompt and "<think>" not in prompt and PLAN in prompt
        assert QUESTION in prompt
    [spec_request] = [r for r in server.requests if "Specific criterion" in _prompt(r)]
    [gen_request] = [r for r in server.requests if "General criterion" in _prompt(r)]
    assert REFERENCE in _prompt(spec_request) and "exactly 5 verdicts" in _prompt(spec_request)
    assert REFERENCE not in _prompt(gen_request)  # reference optional, off by default
    schema = spec_request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["verdicts"]["minItems"] == 5
    assert schema["properties"]["verdicts"]["maxItems"] == 5
    assert {stage for stage, _, _ in llm.tracker.rows} == {SPECIFIC_STAGE, GENERAL_STAGE}
    assert llm.tracker.calls == 2


@pytest.mark.parametrize(("mode", "k", "calls"), [("one", 5, 8), ("k", 2, 5), ("k", 10, 2)])
def test_reward_judge_one_and_k_modes_chunk_the_criteria(
    server: FakeOpenAIServer, mode: Any, k: int, calls: int
) -> None:
    server.responder = scripted
    instance = _instance()
    llm = _client(server)
    specific, general = _run(RubricJudge(llm, mode=mode, k=k), instance)
    assert server.request_count == calls
    assert ([v.passed for v in specific], [v.passed for v in general]) == _expected(instance)
    assert [v.criterion_id for v in specific] == ["s1", "s2", "s3", "s4", "s5"]
    sizes = sorted(len(_criteria_in(r)) for r in server.requests)
    assert sum(sizes) == 8 and max(sizes) == (1 if mode == "one" else min(k, 5))
    assert llm.tracker.calls == calls


def test_reward_judge_general_reference_and_advisory_wording(server: FakeOpenAIServer) -> None:
    server.responder = scripted
    judge = RubricJudge(_client(server), advisory_reference=True, general_reference=True)
    _run(judge, _instance())
    for request in server.requests:
        prompt = _prompt(request)
        assert REFERENCE in prompt
        assert ADVISORY_REFERENCE_INTRO in prompt
        assert "one possible approach, not the bar to match" in prompt


def test_reward_judge_plain_reference_is_not_advisory(server: FakeOpenAIServer) -> None:
    server.responder = scripted
    _run(RubricJudge(_client(server)), _instance())
    assert all("not the bar to match" not in _prompt(r) for r in server.requests)


def _short(request: dict[str, Any]) -> dict[str, Any]:
    return {"verdicts": scripted(request)["verdicts"][1:]}


def _miscounted(request: dict[str, Any]) -> dict[str, Any]:
    """Right length, wrong ids: 1..n-1 then n+1."""
    verdicts = scripted(request)["verdicts"]
    verdicts[0] = {**verdicts[0], "criterion_id": len(verdicts) + 1}
    return {"verdicts": verdicts}


def _duplicated(request: dict[str, Any]) -> dict[str, Any]:
    count = len(_criteria_in(request))
    return {"verdicts": [{"criterion_id": 1, "reason": "r", "verdict": 1}] * count}


def _malformed(request: dict[str, Any]) -> str:
    return '{"verdicts": [{"criterion_id": 1, "reason": "cut'


def _bad_verdict_value(request: dict[str, Any]) -> dict[str, Any]:
    verdicts = scripted(request)["verdicts"]
    return {"verdicts": [{**v, "verdict": 2} for v in verdicts]}


@pytest.mark.parametrize(
    "responder", [_short, _miscounted, _duplicated, _malformed, _bad_verdict_value]
)
def test_reward_judge_invalid_answers_are_unscored_after_repairs(
    server: FakeOpenAIServer, responder: Any
) -> None:
    server.responder = responder
    specific, general = _run(RubricJudge(_client(server, repair_attempts=1)), _instance(3, 2))
    assert server.request_count == 4  # two passes, each an answer and one repair
    assert [v.passed for v in specific + general] == [None] * 5  # unscored, never False
    assert all(v.reason.startswith("judge failed: LLMOutputError") for v in specific + general)


def test_reward_judge_failure_is_per_chunk(server: FakeOpenAIServer) -> None:
    def broken_for_s2(request: dict[str, Any]) -> str | dict[str, Any]:
        if "Specific criterion 2" in _prompt(request):
            return "not json at all"
        return scripted(request)

    server.responder = broken_for_s2
    specific, general = _run(
        RubricJudge(_client(server, repair_attempts=0), mode="k", k=2), _instance(4, 1)
    )
    assert [v.passed for v in specific] == [None, None, True, False]
    assert [v.passed for v in general] == [True]


def test_reward_judge_empty_answer_and_empty_rubric_make_no_calls(
    server: FakeOpenAIServer,
) -> None:
    server.responder = scripted
    specific, general = _run(RubricJudge(_client(server)), _instance(2, 1), "<think>only</think>")
    assert server.request_count == 0
    assert [v.passed for v in specific + general] == [False, False, False]
    assert _run(RubricJudge(_client(server)), _instance(0, 0)) == ([], [])


def test_reward_judge_schema_is_cached_and_validates_ids() -> None:
    assert judgement_schema(3) is judgement_schema(3)
    assert judgement_schema(3).__name__ == "RubricJudgement"
    ok = {"verdicts": [{"criterion_id": n, "reason": "r", "verdict": 0} for n in (2, 1)]}
    assert len(judgement_schema(2).model_validate(ok).verdicts) == 2
    with pytest.raises(ValueError, match=r"criterion_id 1\.\.2"):
        judgement_schema(2).model_validate(
            {"verdicts": [{"criterion_id": 1, "reason": "r", "verdict": 0}] * 2}
        )
    with pytest.raises(ValueError, match="mode"):
        RubricJudge(_client_offline(), mode="some")  # type: ignore[arg-type]
    assert RubricJudge(_client_offline(), mode="k", k=3).name == "llm:m:k=3"


def _client_offline() -> LLMClient:
    return LLMClient(
        LLMConfig(default=BackendConfig(model="m", base_url=("http://127.0.0.1:9/v1",)))
    )
