"""The ``openai`` backend: the official SDK against any OpenAI-compatible server.

vLLM, SGLang, Ollama, llama.cpp's server and hosted APIs all speak chat completions. This
backend adds what a 100k-call build needs on top of the SDK: a bound on in-flight requests per
endpoint, optional request and token rate limits, bounded retries with backoff and jitter on
429/5xx/timeouts/connection errors (the SDK's own retries are off so there is one policy), and
round-robin over several endpoints serving the same model. The API key is read from the
environment variable the config names and goes only to the SDK.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletion
from pydantic import BaseModel

from papergym.errors import BadInputError
from papergym.llm.config import BackendConfig
from papergym.llm.limits import RateLimiter, backoff_delay
from papergym.llm.structured import (
    guided_json_for,
    response_format_for,
    structured_outputs_for,
)
from papergym.llm.types import (
    Completion,
    LLMError,
    LLMTransportError,
    Message,
    SamplingParams,
    Usage,
)

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


# Connections per SDK client. One client's pool is scanned on every request, so its cost grows
# with the pool; several small clients per endpoint keep that scan short at high concurrency
# (measured in benchmarks/llm_throughput.py).
CONNECTIONS_PER_CLIENT = 32


@dataclass
class _Endpoint:
    url: str
    clients: list[openai.AsyncOpenAI]
    in_flight: asyncio.Semaphore
    turn: itertools.cycle[openai.AsyncOpenAI] = field(init=False)

    def __post_init__(self) -> None:
        self.turn = itertools.cycle(self.clients)


def _clients(url: str | None, api_key: str, config: BackendConfig) -> list[openai.AsyncOpenAI]:
    count = max(1, -(-config.max_concurrency // CONNECTIONS_PER_CLIENT))
    per_client = -(-config.max_concurrency // count)
    limits = type(openai.DEFAULT_CONNECTION_LIMITS)(
        max_connections=per_client, max_keepalive_connections=per_client, keepalive_expiry=30.0
    )
    return [
        openai.AsyncOpenAI(
            base_url=url,
            api_key=api_key,
            max_retries=0,
            timeout=config.timeout,
            http_client=openai.DefaultAsyncHttpxClient(limits=limits, timeout=config.timeout),
        )
        for _ in range(count)
    ]


def api_key_from_env(config: BackendConfig, env: Mapping[str, str]) -> str:
    """The API key named by ``api_key_env``; local servers need none ("EMPTY")."""
    if config.api_key_env is None:
        return env.get("OPENAI_API_KEY", "EMPTY") if not config.base_url else "EMPTY"
    key = env.get(config.api_key_env)
    if not key:
        raise BadInputError(
            None, f"environment variable {config.api_key_env} (api_key_env) is not set"
        )
    return key


class OpenAIBackend:
    """Chat completions over HTTP with concurrency bounds, rate limits and retries."""

    name = "openai"

    def __init__(self, config: BackendConfig, *, env: Mapping[str, str] | None = None) -> None:
        self.config = config
        api_key = api_key_from_env(config, os.environ if env is None else env)
        urls: Sequence[str | None] = config.base_url or (None,)
        self.endpoints = [
            _Endpoint(
                url=url or "https://api.openai.com/v1",
                clients=_clients(url, api_key, config),
                in_flight=asyncio.Semaphore(config.max_concurrency),
            )
            for url in urls
        ]
        self._next = itertools.cycle(self.endpoints)
        self._rpm = RateLimiter(config.requests_per_minute) if config.requests_per_minute else None
        self._tpm = RateLimiter(config.tokens_per_minute) if config.tokens_per_minute else None

    @property
    def model(self) -> str:
        return self.config.model

    async def complete(
        self, messages: Sequence[Message], params: SamplingParams, schema: type[BaseModel] | None
    ) -> list[Completion]:
        """``params.n`` completions of ``messages``; the call's usage is on the first one."""
        request = self._request(messages, params, schema)
        for attempt in range(self.config.max_retries + 1):
            endpoint = next(self._next)
            await self._wait_for_rate(messages, params)
            try:
                async with endpoint.in_flight:
                    # post() sends our plain-dict request as is: the typed create() re-walks
                    # messages and schema on every call, a large share of client CPU at scale.
                    response = await next(endpoint.turn).post(
                        "/chat/completions", body=request, cast_to=ChatCompletion
                    )
                return _completions(response)
            except openai.APIStatusError as error:
                if error.status_code not in _RETRYABLE_STATUS:
                    raise LLMError(
                        f"{endpoint.url}: HTTP {error.status_code}: {_short(error)}"
                    ) from None
                failure: Exception = error
            except (openai.APITimeoutError, openai.APIConnectionError) as error:
                failure = error
            if attempt == self.config.max_retries:
                raise LLMTransportError(
                    f"{endpoint.url}: gave up after {attempt + 1} attempts: {_short(failure)}"
                ) from None
            await asyncio.sleep(
                backoff_delay(
                    attempt, base=self.config.retry_base_delay, retry_after=_retry_after(failure)
                )
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _request(
        self, messages: Sequence[Message], params: SamplingParams, schema: type[BaseModel] | None
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.config.model,
            "messages": [m.model_dump() for m in messages],
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            "n": params.n,
        }
        if params.top_p is not None:
            request["top_p"] = params.top_p
        if params.seed is not None:
            request["seed"] = params.seed
        if params.stop:
            request["stop"] = list(params.stop)
        if schema is not None and self.config.structured_output == "response_format":
            request["response_format"] = response_format_for(schema)
        elif schema is not None and self.config.structured_output == "guided_json":
            request.update(guided_json_for(schema))
        elif schema is not None and self.config.structured_output == "structured_outputs":
            request.update(structured_outputs_for(schema))
        request.update(self.config.extra_body)  # server-specific fields go in the body itself
        return request

    async def _wait_for_rate(self, messages: Sequence[Message], params: SamplingParams) -> None:
        if self._rpm:
            await self._rpm.acquire(1)
        if self._tpm:  # estimate: ~4 characters a token, plus the most the answer may take
            estimate = sum(len(m.content) for m in messages) / 4 + params.max_tokens * params.n
            await self._tpm.acquire(estimate)

    async def ping(self) -> None:
        """Fail fast, before any work, when an endpoint is unreachable or refuses the key."""
        for endpoint in self.endpoints:
            client = endpoint.clients[0].with_options(timeout=min(self.config.timeout, 15.0))
            try:
                await client.models.list()
            except openai.NotFoundError:
                continue  # reachable; this server just has no model list
            except openai.AuthenticationError:
                raise LLMError(f"{endpoint.url}: the API key was refused (HTTP 401)") from None
            except (openai.APITimeoutError, openai.APIConnectionError) as error:
                raise LLMTransportError(f"{endpoint.url}: unreachable: {_short(error)}") from None
            except openai.APIStatusError:
                continue  # it answered: reachable

    async def close(self) -> None:
        for endpoint in self.endpoints:
            for client in endpoint.clients:
                await client.close()


def _completions(response: Any) -> list[Completion]:
    usage = _usage(getattr(response, "usage", None))
    return [
        Completion(
            text=choice.message.content or "",
            finish_reason=choice.finish_reason,
            usage=usage if index == 0 else Usage(),
            model=response.model or "",
        )
        for index, choice in enumerate(response.choices)
    ]


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    prompt_details = getattr(raw, "prompt_tokens_details", None)
    completion_details = getattr(raw, "completion_tokens_details", None)
    return Usage(
        prompt_tokens=raw.prompt_tokens or 0,
        completion_tokens=raw.completion_tokens or 0,
        cached_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", None) or 0,
    )


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None


def _short(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:200]
