"""What real servers do differently, each shown by a loopback server that behaves that way:
structured-output modes (each server takes only its own; ``auto`` finds it and remembers it),
presets, error bodies, reasoning fields, slow generation and another model's name."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from papergym.fakellm import FakeOpenAIServer
from papergym.fakellm.completions import RawResponse
from papergym.fakellm.schema import sample_from_schema
from papergym.llm.check import check_backends
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig, load_llm_config
from papergym.llm.endpoints import LEARNED_MODES, endpoint_key, read_records, records_path
from papergym.llm.identity import backend_identity, identity_text
from papergym.llm.openai_backend import OpenAIBackend
from papergym.llm.servers import AUTO_ORDER, PRESETS, error_message
from papergym.llm.types import LLMTransportError, Message, SamplingParams

ASK = [Message(role="user", content="Name one fruit and count to one.")]


class Pick(BaseModel):
    name: str
    count: int


ANSWER = {"name": "apple", "count": 1}


def mode_of(request: dict[str, Any]) -> str:
    """Which structured-output mode a request was sent in."""
    response_format = request.get("response_format")
    if isinstance(response_format, dict):
        if response_format.get("type") == "json_schema":
            return "json_schema"
        if response_format.get("type") == "json_object" and "schema" in response_format:
            return "json_object"
    for field, mode in (
        ("format", "ollama_format"),
        ("structured_outputs", "structured_outputs"),
        ("guided_json", "guided_json"),
    ):
        if field in request:
            return mode
    return "none"


def schema_in(request: dict[str, Any]) -> Any:
    """The JSON schema a request carries, in whichever mode."""
    response_format = request.get("response_format") or {}
    structured = request.get("structured_outputs") or {}
    return (
        (response_format.get("json_schema") or {}).get("schema")
        or response_format.get("schema")
        or request.get("format")
        or structured.get("json")
        or request.get("guided_json")
    )


def only(mode: str, status: int = 400) -> Callable[[dict[str, Any]], Any]:
    """A server that takes the schema only in ``mode`` and refuses every other one (a request
    without a schema is answered: servers take plain requests)."""

    def respond(request: dict[str, Any]) -> Any:
        if mode_of(request) not in (mode, "none"):
            body = {"error": {"message": f"unsupported field for {mode_of(request)}"}}
            return RawResponse(status, body)
        schema = schema_in(request)
        return sample_from_schema(schema) if schema else ANSWER

    return respond


@pytest.fixture(autouse=True)
def _fresh_modes() -> Iterator[None]:
    LEARNED_MODES.clear()
    yield
    LEARNED_MODES.clear()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running


def client(server: FakeOpenAIServer, tmp_path: Path, **backend: object) -> LLMClient:
    settings: dict[str, object] = {
        "model": "m",
        "base_url": server.base_url,
        "retry_base_delay": 0.01,
        **backend,
    }
    config = LLMConfig(default=BackendConfig.model_validate(settings), cache_dir=tmp_path)
    return LLMClient(config)


def modes_seen(server: FakeOpenAIServer) -> list[str]:
    return [mode_of(request) for request in server.requests]


@pytest.mark.parametrize("mode", AUTO_ORDER)
def test_each_mode_works_against_a_server_that_takes_only_it(
    server: FakeOpenAIServer, tmp_path: Path, mode: str
) -> None:
    server.responder = only(mode, status=422 if mode == "none" else 400)

    async def go() -> None:
        explicit = client(server, tmp_path, structured_output=mode)
        assert isinstance((await explicit.call("judge", ASK, schema=Pick)).parsed, Pick)
        assert modes_seen(server) == [mode]
        server.reset_stats()
        auto = client(server, tmp_path / "auto")  # auto is the default
        assert isinstance((await auto.call("judge", ASK, schema=Pick)).parsed, Pick)
        tried = list(AUTO_ORDER[: AUTO_ORDER.index(mode) + 1])
        assert modes_seen(server) == tried  # each refused mode asked again in the next
        server.reset_stats()
        other = [Message(role="user", content="Another fruit.")]
        await auto.call("judge", other, schema=Pick)
        assert modes_seen(server) == [mode]  # remembered for the endpoint
        await explicit.aclose()
        await auto.aclose()

    asyncio.run(go())


def test_a_mode_set_explicitly_is_not_changed_when_refused(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = only("json_object")

    async def go() -> None:
        llm = client(server, tmp_path, structured_output="json_schema", max_retries=3)
        with pytest.raises(LLMTransportError, match="HTTP 400: unsupported field"):
            await llm.call("judge", ASK, schema=Pick)
        await llm.aclose()

    asyncio.run(go())
    assert modes_seen(server) == ["json_schema"]


def test_a_400_that_every_mode_gets_is_raised_and_not_remembered(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = lambda _: RawResponse(400, {"error": {"message": "bad temperature"}})

    async def go() -> None:
        llm = client(server, tmp_path)
        with pytest.raises(LLMTransportError, match="HTTP 400: bad temperature"):
            await llm.call("judge", ASK, schema=Pick)
        assert modes_seen(server) == list(AUTO_ORDER)
        server.reset_stats()
        server.responder = only("json_schema")
        await llm.call("judge", ASK, schema=Pick)
        assert modes_seen(server) == ["json_schema"]  # the endpoint was not downgraded
        await llm.aclose()

    asyncio.run(go())


def test_a_context_limit_400_is_not_asked_again_in_other_modes(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    message = "This model's maximum context length is 2048 tokens. However, you requested 9000"
    server.responder = lambda _: RawResponse(400, {"object": "error", "message": message})

    async def go() -> None:
        llm = client(server, tmp_path)
        with pytest.raises(LLMTransportError, match="maximum context length is 2048"):
            await llm.call("judge", ASK, schema=Pick)
        await llm.aclose()

    asyncio.run(go())
    # once, then once more cut to the 2048 tokens the error states; never in another mode
    assert server.request_count == 2
    assert all("response_format" in request for request in server.requests)


def test_llm_check_detects_the_mode_and_later_runs_start_there(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.responder = only("json_object")
    config = LLMConfig(
        default=BackendConfig(model="m", base_url=(server.base_url,), retry_base_delay=0.01),
        cache_dir=tmp_path,
    )
    [result], _ = asyncio.run(check_backends(config, max_tokens=64))
    assert result.ok, result.errors
    assert result.structured_output == "json_object"
    record = read_records(records_path(tmp_path))[endpoint_key("m", server.base_url)]
    assert record.structured_output == "json_object"
    assert record.tokens_per_s is not None and record.recommended_concurrency is not None

    LEARNED_MODES.clear()  # a new process: only the record knows
    server.reset_stats()

    async def later_run() -> None:
        llm = LLMClient(config)
        await llm.call("judge", ASK, schema=Pick)
        await llm.aclose()

    asyncio.run(later_run())
    assert modes_seen(server) == ["json_object"]


def test_presets_set_mode_retries_and_error_bodies_and_explicit_fields_win(
    tmp_path: Path,
) -> None:
    llamacpp = BackendConfig(model="m", preset="llamacpp")
    assert llamacpp.structured_output == "json_object"
    assert llamacpp.retry_statuses == PRESETS["llamacpp"]["retry_statuses"]
    explicit = BackendConfig(model="m", preset="llamacpp", structured_output="none")
    assert explicit.structured_output == "none" and explicit.error_body == "openai"
    path = tmp_path / "llm.yaml"
    path.write_text(
        "preset: transformers\n"
        "default: {model: m, base_url: http://127.0.0.1:1/v1}\n"
        "roles: {judge: {model: j, base_url: http://127.0.0.1:2/v1, preset: vllm}}\n"
    )
    config = load_llm_config(path, env={})
    assert config.default is not None and config.default.structured_output == "none"
    assert config.default.error_body == "fastapi"
    assert config.for_role("judge").error_body == "vllm"  # its own preset wins
    legacy = BackendConfig(model="m", structured_output="response_format")  # type: ignore[arg-type]
    assert legacy.structured_output == "json_schema"


def test_the_default_mode_keeps_the_identity_caches_and_build_folders_were_made_with() -> None:
    for mode in ("auto", "json_schema", "response_format"):
        config = BackendConfig.model_validate({"model": "m", "structured_output": mode})
        assert backend_identity(config)["structured_output"] == "response_format"
        assert "structured_output" not in identity_text(config)
    other = BackendConfig(model="m", structured_output="json_object")
    assert backend_identity(other)["structured_output"] == "json_object"


def test_retry_statuses_decide_what_is_retried(server: FakeOpenAIServer, tmp_path: Path) -> None:
    async def go(**backend: object) -> int:
        server.reset_stats()
        server.script("429")
        llm = client(server, tmp_path, max_retries=2, **backend)
        with contextlib.suppress(LLMTransportError):
            await llm.call("writer", ASK)
        await llm.aclose()
        return server.request_count

    assert asyncio.run(go()) == 2  # default: 429 retried
    assert asyncio.run(go(preset="transformers")) == 1  # transformers serve never says 429


@pytest.mark.parametrize(
    ("body", "style", "message"),
    [
        ({"error": {"message": "m1", "type": "x"}}, "openai", "m1"),
        ({"object": "error", "message": "m2", "code": 400}, "vllm", "m2"),
        ({"detail": "Unexpected fields in the request: {'format'}"}, "fastapi", "Unexpected"),
        ({"detail": [{"loc": ["body", "n"], "msg": "bad"}]}, "auto", "body.n: bad"),
        ({"error": "model 'x' not found"}, "auto", "model 'x' not found"),
    ],
)
def test_error_bodies_are_read_where_each_server_puts_the_message(
    body: dict[str, Any], style: Any, message: str
) -> None:
    found = error_message(json.dumps(body), style)
    assert found is not None and found.startswith(message)
    assert error_message("<html>502</html>", style) is None


def test_a_fastapi_error_body_gives_a_readable_reason(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    detail = "Unexpected fields in the request: {'guided_json'}"
    server.responder = lambda _: RawResponse(422, {"detail": detail})

    async def go() -> None:
        llm = client(server, tmp_path, preset="transformers")
        with pytest.raises(LLMTransportError, match=r"HTTP 422: Unexpected fields") as caught:
            await llm.call("writer", ASK)
        assert "Error code" not in str(caught.value)
        await llm.aclose()

    asyncio.run(go())


def completion_body(message: dict[str, Any], model: str = "m") -> RawResponse:
    return RawResponse(
        200,
        {
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": 5,
                "completion_tokens": 40,
                "completion_tokens_details": {"reasoning_tokens": 30},
            },
        },
    )


def test_reasoning_fields_and_think_blocks_stay_out_of_the_answer_and_are_counted(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    thinking = "The user wants a fruit. Apple is a fruit."
    answers = iter(
        [
            {"role": "assistant", "content": json.dumps(ANSWER), "reasoning_content": thinking},
            {"role": "assistant", "content": "<think>weigh pear or plum</think>\nA pear."},
            {"role": "assistant", "content": json.dumps(ANSWER), "reasoning": thinking},
        ]
    )
    server.responder = lambda _: completion_body(next(answers))

    async def go() -> None:
        llm = client(server, tmp_path)
        structured = await llm.call("judge", ASK, schema=Pick, stage="s")
        assert structured.parsed == Pick(**ANSWER) and structured.usage.reasoning_tokens == 30
        assert structured.usage.reasoning_chars == len(thinking)
        plain = await llm.call("writer", [Message(role="user", content="a fruit")], stage="p")
        assert plain.text == "A pear." and plain.usage.reasoning_chars > len("weigh pear or plum")
        ollama = await llm.call("judge", [Message(role="user", content="x")], schema=Pick)
        assert ollama.usage.reasoning_chars == len(thinking)
        rows = {row["stage"]: row for row in llm.tracker.as_dict()}
        assert rows["s"]["reasoning_chars"] == len(thinking)
        await llm.aclose()

    asyncio.run(go())


def test_the_usage_table_shows_reasoning_only_when_a_model_reasoned() -> None:
    from rich.console import Console

    from papergym.llm.report import usage_table
    from papergym.llm.types import Usage
    from papergym.llm.usage import UsageTracker

    def rendered(usage: Usage) -> str:
        tracker = UsageTracker()
        tracker.record(stage="s", role="judge", model="m", usage=usage, cached=False)
        console = Console(width=200, record=True)
        console.print(usage_table(tracker))
        return console.export_text()

    assert "reasoning" not in rendered(Usage(prompt_tokens=3, completion_tokens=4))
    shown = rendered(Usage(completion_tokens=40, reasoning_tokens=30, reasoning_chars=1200))
    assert "reasoning" in shown and "30 tok / 1,200 chars" in shown


def test_a_slow_server_gets_a_timeout_scaled_to_max_tokens_and_its_speed(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.latency = 0.6  # slower than the timeout below
    params = SamplingParams(max_tokens=100)

    async def go(**backend: object) -> str:
        llm = client(server, tmp_path, timeout=0.3, max_retries=0, deadline=0.5, **backend)
        try:
            return (await llm.call("writer", ASK, params=params)).text
        except LLMTransportError as error:
            return str(error)
        finally:
            await llm.aclose()

    assert "no complete answer within 0.3 s" in asyncio.run(go())
    # 100 tokens at 100 tokens/s: one second per request, and the deadline as much longer
    assert "no complete answer" not in asyncio.run(go(tokens_per_s=100))


def test_the_measured_speed_scales_the_time_bounds() -> None:
    backend = OpenAIBackend(
        BackendConfig(model="m", base_url=("http://127.0.0.1:9/v1",), timeout=10, deadline=30)
    )
    [endpoint] = backend.endpoints
    assert backend.time_bounds(endpoint, 2048) == (10, 30)  # nothing measured yet
    endpoint.speeds.extend([4.0, 5.0, 6.0])  # median 5 tokens/s, allowed down to 2.5
    limit, deadline = backend.time_bounds(endpoint, 100)
    assert (limit, deadline) == (40, 120)
    assert backend.time_bounds(endpoint, 10) == (10, 30)  # short answers keep the timeout


def test_another_model_answering_is_warned_once_per_endpoint(
    server: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.responder = lambda _: completion_body(
        {"role": "assistant", "content": "hi"}, model="other-model"
    )
    caplog.set_level(logging.WARNING, logger="papergym.llm.openai_backend")

    async def go() -> None:
        llm = client(server, tmp_path)
        for text in ("one", "two", "three"):
            await llm.call("writer", [Message(role="user", content=text)])
        await llm.aclose()

    asyncio.run(go())
    warnings = [r.getMessage() for r in caplog.records if "other-model" in r.getMessage()]
    assert len(warnings) == 1 and "asked for model 'm'" in warnings[0]

    config = LLMConfig(
        default=BackendConfig(model="m", base_url=(server.base_url,)), cache_dir=tmp_path
    )
    server.responder = lambda request: completion_body(
        {"role": "assistant", "content": json.dumps(sample_from_schema(schema_in(request) or {}))},
        model="other-model",
    )
    [result], _ = asyncio.run(check_backends(config, max_tokens=32))
    assert result.answered_as == {server.base_url: "other-model"}


def test_the_same_model_under_a_servers_own_suffix_is_not_warned(
    server: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    names = iter(["m:latest", "m@main"])
    server.responder = lambda _: completion_body(
        {"role": "assistant", "content": "hi"}, next(names)
    )

    async def go() -> None:
        llm = client(server, tmp_path)
        for text in ("one", "two"):
            await llm.call("writer", [Message(role="user", content=text)])
        await llm.aclose()

    asyncio.run(go())
    assert not [r for r in caplog.records if "another model" in r.getMessage()]


@pytest.mark.parametrize("mode", ["json_object", "ollama_format"])
def test_the_fake_server_answers_the_schema_of_every_mode(
    server: FakeOpenAIServer, tmp_path: Path, mode: str
) -> None:
    async def go() -> None:
        llm = client(server, tmp_path, structured_output=mode, repair_attempts=0)
        assert isinstance((await llm.call("judge", ASK, schema=Pick)).parsed, Pick)
        await llm.aclose()

    asyncio.run(go())
