"""The LLM leakage judge over real HTTP against the fake OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest

from papergym.audit.formats import AuditCriterion, AuditItem
from papergym.audit.judge import STAGE, judge_items, judge_messages, judgement_schema
from papergym.fakellm import Behaviour, FakeOpenAIServer
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.records import LeakageVerdict

QUESTION = "How can attention be made cheaper on long sequences? Propose a research plan."


def _item(ident: str, *criteria: str) -> AuditItem:
    return AuditItem(
        id=ident,
        question=QUESTION,
        criteria=tuple(AuditCriterion(text=c) for c in criteria),
        source="test",
    )


def _criteria_in(request: dict[str, Any]) -> list[tuple[int, str]]:
    prompt = request["messages"][0]["content"]
    listed = prompt.split("Criteria (", 1)[1]
    return [(int(n), text) for n, text in re.findall(r"^(\d+)\. (.*)$", listed, re.MULTILINE)]


def scripted_verdicts(request: dict[str, Any]) -> dict[str, Any]:
    """Criteria containing LEAK are inferable; verdicts come back in reverse order."""
    verdicts = [
        {"criterion_id": n, "reason": f"reason {n}", "inferable": "LEAK" in text}
        for n, text in _criteria_in(request)
    ]
    return {"verdicts": verdicts[::-1]}


def one_verdict_short(request: dict[str, Any]) -> dict[str, Any]:
    return {"verdicts": scripted_verdicts(request)["verdicts"][1:]}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def _client(server: FakeOpenAIServer, **backend: Any) -> LLMClient:
    settings: dict[str, Any] = {"model": "judge-m", "base_url": server.base_url}
    settings.update({"retry_base_delay": 0.0, **backend})
    return LLMClient(LLMConfig(default=BackendConfig.model_validate(settings)))


def _judge(llm: LLMClient, items: list[AuditItem]) -> list[AuditItem]:
    async def go() -> list[AuditItem]:
        try:
            return await judge_items(llm, items)
        finally:
            await llm.aclose()

    return asyncio.run(go())


def _judged(item: AuditItem) -> list[LeakageVerdict]:
    verdicts = [c.verdict("judge") for c in item.criteria]
    assert all(v is not None for v in verdicts)
    return [v for v in verdicts if v is not None]


def test_audit_judge_maps_verdicts_by_id_and_asks_once_per_item(server: FakeOpenAIServer) -> None:
    server.responder = scripted_verdicts
    items = [
        _item("a", "LEAK restates the question.", "Routes queries with a learned gate."),
        _item("b", "Measures latency.", "Ablates the gate.", "LEAK cheaper attention."),
    ]
    llm = _client(server)
    judged = _judge(llm, items)
    assert server.request_count == 2  # one call per item, every criterion in it
    assert [v.leaked for v in _judged(judged[0])] == [True, False]
    assert [v.leaked for v in _judged(judged[1])] == [False, False, True]
    assert [v.reason for v in _judged(judged[1])] == ["reason 1", "reason 2", "reason 3"]
    [request] = [r for r in server.requests if "LEAK restates" in r["messages"][0]["content"]]
    prompt = request["messages"][0]["content"]
    assert QUESTION in prompt and "1. LEAK restates the question." in prompt
    assert "inferred from the question alone" in prompt
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["verdicts"]["minItems"] == 2
    assert schema["properties"]["verdicts"]["maxItems"] == 2
    assert {row[0] for row in llm.tracker.rows} == {STAGE}


def test_audit_judge_wrong_count_is_unscored_after_repairs(server: FakeOpenAIServer) -> None:
    server.responder = one_verdict_short
    judged = _judge(_client(server, repair_attempts=1), [_item("a", "One.", "Two.", "Three.")])
    assert server.request_count == 2  # the first answer and one repair
    assert "at least 3" in server.requests[1]["messages"][-1]["content"]  # the repair says why
    verdicts = _judged(judged[0])
    assert [v.leaked for v in verdicts] == [None, None, None]  # unscored, never False
    assert all(v.reason.startswith("judge failed: LLMOutputError") for v in verdicts)


def test_audit_judge_duplicate_ids_are_unscored(server: FakeOpenAIServer) -> None:
    def duplicated(request: dict[str, Any]) -> dict[str, Any]:
        return {"verdicts": [{"criterion_id": 1, "reason": "r", "inferable": True}] * 2}

    server.responder = duplicated
    judged = _judge(_client(server, repair_attempts=0), [_item("a", "One.", "Two.")])
    verdicts = _judged(judged[0])
    assert [v.leaked for v in verdicts] == [None, None]
    assert "criterion_id 1..2" in verdicts[0].reason


def test_audit_judge_malformed_answer_is_unscored_and_other_items_still_judged(
    server: FakeOpenAIServer,
) -> None:
    def broken_for_b(request: dict[str, Any]) -> str | dict[str, Any]:
        if "Two." in request["messages"][0]["content"]:
            return '{"verdicts": [{"criterion_id": 1, "reason": "cut'
        return scripted_verdicts(request)

    server.responder = broken_for_b
    judged = _judge(
        _client(server, repair_attempts=1), [_item("a", "LEAK one."), _item("b", "Two.", "Three.")]
    )
    assert server.request_count == 3  # a once; b, then its repair
    assert [v.leaked for v in _judged(judged[0])] == [True]
    unscored = _judged(judged[1])
    assert [v.leaked for v in unscored] == [None, None]
    assert "LLMOutputError" in unscored[0].reason


def test_audit_judge_unreachable_endpoint_is_unscored(server: FakeOpenAIServer) -> None:
    server.default = Behaviour.error(500)
    judged = _judge(_client(server, max_retries=0), [_item("a", "One.")])
    [verdict] = _judged(judged[0])
    assert verdict.leaked is None and "LLMTransportError" in verdict.reason


def test_audit_judge_schema_and_messages_are_stable() -> None:
    assert judgement_schema(3) is judgement_schema(3)
    assert judgement_schema(3).__name__ == "LeakageJudgement"
    item = _item("a", "Has $dollar signs.", "Second.")
    [message] = judge_messages(item)
    assert "1. Has $dollar signs.\n2. Second." in message.content
    assert "exactly 2 verdicts" in message.content
    empty = AuditItem(id="e", question="Q", criteria=(), source="t")
    assert asyncio.run(judge_items(_client_offline(), [empty])) == [empty]


def _client_offline() -> LLMClient:
    return LLMClient(
        LLMConfig(default=BackendConfig(model="m", base_url=("http://127.0.0.1:9/v1",)))
    )
