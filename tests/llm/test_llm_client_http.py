"""LLMClient over real HTTP against the schema-answering test server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from papergym.fakellm import FakeOpenAIServer
from papergym.llm.cache import ResponseCache
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.types import (
    BudgetExceededError,
    LLMOutputError,
    LLMTransportError,
    LLMTruncatedError,
    Message,
)


class Criterion(BaseModel):
    text: str
    dimension: Literal["method", "experiment"]


class Rubric(BaseModel):
    criteria: list[Criterion]
    note: str | None = None


ASK = [Message(role="user", content="Write a rubric for a plan about sparse attention.")]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def client_for(
    server: FakeOpenAIServer, tmp_path: Path | None = None, **backend: object
) -> LLMClient:
    settings: dict[str, object] = {
        "model": "m",
        "base_url": server.base_url,
        "retry_base_delay": 0.01,
    }
    settings.update(backend)
    config = LLMConfig(default=BackendConfig.model_validate(settings))
    cache = ResponseCache(tmp_path / "cache.sqlite") if tmp_path else None
    return LLMClient(config, cache=cache)


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_structured_call_returns_a_validated_object_and_counts_usage(
    server: FakeOpenAIServer,
) -> None:
    async def go() -> None:
        llm = client_for(server)
        result = await llm.call("rubric", ASK, schema=Rubric, stage="rubric")
        assert isinstance(result.parsed, Rubric)
        assert result.parsed.criteria and result.parsed.criteria[0].dimension in {
            "method",
            "experiment",
        }
        assert result.usage.prompt_tokens > 0 and not result.cached
        sent = server.requests[0]
        assert sent["response_format"]["type"] == "json_schema"
        assert llm.tracker.calls == 1
        await llm.aclose()

    run(go())


def test_rerun_is_answered_from_the_cache_with_zero_calls(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    async def go() -> None:
        first = client_for(server, tmp_path)
        a = await first.call("judge", ASK, schema=Rubric)
        await first.aclose()
        second = client_for(server, tmp_path)  # a new client, as in a re-run
        b = await second.call("judge", ASK, schema=Rubric)
        assert b.cached and b.parsed == a.parsed
        assert server.request_count == 1
        assert second.tracker.calls == 0
        await second.aclose()

    run(go())


def test_rate_limits_and_server_errors_are_retried_within_bounds(server: FakeOpenAIServer) -> None:
    async def go() -> None:
        llm = client_for(server, max_retries=3)
        server.script("429", "500", "503")
        result = await llm.call("writer", ASK)
        assert result.text and server.request_count == 4
        server.reset_stats()
        server.script("500", times=5)
        with pytest.raises(LLMTransportError, match="gave up after 4 attempts"):
            await llm.call("writer", [Message(role="user", content="other")])
        assert server.request_count == 4
        await llm.aclose()

    run(go())
    server.clear_script()


def test_client_errors_are_not_retried(server: FakeOpenAIServer) -> None:
    async def go() -> None:
        llm = client_for(server, max_retries=3)
        server.script("400")
        with pytest.raises(Exception, match="HTTP 400"):
            await llm.call("writer", ASK)
        assert server.request_count == 1
        await llm.aclose()

    run(go())


def test_invalid_json_is_repaired_by_re_asking_with_the_error(server: FakeOpenAIServer) -> None:
    async def go() -> None:
        llm = client_for(server)
        server.script("malformed", "ok")
        result = await llm.call("rubric", ASK, schema=Rubric)
        assert result.attempts == 2 and isinstance(result.parsed, Rubric)
        repair = server.requests[1]["messages"]
        assert repair[-2]["role"] == "assistant" and "not valid JSON" in repair[-1]["content"]
        server.script("malformed", times=3)
        with pytest.raises(LLMOutputError, match="after 3 attempt"):
            await llm.call("rubric", [Message(role="user", content="again")], schema=Rubric)
        await llm.aclose()

    run(go())


def test_the_usage_counts_structured_answers_and_those_that_needed_a_repair(
    server: FakeOpenAIServer,
) -> None:
    async def go() -> dict[str, object]:
        llm = client_for(server)
        server.script("ok", "malformed", "ok", "malformed", "malformed", "malformed")
        await llm.call("rubric", ASK, schema=Rubric, stage="s")  # valid at once
        await llm.call("rubric", [Message(role="user", content="b")], schema=Rubric, stage="s")
        with pytest.raises(LLMOutputError):
            await llm.call("rubric", [Message(role="user", content="c")], schema=Rubric, stage="s")
        await llm.call("rubric", [Message(role="user", content="d")], stage="s")  # plain: not one
        await llm.aclose()
        (row,) = llm.tracker.as_dict()
        return row

    row = run(go())
    assert (row["calls"], row["structured"], row["repaired"]) == (7, 3, 2)
    server.clear_script()


@pytest.mark.parametrize("mode", ["think", "fence", "prose"])
def test_reasoning_fences_and_prose_around_json_are_handled(
    server: FakeOpenAIServer, mode: str
) -> None:
    async def go() -> None:
        llm = client_for(server)
        server.script(mode)
        result = await llm.call("judge", ASK, schema=Rubric)
        assert isinstance(result.parsed, Rubric) and result.attempts == 1
        await llm.aclose()

    run(go())


def test_truncated_answer_is_an_error_and_its_cut_is_cached(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    async def go() -> None:
        llm = client_for(server, tmp_path)
        server.script("truncated", times=2)  # cut, and cut again with the larger budget
        with pytest.raises(LLMTruncatedError, match="max_tokens"):
            await llm.call("writer", ASK, schema=Rubric)
        # the same question at the same budget: the cut again, from the cache, never parsed
        with pytest.raises(LLMTruncatedError, match="cached: no call made"):
            await llm.call("writer", ASK, schema=Rubric)
        assert server.request_count == 2
        await llm.aclose()

    run(go())


def test_in_flight_requests_never_exceed_the_bound(server: FakeOpenAIServer) -> None:
    server.latency = 0.1

    async def go() -> None:
        llm = client_for(server, max_concurrency=8)
        prompts = [[Message(role="user", content=f"q{i}")] for i in range(40)]
        await asyncio.gather(*(llm.call("extractor", p) for p in prompts))
        await llm.aclose()

    run(go())
    assert server.request_count == 40
    assert server.max_in_flight == 8


def test_hanging_server_times_out_and_gives_up(server: FakeOpenAIServer) -> None:
    async def go() -> None:
        llm = client_for(server, timeout=0.3, max_retries=1)
        server.script("hang", times=2)
        with pytest.raises(LLMTransportError):
            await llm.call("writer", ASK)
        await llm.aclose()

    run(go())
    assert server.request_count == 2


def test_api_key_is_sent_but_never_stored(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-very-secret-1234567890"
    monkeypatch.setenv("MY_KEY", secret)

    async def go() -> None:
        llm = client_for(server, tmp_path, api_key_env="MY_KEY")
        await llm.call("judge", ASK, schema=Rubric)
        await llm.aclose()

    run(go())
    assert server.headers_seen[-1].get("authorization") == f"Bearer {secret}"
    for path in tmp_path.iterdir():
        assert secret.encode() not in path.read_bytes()


def test_several_endpoints_are_used_round_robin(tmp_path: Path) -> None:
    with FakeOpenAIServer() as one, FakeOpenAIServer() as two:
        config = LLMConfig(default=BackendConfig(model="m", base_url=(one.base_url, two.base_url)))

        async def go() -> None:
            llm = LLMClient(config)
            for i in range(6):
                await llm.call("judge", [Message(role="user", content=f"q{i}")])
            await llm.aclose()

        run(go())
        assert one.request_count == 3 and two.request_count == 3


def test_budget_stops_the_run_cleanly(server: FakeOpenAIServer) -> None:
    async def go() -> None:
        config = LLMConfig(
            default=BackendConfig(model="m", base_url=server.base_url), budget_tokens=5
        )
        llm = LLMClient(config)
        await llm.call("writer", ASK)
        with pytest.raises(BudgetExceededError):
            await llm.call("writer", [Message(role="user", content="next")])
        await llm.aclose()

    run(go())
    assert server.request_count == 1


@pytest.mark.parametrize(
    ("mode", "where"),
    [
        ("response_format", "response_format"),
        ("structured_outputs", "structured_outputs"),
        ("guided_json", "guided_json"),
    ],
)
def test_schema_is_sent_in_the_configured_form(
    server: FakeOpenAIServer, mode: str, where: str
) -> None:
    async def go() -> None:
        llm = client_for(server, structured_output=mode)
        result = await llm.call("judge", ASK, schema=Rubric)
        assert isinstance(result.parsed, Rubric)
        await llm.aclose()

    run(go())
    assert where in server.requests[0]


def test_no_schema_sent_still_validates_locally(server: FakeOpenAIServer) -> None:
    async def go() -> None:
        llm = client_for(server, structured_output="none")
        server.script("ok")  # free text: not JSON for the schema, so it is re-asked then fails
        with pytest.raises(LLMOutputError):
            await llm.call("judge", ASK, schema=Rubric)
        await llm.aclose()

    run(go())
    assert "response_format" not in server.requests[0]


def test_api_key_never_reaches_the_logs_even_at_debug_level(
    server: FakeOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "sk-log-secret-0987654321"
    monkeypatch.setenv("MY_KEY", secret)
    caplog.set_level(logging.DEBUG)

    async def go() -> None:
        llm = client_for(server, tmp_path, api_key_env="MY_KEY")
        server.script("429", "ok")
        await llm.call("judge", ASK, schema=Rubric)
        await llm.aclose()

    run(go())
    assert caplog.records, "debug logging was captured"
    assert secret not in caplog.text
