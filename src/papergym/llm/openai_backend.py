"""The ``openai`` backend: the official SDK against any OpenAI-compatible server.

vLLM, SGLang, Ollama, llama.cpp's server and hosted APIs all speak chat completions. This
backend adds what a 100k-call build needs on top of the SDK: a bound on in-flight requests per
endpoint, optional request and token rate limits, bounded retries with backoff and jitter on
429/5xx/timeouts/connection errors (the SDK's own retries are off so there is one policy), and
round-robin over several endpoints serving the same model. The API key is read from the
environment variable the config names and goes only to the SDK.

Every failure of the endpoint ends, after the retries, in :class:`LLMTransportError` with a
one-line reason: connection errors, timeouts, HTTP errors (4xx are not retried), and status-200
bodies that are not a chat completion (an HTML page from a proxy, a cut-off body, no choices).
One request may take ``timeout`` seconds; one call, all attempts and backoff included,
``deadline`` seconds; both grow for answers that need longer at the endpoint's speed
(:meth:`OpenAIBackend.time_bounds`). How the schema is sent, which statuses are retried and
where error bodies hold their message follow the backend's settings (its ``preset``:
:mod:`papergym.llm.servers`); an answer under another model's name is warned about once. Credentials in a base URL (``http://user:pass@host/v1``) are sent as HTTP
Basic auth, as curl does, and never appear in a URL that is logged or reported; every key and
password read is registered with :func:`papergym.redact.register_secret`, and every message
raised here passes through :func:`papergym.redact.redact`.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import logging
import statistics
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import openai
from pydantic import BaseModel

from papergym.environment import environ
from papergym.errors import BadInputError
from papergym.llm.config import BackendConfig
from papergym.llm.context import (
    CHARS_PER_TOKEN,
    SMALLEST_SERVED_CONTEXT,
    context_error,
    context_from_models,
    estimate_tokens,
)
from papergym.llm.endpoints import LEARNED_MODES, EndpointRecord, endpoint_key
from papergym.llm.limits import RateLimiter, backoff_delay
from papergym.llm.servers import (
    SchemaMode,
    error_message,
    next_mode,
    schema_fields,
)
from papergym.llm.structured import response_format_for
from papergym.llm.types import (
    Completion,
    LLMContextError,
    LLMTransportError,
    Message,
    SamplingParams,
    Usage,
)
from papergym.redact import redact, redact_url, register_secret

logger = logging.getLogger(__name__)

_MODE_REFUSED = frozenset({400, 422})
"""Statuses with which servers refuse a request field they do not take (FastAPI: 422)."""

SLOWDOWN_ALLOWED = 2.0
"""How much slower than measured a request may run before it times out (load varies)."""

MIN_TOKENS_TO_MEASURE = 8
"""Answers shorter than this say more about the prompt's processing than the speed."""

_WARNED_NAMES: set[str] = set()
"""Endpoints already warned about for answering with another model's name (this process)."""


# Connections per SDK client. One client's pool is scanned on every request, so its cost grows
# with the pool; several small clients per endpoint keep that scan short at high concurrency
# (measured in benchmarks/llm_throughput.py).
CONNECTIONS_PER_CLIENT = 32


@dataclass
class _Endpoint:
    url: str
    clients: list[openai.AsyncOpenAI]
    in_flight: asyncio.Semaphore
    key: str = ""  # model@normalised url: what is learned about the endpoint is filed under it
    speeds: deque[float] = field(default_factory=lambda: deque(maxlen=16))
    answered_as: str | None = None
    turn: itertools.cycle[openai.AsyncOpenAI] = field(init=False)

    def __post_init__(self) -> None:
        self.turn = itertools.cycle(self.clients)

    @property
    def tokens_per_s(self) -> float | None:
        """The median speed of recent answers (tokens per second per request), if any."""
        return statistics.median(self.speeds) if self.speeds else None


@dataclass(frozen=True)
class _Failure:
    """Why one attempt failed, and whether another attempt may succeed."""

    reason: str
    retryable: bool = True
    retry_after: float | None = None
    mode_refused: bool = False  # a 400/422 that another structured-output mode may avoid


class _BadAnswer(ValueError):
    """A status-200 body that is not a chat completion (proxy page, cut-off body, no choices)."""


def split_credentials(url: str) -> tuple[str, str | None]:
    """``url`` without its userinfo, and the HTTP Basic ``Authorization`` value it carried.

    ``http://user:pass@host/v1`` means Basic auth to every HTTP tool (curl, httpx); the SDK
    would otherwise put the credentials in the request URL, which httpx logs. The password (or
    a lone user part, often a key) is registered as a secret so that ``redact`` masks it.
    """
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, colon, password = (unquote(part) for part in userinfo.partition(":"))
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    for secret in (userinfo, password if colon else user, token):
        register_secret(secret)
    return urlunsplit(parts._replace(netloc=host)), f"Basic {token}"


def _clients(
    url: str | None, api_key: str, config: BackendConfig, authorization: str | None = None
) -> list[openai.AsyncOpenAI]:
    count = max(1, -(-config.max_concurrency // CONNECTIONS_PER_CLIENT))
    per_client = -(-config.max_concurrency // count)
    limits = type(openai.DEFAULT_CONNECTION_LIMITS)(
        max_connections=per_client, max_keepalive_connections=per_client, keepalive_expiry=30.0
    )
    # Custom headers win over the SDK's bearer header: URL credentials replace the API key.
    headers = {"Authorization": authorization} if authorization else None
    return [
        openai.AsyncOpenAI(
            base_url=url,
            api_key=api_key,
            max_retries=0,
            timeout=config.timeout,
            default_headers=headers,
            http_client=openai.DefaultAsyncHttpxClient(limits=limits, timeout=config.timeout),
        )
        for _ in range(count)
    ]


def api_key_from_env(config: BackendConfig, env: Mapping[str, str]) -> str:
    """The API key named by ``api_key_env``; local servers need none ("EMPTY").

    The key is registered as a secret: a server that echoes it in an error does not get it
    into a drop reason, a card or a log.
    """
    if config.api_key_env is None:
        default = env.get("OPENAI_API_KEY", "EMPTY") if not config.base_url else "EMPTY"
        register_secret(default)
        return default
    key = env.get(config.api_key_env)
    if not key:
        raise BadInputError(
            None, f"environment variable {config.api_key_env} (api_key_env) is not set"
        )
    register_secret(key)
    return key


class OpenAIBackend:
    """Chat completions over HTTP with concurrency bounds, rate limits and retries."""

    name = "openai"

    def __init__(
        self,
        config: BackendConfig,
        *,
        env: Mapping[str, str] | None = None,
        records: Mapping[str, EndpointRecord] | None = None,
    ) -> None:
        """``records``: what ``llm-check`` saved about endpoints (the mode ``auto`` starts at,
        the speed request timeouts start from)."""
        self.config = config
        api_key = api_key_from_env(config, environ() if env is None else env)
        urls: Sequence[str | None] = config.base_url or (None,)
        self.endpoints = []
        for url in urls:
            plain, authorization = split_credentials(url) if url else (url, None)
            shown = redact_url(url) if url else "https://api.openai.com/v1"
            endpoint = _Endpoint(
                url=shown,
                clients=_clients(plain, api_key, config, authorization),
                in_flight=asyncio.Semaphore(config.max_concurrency),
                key=endpoint_key(config.model, plain or shown),
            )
            record = (records or {}).get(endpoint.key)
            if record is not None and record.tokens_per_s:
                endpoint.speeds.append(record.tokens_per_s)
            if record is not None and record.structured_output:
                LEARNED_MODES.setdefault(endpoint.key, record.structured_output)
            self.endpoints.append(endpoint)
        self._next = itertools.cycle(self.endpoints)
        self._rpm = RateLimiter(config.requests_per_minute) if config.requests_per_minute else None
        self._tpm = RateLimiter(config.tokens_per_minute) if config.tokens_per_minute else None
        self._context: int | None = config.context_tokens
        self._context_asked = config.context_tokens is not None
        self._chars_per_token = CHARS_PER_TOKEN

    @property
    def model(self) -> str:
        return self.config.model

    async def complete(
        self, messages: Sequence[Message], params: SamplingParams, schema: type[BaseModel] | None
    ) -> list[Completion]:
        """``params.n`` completions of ``messages``; the call's usage is on the first one.

        Raises :class:`LLMTransportError` once the retries or the deadline are spent, or at
        once on a status not in ``retry_statuses``. Under ``structured_output: auto`` a request
        refused with 400/422 for its schema field is first sent again in the next mode
        (:data:`papergym.llm.servers.AUTO_ORDER`); the mode that works is remembered for the
        endpoint, and a refusal that ``none`` gets too is reported as the first one was.
        """
        plain = self._request(messages, params)
        request = plain
        # Seconds spent at the endpoint (attempts and backoff). Waiting for a free slot or
        # for the rate limit is not counted: a build queues thousands of calls on purpose.
        spent = 0.0
        attempt = 0
        refused: tuple[_Failure, SchemaMode] | None = None  # the first mode refused, if any
        while True:
            attempt += 1
            endpoint = next(self._next)
            mode = self.schema_mode(endpoint) if schema is not None else "none"
            if schema is not None:  # extra_body last: it may override anything
                request = {**plain, **schema_fields(mode, schema), **self.config.extra_body}
            await self._wait_for_rate(messages, params)
            async with endpoint.in_flight:
                limit, deadline = self.time_bounds(endpoint, params.max_tokens)
                if deadline is not None:
                    limit = min(limit, deadline - spent)
                started = time.monotonic()
                outcome = await self._attempt(endpoint, request, limit)
                elapsed = time.monotonic() - started
                spent += elapsed
            if not isinstance(outcome, _Failure):
                self._learn(endpoint, outcome, elapsed)
                return outcome
            if outcome.mode_refused and self.config.structured_output == "auto" and schema:
                fallback = next_mode(mode)
                if fallback is not None:  # asked again at once in the next mode, no retry spent
                    refused = refused or (outcome, mode)
                    LEARNED_MODES[endpoint.key] = fallback
                    attempt -= 1
                    continue
                if refused is not None:  # refused without a schema too: not about the mode
                    LEARNED_MODES[endpoint.key] = refused[1]
                    outcome = refused[0]
            if not outcome.retryable:
                raise LLMTransportError(redact(f"{endpoint.url}: {outcome.reason}"))
            delay = backoff_delay(
                attempt - 1, base=self.config.retry_base_delay, retry_after=outcome.retry_after
            )
            out_of_time = deadline is not None and spent + delay >= deadline
            if attempt > self.config.max_retries or out_of_time:
                bound = f" (deadline {deadline:g} s)" if out_of_time else ""
                raise _gave_up(endpoint.url, attempt, f"{spent:.1f} s{bound}", outcome.reason)
            await asyncio.sleep(delay)
            spent += delay

    async def _attempt(
        self, endpoint: _Endpoint, request: dict[str, Any], limit: float
    ) -> list[Completion] | _Failure:
        """One request: its completions, or why it failed."""
        try:
            # asyncio's timeout bounds the whole request; httpx's only bounds each read, so a
            # server trickling bytes would never time out. post() sends our plain-dict request
            # as is (the typed create() re-walks messages and schema on every call, a large
            # share of client CPU at scale) and bytes keep the SDK from parsing the body.
            async with asyncio.timeout(limit):
                body = await next(endpoint.turn).post(
                    "/chat/completions",
                    body=request,
                    cast_to=bytes,
                    options={"timeout": limit + 1.0},  # httpx's own bound must not come first
                )
        except TimeoutError:
            return _Failure(f"no complete answer within {limit:.1f} s")
        except openai.APIStatusError as error:
            message = error_message(error.response.text, self.config.error_body)
            status = error.status_code
            too_long = context_error(status, redact(message or str(error))[:2000])
            if too_long is not None:  # not transient, and no other schema mode would fit it
                raise too_long from None
            return _Failure(
                f"HTTP {status}: {redact(message)[:200] if message else _short(error)}",
                retryable=status in self.config.retry_statuses,
                retry_after=_retry_after(error),
                mode_refused=status in _MODE_REFUSED,
            )
        except openai.APIConnectionError as error:  # APITimeoutError is one
            return _Failure(_short(error))
        try:
            return _completions(body)
        except _BadAnswer as error:
            return _Failure(f"status 200 but {error}")

    def schema_mode(self, endpoint: _Endpoint) -> SchemaMode:
        """The structured-output mode sent to ``endpoint`` now: the configured one, or under
        ``auto`` the best one not yet refused there (json_schema before anything is known)."""
        if self.config.structured_output != "auto":
            return self.config.structured_output
        return LEARNED_MODES.get(endpoint.key, "json_schema")

    def time_bounds(self, endpoint: _Endpoint, max_tokens: int) -> tuple[float, float | None]:
        """(seconds one request may take, seconds one call may take) for answers of up to
        ``max_tokens`` tokens: ``timeout`` and ``deadline``, both scaled up when the answer
        needs longer at ``tokens_per_s`` (or at half the speed measured at ``endpoint``)."""
        speed = self.config.tokens_per_s
        if speed is None and endpoint.tokens_per_s:
            speed = endpoint.tokens_per_s / SLOWDOWN_ALLOWED
        needed = max_tokens / speed if speed else 0.0
        scale = max(1.0, needed / self.config.timeout)
        deadline = self.config.deadline
        return self.config.timeout * scale, None if deadline is None else deadline * scale

    def answered_as(self) -> dict[str, str]:
        """Endpoint → the model name its answers carried, where not the one asked for."""
        return {e.url: e.answered_as for e in self.endpoints if e.answered_as}

    def _learn(self, endpoint: _Endpoint, completions: list[Completion], elapsed: float) -> None:
        """What an answer tells about the endpoint: its speed, and the model answering."""
        tokens = completions[0].usage.completion_tokens if completions else 0
        if tokens >= MIN_TOKENS_TO_MEASURE and elapsed > 0:
            endpoint.speeds.append(tokens / elapsed)
        name = completions[0].model if completions else ""
        if not name or same_model(self.config.model, name):
            return
        endpoint.answered_as = name
        if endpoint.key not in _WARNED_NAMES:  # once per endpoint and process
            _WARNED_NAMES.add(endpoint.key)
            logger.warning(
                redact(
                    f"{endpoint.url}: asked for model {self.config.model!r}, the answer says "
                    f"{name!r}: another model may be answering"
                )
            )

    def _request(self, messages: Sequence[Message], params: SamplingParams) -> dict[str, Any]:
        """The request without a schema (added per attempt: the mode depends on the endpoint)."""
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
        request.update(self.config.extra_body)  # server-specific fields go in the body itself
        return request

    async def _wait_for_rate(self, messages: Sequence[Message], params: SamplingParams) -> None:
        if self._rpm:
            await self._rpm.acquire(1)
        if self._tpm:  # estimate: ~4 characters a token, plus the most the answer may take
            estimate = sum(len(m.content) for m in messages) / 4 + params.max_tokens * params.n
            await self._tpm.acquire(estimate)

    async def context_limit(self, needed: int = SMALLEST_SERVED_CONTEXT + 1) -> int | None:
        """The model's context length: ``context_tokens`` when set, else what the first
        endpoint's ``/v1/models`` states for the model (asked once, and only once a prompt
        and its answer, ``needed`` tokens, could exceed :data:`SMALLEST_SERVED_CONTEXT`), else
        one a context error stated; ``None`` when unknown."""
        if not self._context_asked and needed > SMALLEST_SERVED_CONTEXT:
            self._context_asked = True
            try:
                async with asyncio.timeout(min(self.config.timeout, 15.0)):
                    body = await self.endpoints[0].clients[0].get("/models", cast_to=bytes)
                self._context = context_from_models(json.loads(body), self.config.model)
            except (TimeoutError, openai.APIError, ValueError):
                pass  # no model list: the context stays unknown until a server error says it
        return self._context

    async def count_prompt(
        self, messages: Sequence[Message], schema: type[BaseModel] | None
    ) -> int:
        """The prompt's tokens, estimated (no tokenizer here): see :mod:`papergym.llm.context`."""
        return estimate_tokens(messages, _schema_chars(schema), self._chars_per_token)

    counted = "estimate"

    def learn_context(
        self, error: LLMContextError, messages: Sequence[Message], schema: type[BaseModel] | None
    ) -> bool:
        """Take the context length and prompt tokens a server's context error stated; whether
        they change how prompts are fitted (so that fitting again may now succeed)."""
        learned = False
        if error.context_tokens and error.context_tokens != self._context:
            self._context, learned = error.context_tokens, True
        if error.prompt_tokens and self._context:
            estimated = estimate_tokens(messages, _schema_chars(schema), self._chars_per_token)
            if error.prompt_tokens > estimated:  # denser text than the estimate assumed
                self._chars_per_token *= 0.95 * estimated / error.prompt_tokens
                learned = True
        return learned

    async def ping(self) -> None:
        """Fail fast, before any work, when an endpoint is unreachable or refuses the key."""
        limit = min(self.config.timeout, 15.0)
        for endpoint in self.endpoints:
            try:
                async with asyncio.timeout(limit):
                    await endpoint.clients[0].get("/models", cast_to=bytes)
            except openai.AuthenticationError:
                raise LLMTransportError(
                    f"{endpoint.url}: the API key was refused (HTTP 401)"
                ) from None
            except openai.APIStatusError:
                continue  # it answered (a server without a model list says 404): reachable
            except (TimeoutError, openai.APIConnectionError) as error:
                reason = f"no answer within {limit:g} s" if isinstance(error, TimeoutError) else ""
                raise LLMTransportError(
                    redact(f"{endpoint.url}: unreachable: {reason or _short(error)}")
                ) from None

    async def close(self) -> None:
        for endpoint in self.endpoints:
            for client in endpoint.clients:
                await client.close()


def same_model(asked: str, answered: str) -> bool:
    """Whether ``answered`` names the model ``asked`` for: equal, or with the suffix a server
    adds to the same model (Ollama's ``:latest`` tag, ``transformers serve``'s ``@main``)."""
    return answered in (asked, f"{asked}:latest", f"{asked}@main")


def _completions(body: bytes) -> list[Completion]:
    """The completions in a status-200 body; :class:`_BadAnswer` when it holds none."""
    try:
        data = json.loads(body)
    except ValueError:  # not JSON, cut off, or not UTF-8
        raise _BadAnswer(f"the body is not JSON: {_excerpt(body)}") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        raise _BadAnswer(f"the body holds no choices: {_excerpt(body)}")
    usage = _usage(data.get("usage"))
    model = data.get("model")
    completions = []
    for index, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(content, str | None):
            raise _BadAnswer(f"choice {index} holds no message: {_excerpt(body)}")
        finish_reason = choice.get("finish_reason")
        # Reasoning servers (vLLM, SGLang: reasoning_content; Ollama, newer vLLM: reasoning)
        # keep the model's thinking apart from the answer: counted, never parsed.
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        thought = Usage(reasoning_chars=len(reasoning) if isinstance(reasoning, str) else 0)
        completions.append(
            Completion(
                text=content or "",
                finish_reason=finish_reason if isinstance(finish_reason, str) else None,
                usage=(usage if index == 0 else Usage()) + thought,
                model=model if isinstance(model, str) else "",
            )
        )
    return completions


def _excerpt(body: bytes, limit: int = 80) -> str:
    """The start of a body on one line, enough to recognise an HTML page or an error."""
    text = " ".join(body.decode("utf-8", errors="replace").split())
    if not text:
        return "(empty)"
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    prompt_details = raw.get("prompt_tokens_details")
    completion_details = raw.get("completion_tokens_details")
    return Usage(
        prompt_tokens=_count(raw.get("prompt_tokens")),
        completion_tokens=_count(raw.get("completion_tokens")),
        cached_tokens=_count(
            prompt_details.get("cached_tokens") if isinstance(prompt_details, dict) else None
        ),
        reasoning_tokens=_count(
            completion_details.get("reasoning_tokens")
            if isinstance(completion_details, dict)
            else None
        ),
    )


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    try:
        return float(header) if header is not None else None
    except ValueError:
        return None


def _short(error: Exception) -> str:
    """The first line of ``error``'s message, bounded, secrets masked."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return redact(text)[:200]


def _schema_chars(schema: type[BaseModel] | None) -> int:
    """The characters a schema adds to a request, whichever mode carries it (an estimate)."""
    return len(json.dumps(response_format_for(schema))) if schema is not None else 0


def _gave_up(url: str, attempts: int, spent: str, reason: str) -> LLMTransportError:
    plural = "s" if attempts != 1 else ""
    return LLMTransportError(
        redact(f"{url}: gave up after {attempts} attempt{plural} in {spent}: {reason}")
    )
