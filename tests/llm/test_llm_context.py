"""Prompts fitted to the model's context before they are sent, and servers' context errors
recognised: the pure rules, then the client against a loopback server that, as vLLM does,
states its ``max_model_len`` in ``/v1/models`` and answers a too-long request with a 400."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.context import (
    context_error,
    context_from_models,
    estimate_tokens,
    fit_prompt,
)
from papergym.llm.report import usage_table
from papergym.llm.types import LLMContextError, LLMResult, Message, SamplingParams

INSTRUCTION = "Summarise the paper below in one sentence."
CLOSING = "Answer now: one sentence."


def long_prompt(chars: int) -> list[Message]:
    body = " ".join(f"word{i}" for i in range(chars // 6))
    return [
        Message(role="system", content="You read papers."),
        Message(role="user", content=f"{INSTRUCTION}\n{body}\n{CLOSING}"),
    ]


async def by_estimate(messages: Sequence[Message]) -> int:
    return estimate_tokens(messages)


def fit(messages: list[Message], context: int, max_tokens: int) -> Any:
    return asyncio.run(
        fit_prompt(messages, context_tokens=context, max_tokens=max_tokens, count=by_estimate)
    )


def test_a_prompt_that_fits_is_sent_as_it_is() -> None:
    messages = long_prompt(600)
    fitted = fit(messages, context=4096, max_tokens=256)
    assert fitted.messages == messages and fitted.cut is None
    assert fitted.max_tokens == 256


def test_a_long_prompt_loses_the_middle_of_its_longest_user_message() -> None:
    messages = long_prompt(30_000)
    fitted = fit(messages, context=2048, max_tokens=256)
    assert fitted.prompt_tokens <= 2048 - 256
    assert fitted.messages[0] == messages[0]  # the system message is left alone
    text = fitted.messages[1].content
    assert text.startswith(INSTRUCTION) and text.endswith(CLOSING)
    assert "characters cut to fit the model's context" in text
    cut = fitted.cut
    assert cut is not None and cut.message == 1 and cut.counted == "estimate"
    assert (
        cut.tokens_before == estimate_tokens(messages) and cut.tokens_after == fitted.prompt_tokens
    )
    assert cut.chars_removed > 20_000 and cut.context_tokens == 2048
    # Not cut more than needed: within 5% of the budget.
    assert fitted.prompt_tokens > 0.95 * (2048 - 256)


def test_max_tokens_above_half_the_context_leaves_the_prompt_half() -> None:
    fitted = fit(long_prompt(30_000), context=2048, max_tokens=4096)
    assert fitted.prompt_tokens <= 1024
    assert fitted.max_tokens == 2048 - fitted.prompt_tokens  # what is left, not 4096


def test_a_prompt_without_room_is_a_context_error() -> None:
    only_system = [Message(role="system", content="x " * 20_000)]
    with pytest.raises(LLMContextError, match="no user message"):
        fit(only_system, context=1024, max_tokens=64)
    tiny_context = long_prompt(30_000)
    with pytest.raises(LLMContextError, match="context length exceeded"):
        fit(tiny_context, context=64, max_tokens=16)


@pytest.mark.parametrize(
    ("body", "limit", "prompt"),
    [
        (  # vLLM
            "Error code: 400 - {'object': 'error', 'message': \"This model's maximum context "
            "length is 2048 tokens. However, you requested 2600 tokens (2100 in the messages, "
            '500 in the completion). Please reduce the length of the messages or completion."}',
            2048,
            2100,
        ),
        (  # newer vLLM
            "This model's maximum context length is 4096 tokens. However, your request has 5000 "
            "input tokens. Please reduce the length of the input messages.",
            4096,
            5000,
        ),
        (  # llama.cpp server
            "Error code: 400 - {'error': {'code': 400, 'message': 'the request exceeds the "
            "available context size, try increasing it', 'type': 'exceed_context_size_error', "
            "'n_prompt_tokens': 9000, 'n_ctx': 8192}}",
            8192,
            9000,
        ),
        ("Error code: 400 - {'error': {'code': 'context_length_exceeded'}}", None, None),
    ],
)
def test_servers_context_errors_are_recognised(
    body: str, limit: int | None, prompt: int | None
) -> None:
    error = context_error(400, body)
    assert error is not None and str(error).startswith("context length exceeded (HTTP 400)")
    assert (error.context_tokens, error.prompt_tokens) == (limit, prompt)


def test_other_errors_are_not_context_errors() -> None:
    assert context_error(400, "Error code: 400 - response_format json_schema unsupported") is None
    assert context_error(503, "This model's maximum context length is 2048 tokens.") is None


def test_context_length_from_a_model_list() -> None:
    vllm = {"data": [{"id": "other", "max_model_len": 1}, {"id": "m", "max_model_len": 32768}]}
    assert context_from_models(vllm, "m") == 32768
    llamacpp = {"data": [{"id": "model.gguf", "meta": {"n_ctx_train": 8192}}]}
    assert context_from_models(llamacpp, "m") == 8192  # its only model, under another name
    assert context_from_models({"data": [{"id": "m", "owned_by": "x"}]}, "m") is None
    assert context_from_models({"detail": "not found"}, "m") is None


class ContextServer(ThreadingHTTPServer):
    """A vLLM-like server: a token is ``chars_per_token`` characters of the messages; a request
    whose prompt and max_tokens exceed ``context`` gets vLLM's 400 (or ``message`` when set)."""

    def __init__(
        self, context: int, *, listed: bool, chars_per_token: float, message: str = ""
    ) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.context, self.listed, self.chars_per_token = context, listed, chars_per_token
        self.message = message
        self.requests: list[dict[str, Any]] = []
        self.refused = 0
        self.model_lists = 0  # GET /v1/models asked

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def prompt_tokens(self, request: dict[str, Any]) -> int:
        chars = sum(len(m["content"]) for m in request["messages"])
        return int(chars / self.chars_per_token) + 1


class _Handler(BaseHTTPRequestHandler):
    server: ContextServer

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.server.model_lists += 1
        entry: dict[str, Any] = {"id": "m", "object": "model"}
        if self.server.listed:
            entry["max_model_len"] = self.server.context
        self._send(200, {"object": "list", "data": [entry]})

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(request)
        prompt = self.server.prompt_tokens(request)
        if prompt + request["max_tokens"] > self.server.context:
            self.server.refused += 1
            message = self.server.message or (
                f"This model's maximum context length is {self.server.context} tokens. However, "
                f"you requested {prompt + request['max_tokens']} tokens ({prompt} in the "
                f"messages, {request['max_tokens']} in the completion)."
            )
            self._send(400, {"object": "error", "message": message, "code": 400})
            return
        answer = {"role": "assistant", "content": f"read {prompt} tokens"}
        usage = {"prompt_tokens": prompt, "completion_tokens": 3}
        choice = {"index": 0, "message": answer, "finish_reason": "stop"}
        self._send(200, {"id": "x", "model": "m", "choices": [choice], "usage": usage})


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ContextServer] = []

    def start(context: int, **options: Any) -> ContextServer:
        server = ContextServer(context, **options)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def call(
    server: ContextServer, messages: list[Message], tmp_path: Path
) -> tuple[LLMResult[Any], Any]:
    backend = BackendConfig(base_url=server.base_url, model="m", max_retries=2, retry_base_delay=0)
    client = LLMClient.from_config(LLMConfig(default=backend, cache_dir=tmp_path))

    async def run() -> LLMResult[Any]:
        try:
            return await client.call("extractor", messages, params=SamplingParams(max_tokens=256))
        finally:
            await client.aclose()

    return asyncio.run(run()), client.tracker


def test_a_prompt_longer_than_the_listed_context_is_cut_before_it_is_sent(
    serve: Any, tmp_path: Path
) -> None:
    server = serve(2048, listed=True, chars_per_token=4.0)
    result, tracker = call(server, long_prompt(40_000), tmp_path)
    assert server.refused == 0 and len(server.requests) == 1  # never sent to fail
    assert result.text.startswith("read") and result.prompt_cut is not None
    assert server.prompt_tokens(server.requests[0]) + 256 <= 2048
    [row] = tracker.as_dict()
    assert row["prompts_cut"] == 1 and row["tokens_cut"] == result.prompt_cut.tokens_removed
    assert tracker.prompts_cut == 1
    caption = usage_table(tracker).caption
    assert caption is not None and "1 prompt(s) cut to fit the model's context" in str(caption)


def test_a_context_error_teaches_the_limit_and_the_prompt_is_fitted_again(
    serve: Any, tmp_path: Path
) -> None:
    # No context in the model list, and denser text than the estimate assumes: the first
    # request is refused, its error says the limit and the prompt's tokens, the second fits.
    server = serve(2048, listed=False, chars_per_token=2.0)
    result, tracker = call(server, long_prompt(40_000), tmp_path)
    assert server.refused == 1 and len(server.requests) == 2
    assert result.prompt_cut is not None and tracker.prompts_cut == 1


def test_a_context_error_that_says_nothing_more_is_not_retried(serve: Any, tmp_path: Path) -> None:
    server = serve(1024, listed=False, chars_per_token=4.0, message="context length exceeded")
    with pytest.raises(LLMContextError, match=r"context length exceeded \(HTTP 400\)"):
        call(server, long_prompt(40_000), tmp_path)
    assert len(server.requests) == 1  # not asked again as if it were transient


def test_a_short_prompt_is_sent_without_asking_the_model_list(serve: Any, tmp_path: Path) -> None:
    # Asking costs a request (and kills transformers serve 5.10 without an HF cache folder):
    # a prompt and answer within the smallest context any chat model is served with need none.
    server = serve(2048, listed=True, chars_per_token=4.0)
    result, _ = call(
        server, [Message(role="user", content="What is the capital of France?")], tmp_path
    )
    assert result.text.startswith("read") and server.model_lists == 0
    call(server, long_prompt(40_000), tmp_path / "long")
    assert server.model_lists == 1
