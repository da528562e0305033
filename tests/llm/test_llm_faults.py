"""The LLM layer under endpoint faults, over real HTTP on 127.0.0.1.

Each fault ends in the error type the build decides on: ``LLMTransportError`` for anything the
endpoint got wrong (after retries), ``LLMTruncatedError`` for an answer still cut after a larger
budget, ``LLMOutputError`` for an answer still invalid after repairs. Never an AttributeError,
JSONDecodeError or IndexError, never a secret in a message or a log line, never a hang.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from papergym.cli import app
from papergym.fakellm import Behaviour, FakeOpenAIServer, RawResponse
from papergym.llm.cache import ResponseCache, cache_key
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.structured import StructuredOutputError, json_schema_for, parse_structured
from papergym.llm.types import (
    Completion,
    LLMOutputError,
    LLMTransportError,
    LLMTruncatedError,
    Message,
)
from papergym.recipes.llm_recipe import StageEvidence

ASK = [Message(role="user", content="Sort what this excerpt says into the four stages.")]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def make_client(base_url: str, cache: ResponseCache | None = None, **backend: object) -> LLMClient:
    settings: dict[str, object] = {"model": "m", "base_url": base_url, "retry_base_delay": 0.01}
    settings.update(backend)
    return LLMClient(LLMConfig(default=BackendConfig.model_validate(settings)), cache=cache)


def raw(body: bytes | dict[str, Any], status: int = 200, **headers: str) -> Behaviour:
    """A behaviour answering ``body`` verbatim instead of a chat completion."""
    return Behaviour.respond(lambda _request: RawResponse(status, body, headers))


# --- item 3: malformed status-200 bodies -----------------------------------------------------

MALFORMED = {
    "html page": raw(
        b"<html><body><h1>502 Bad Gateway</h1></body></html>", **{"Content-Type": "text/html"}
    ),
    "cut-off json": raw(b'{"id": "x", "choices": [{"message": {"content": "hel'),
    "plain text": raw(b"upstream hiccup", **{"Content-Type": "text/plain"}),
    "empty body": raw(b""),
    "no choices": raw({"id": "x", "object": "chat.completion", "choices": []}),
    "choice without message": raw({"choices": [{"index": 0, "finish_reason": "stop"}]}),
    "content not text": raw({"choices": [{"message": {"content": {"a": 1}}}]}),
    "error object": raw({"error": {"message": "model overloaded"}}),
    "json list": raw(b"[]"),
}


@pytest.mark.parametrize("fault", sorted(MALFORMED))
def test_malformed_200_body_is_retried_then_a_transport_error(
    server: FakeOpenAIServer, fault: str
) -> None:
    server.default = MALFORMED[fault]

    async def go() -> None:
        llm = make_client(server.base_url, max_retries=2)
        with pytest.raises(LLMTransportError) as caught:
            await llm.call("extractor", ASK, schema=StageEvidence)
        await llm.aclose()
        message = str(caught.value)
        assert "\n" not in message
        assert "status 200 but" in message and "gave up after 3 attempts" in message

    asyncio.run(go())
    assert server.request_count == 3


def test_malformed_200_body_once_is_retried_to_success(server: FakeOpenAIServer) -> None:
    server.script(MALFORMED["html page"], MALFORMED["no choices"])

    async def go() -> None:
        llm = make_client(server.base_url, max_retries=2)
        result = await llm.call("extractor", ASK, schema=StageEvidence)
        assert isinstance(result.parsed, StageEvidence)
        await llm.aclose()

    asyncio.run(go())
    assert server.request_count == 3


def test_body_cut_off_mid_transfer_times_out_as_a_transport_error(
    server: FakeOpenAIServer,
) -> None:
    # The headers promise more bytes than ever come: the client must not wait forever.
    server.default = raw(b'{"choices": [', **{"Content-Length": "400"})

    async def go() -> None:
        llm = make_client(server.base_url, timeout=0.3, max_retries=1)
        with pytest.raises(LLMTransportError, match=r"no complete answer within 0\.3 s"):
            await llm.call("extractor", ASK)
        await llm.aclose()

    asyncio.run(go())


def test_client_error_is_a_transport_error_without_retry(server: FakeOpenAIServer) -> None:
    server.default = Behaviour.parse("404")

    async def go() -> None:
        llm = make_client(server.base_url, max_retries=3)
        with pytest.raises(LLMTransportError, match="HTTP 404"):
            await llm.call("writer", ASK)
        await llm.aclose()

    asyncio.run(go())
    assert server.request_count == 1


# --- item 4: the local check is exactly the schema sent --------------------------------------


@pytest.mark.parametrize("answer", ["{}", '{"GARBAGE_FIELD": 1}'])
def test_stage_evidence_must_match_the_schema_sent(answer: str) -> None:
    sent = json_schema_for(StageEvidence)
    assert sent["additionalProperties"] is False and len(sent["required"]) == 4
    with pytest.raises(StructuredOutputError) as caught:
        parse_structured(answer, StageEvidence)
    expected = (
        "GARBAGE_FIELD: Extra field" if "GARBAGE" in answer else "research_goal: Field required"
    )
    assert expected in str(caught.value)


def test_wrong_types_and_enums_are_refused_like_the_schema_says() -> None:
    class Verdict(BaseModel):
        verdict: Literal[0, 1]
        inferable: bool

    with pytest.raises(StructuredOutputError, match="verdict"):
        parse_structured('{"verdict": 2, "inferable": true}', Verdict)
    with pytest.raises(StructuredOutputError, match="inferable"):
        parse_structured('{"verdict": 1, "inferable": "yes"}', Verdict)  # pydantic takes "yes"
    assert parse_structured('{"verdict": 1, "inferable": true}', Verdict).verdict == 1


@pytest.mark.parametrize("bad", [{}, {"GARBAGE_FIELD": 1}])
def test_answer_failing_the_schema_is_repaired_and_never_cached(
    server: FakeOpenAIServer, tmp_path: Path, bad: dict[str, Any]
) -> None:
    server.default = Behaviour.respond(lambda _request: bad)

    async def go() -> None:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        llm = make_client(server.base_url, cache)
        with pytest.raises(LLMOutputError, match="StageEvidence after 3 attempt"):
            await llm.call("extractor", ASK, schema=StageEvidence)
        assert len(cache) == 0
        repair = server.requests[1]["messages"][-1]["content"]
        assert ("GARBAGE_FIELD" if bad else "research_goal: Field required") in repair
        # A re-run asks the endpoint again, and a valid answer is what gets cached.
        server.default = Behaviour()
        result = await llm.call("extractor", ASK, schema=StageEvidence)
        assert not result.cached and result.parsed is not None and result.parsed.solution
        again = await llm.call("extractor", ASK, schema=StageEvidence)
        assert again.cached and again.parsed == result.parsed
        await llm.aclose()

    asyncio.run(go())
    assert server.request_count == 4


def test_invalid_answer_cached_by_an_older_version_is_asked_again(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    async def go() -> None:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        llm = make_client(server.base_url, cache)
        key = cache_key(
            backend=llm.identity("extractor"),
            messages=ASK,
            schema=json_schema_for(StageEvidence),
            params=llm.config.for_role("extractor").params,
            sample_index=0,
        )
        cache.put(key, Completion(text="{}", finish_reason="stop", model="m"))
        result = await llm.call("extractor", ASK, schema=StageEvidence)
        assert not result.cached and result.parsed is not None and result.parsed.research_goal
        replaced = cache.get(key)
        assert replaced is not None and replaced.text == result.text
        await llm.aclose()

    asyncio.run(go())
    assert server.request_count == 1


# --- item 2: a truncated answer gets one larger budget ---------------------------------------


def test_answer_truncated_once_succeeds_with_a_doubled_budget(server: FakeOpenAIServer) -> None:
    server.script("truncated")

    async def go() -> None:
        llm = make_client(server.base_url)
        result = await llm.call("extractor", ASK, schema=StageEvidence)
        assert isinstance(result.parsed, StageEvidence)
        assert result.attempts == 2 and llm.tracker.calls == 2
        assert result.usage.completion_tokens > 0
        await llm.aclose()

    asyncio.run(go())
    first, second = (request["max_tokens"] for request in server.requests)
    assert second == 2 * first


def test_answer_still_truncated_after_the_larger_budget_is_a_truncation_error(
    server: FakeOpenAIServer,
) -> None:
    server.default = Behaviour.parse("truncated")

    async def go() -> None:
        llm = make_client(server.base_url, max_tokens_ceiling=3000)
        with pytest.raises(LLMTruncatedError, match="after one retry with a larger budget"):
            await llm.call("extractor", ASK, schema=StageEvidence)
        await llm.aclose()

    asyncio.run(go())
    assert [r["max_tokens"] for r in server.requests] == [2048, 3000]  # capped by the ceiling


def test_no_larger_budget_when_the_ceiling_is_reached(server: FakeOpenAIServer) -> None:
    server.default = Behaviour.parse("truncated")

    async def go() -> None:
        llm = make_client(server.base_url, max_tokens_ceiling=2048)
        with pytest.raises(LLMTruncatedError, match="max_tokens=2048"):
            await llm.call("extractor", ASK)
        await llm.aclose()

    asyncio.run(go())
    assert server.request_count == 1


def test_a_cut_answer_is_cached_so_a_rerun_reports_it_free_and_a_raised_budget_asks_again(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.default = Behaviour.parse("truncated")

    async def go(max_tokens: int) -> LLMClient:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        llm = make_client(
            server.base_url,
            cache=cache,
            params={"max_tokens": max_tokens},
            max_tokens_ceiling=3000,
        )
        with pytest.raises(LLMTruncatedError):
            await llm.call("extractor", ASK, schema=StageEvidence)
        await llm.aclose()
        cache.close()
        return llm

    first = asyncio.run(go(2048))
    assert server.request_count == 2 and first.tracker.calls == 2
    again = asyncio.run(go(2048))  # the same budget: the cached cut, no request
    assert server.request_count == 2 and again.tracker.calls == 0
    asyncio.run(go(2500))  # a raised budget is another question: asked
    assert server.request_count == 4


# --- item 10: a hung endpoint fails within the configured bound ------------------------------


def test_defaults_bound_a_hung_call_to_minutes_not_an_hour() -> None:
    config = BackendConfig(model="m")
    assert (config.timeout, config.max_retries, config.deadline) == (120.0, 3, 300.0)
    output = CliRunner().invoke(app, ["llm-check", "--help"], env={"COLUMNS": "300"}).output
    help_text = " ".join(output.replace("│", " ").split())
    assert "times out after 120 s" in help_text and "gives up after 300 s" in help_text


def test_hung_endpoint_fails_within_the_deadline(server: FakeOpenAIServer) -> None:
    server.default = Behaviour.hang()

    async def go() -> float:
        llm = make_client(server.base_url, timeout=0.4, max_retries=10, deadline=1.0)
        llm.backend("writer")  # built before the clock starts: its TLS setup is not the server's
        start = time.monotonic()
        with pytest.raises(LLMTransportError, match=r"deadline 1 s"):
            await llm.call("writer", ASK)
        elapsed = time.monotonic() - start
        await llm.aclose()
        return elapsed

    elapsed = asyncio.run(go())
    assert elapsed < 2.0  # 1 s of deadline, plus slack for a loaded machine
    assert server.request_count <= 3  # 0.4 + 0.4 + the 0.2 left: never the 11 attempts allowed


def test_waiting_for_a_free_slot_does_not_count_against_the_deadline(
    server: FakeOpenAIServer,
) -> None:
    server.latency = 0.25

    async def go() -> None:
        llm = make_client(server.base_url, max_concurrency=1, deadline=0.7)
        prompts = [[Message(role="user", content=f"q{i}")] for i in range(4)]
        results = await asyncio.gather(*(llm.call("writer", p) for p in prompts))
        assert all(r.text for r in results)  # 1 s in all, each call 0.25 s at the endpoint
        await llm.aclose()

    asyncio.run(go())


# --- item 11: secrets never reach a message or a log -----------------------------------------


def test_credentials_in_the_url_are_basic_auth_and_never_shown(
    server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-url-secret-0123456789"
    url = server.base_url.replace("http://", f"http://alice:{secret}@")
    server.default = Behaviour.parse("500")
    caplog.set_level(logging.DEBUG)

    async def go() -> str:
        llm = make_client(url, max_retries=1)
        with pytest.raises(LLMTransportError) as caught:
            await llm.call("writer", ASK)
        await llm.aclose()
        return str(caught.value)

    message = asyncio.run(go())
    assert secret not in message and "http://***@127.0.0.1" in message
    assert caplog.records and secret not in caplog.text
    expected = base64.b64encode(f"alice:{secret}".encode()).decode()
    assert server.headers_seen[-1]["authorization"] == f"Basic {expected}"


@pytest.mark.parametrize("status", [401, 400, 500])
def test_key_echoed_by_the_server_is_masked(
    server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    status: int,
) -> None:
    secret = "sk-echoed-secret-5551234"
    monkeypatch.setenv("ECHO_KEY", secret)
    body = {"error": {"message": f"Incorrect API key provided: {secret}.", "code": status}}
    server.default = raw(body, status=status)
    caplog.set_level(logging.DEBUG)

    async def go() -> str:
        llm = make_client(server.base_url, api_key_env="ECHO_KEY", max_retries=1)
        with pytest.raises(LLMTransportError) as caught:
            await llm.call("writer", ASK)
        await llm.aclose()
        return str(caught.value)

    message = asyncio.run(go())
    assert f"HTTP {status}" in message and "Incorrect API key provided: ***" in message
    assert secret not in message and secret not in caplog.text


# --- llm-check on a dead or garbage endpoint: one line, non-zero, no traceback ---------------


def test_llm_check_on_a_down_endpoint_is_one_line(server: FakeOpenAIServer) -> None:
    url = server.base_url
    server.stop()
    result = CliRunner().invoke(app, ["llm-check", "--base-url", url, "--model", "m"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "unreachable" in lines[0], result.output
    assert "Traceback" not in result.output


def test_llm_check_on_a_garbage_endpoint_is_one_line(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.default = MALFORMED["html page"]
    config = tmp_path / "llm.yaml"
    config.write_text(
        json.dumps({"default": {"base_url": server.base_url, "model": "m", "max_retries": 1}})
    )
    result = CliRunner().invoke(app, ["llm-check", "--llm-config", str(config)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert "status 200 but the body is not JSON" in lines[0] and "<html>" in lines[0]
    assert "Traceback" not in result.output and "internal error" not in result.output
