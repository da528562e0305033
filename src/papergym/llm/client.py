"""The one client every stage uses: ``await llm.call(role, messages, schema=Model)``.

It picks the backend configured for the role, answers from the cache when it can, validates
structured output locally against exactly the JSON schema it sends (re-asking with the
validation error when it is invalid, never caching what fails), asks once more with a larger
token budget when an answer is cut by the token limit, and accounts tokens and cost per stage
and role.

What a caller can get besides a result: :class:`LLMTransportError` (the endpoint failed, after
the backend's retries), :class:`LLMTruncatedError` (still cut after the larger budget),
:class:`LLMOutputError` (still invalid after the repairs) and :class:`BudgetExceededError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar, overload

from pydantic import BaseModel

from papergym.llm.cache import ResponseCache, cache_key, default_cache_dir
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.context import Fitted, fit_prompt
from papergym.llm.endpoints import EndpointRecord, read_records, records_path
from papergym.llm.identity import backend_identity
from papergym.llm.structured import (
    StructuredOutputError,
    json_schema_for,
    parse_structured,
    repair_message,
    split_reasoning,
)
from papergym.llm.types import (
    Completion,
    LLMContextError,
    LLMOutputError,
    LLMResult,
    LLMTruncatedError,
    Message,
    Role,
    SamplingParams,
    Usage,
)
from papergym.llm.usage import UsageTracker

T = TypeVar("T", bound=BaseModel)


class Backend(Protocol):
    """What a backend does: turn messages into ``params.n`` completions."""

    name: str

    @property
    def model(self) -> str: ...

    async def complete(
        self, messages: Sequence[Message], params: SamplingParams, schema: type[BaseModel] | None
    ) -> list[Completion]: ...

    async def close(self) -> None: ...


def make_backend(
    config: BackendConfig, records: Mapping[str, EndpointRecord] | None = None
) -> Backend:
    """The backend for one config; imported lazily so unused backends cost nothing.
    ``records``: what ``llm-check`` saved about endpoints (:mod:`papergym.llm.endpoints`)."""
    if config.backend == "hf":
        from papergym.llm.hf_backend import HFBackend

        return HFBackend(config)
    from papergym.llm.openai_backend import OpenAIBackend

    return OpenAIBackend(config, records=records)


def without_reasoning(completion: Completion) -> Completion:
    """``completion`` with its ``<think>`` blocks taken out of the text and counted in its
    usage (``reasoning_chars``): callers get the answer, the usage table the thinking."""
    text, thought = split_reasoning(completion.text)
    if not thought:
        return completion
    usage = completion.usage + Usage(reasoning_chars=thought)
    return completion.model_copy(update={"text": text, "usage": usage})


async def fit_for(
    backend: Backend,
    messages: Sequence[Message],
    params: SamplingParams,
    schema: type[BaseModel] | None,
) -> Fitted:
    """``messages`` fitted to the backend's context (:mod:`papergym.llm.context`); as they are
    when the backend cannot tell its context length."""
    limit = getattr(backend, "context_limit", None)
    count = getattr(backend, "count_prompt", None)
    if limit is None or count is None:
        return Fitted(list(messages), 0, params.max_tokens, None)

    async def counted(candidate: Sequence[Message]) -> int:
        tokens: int = await count(candidate, schema)
        return tokens

    context = await limit(await counted(messages) + params.max_tokens)
    if context is None:
        return Fitted(list(messages), 0, params.max_tokens, None)

    fitted = await fit_prompt(
        messages,
        context_tokens=context,
        max_tokens=params.max_tokens,
        count=counted,
        counted=getattr(backend, "counted", "estimate"),
    )
    if getattr(backend, "keeps_max_tokens", False):
        return Fitted(fitted.messages, fitted.prompt_tokens, params.max_tokens, fitted.cut)
    return fitted


class LLMClient:
    """Role → structured result, with cache, repair, truncation checks and accounting."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        cache: ResponseCache | None = None,
        tracker: UsageTracker | None = None,
    ) -> None:
        self.config = config
        self.cache = cache
        self.tracker = tracker or UsageTracker(
            prices=dict(config.prices),
            budget_usd=config.budget_usd,
            budget_tokens=config.budget_tokens,
        )
        self._backends: dict[str, Backend] = {}
        self._identities: dict[str, dict[str, Any]] = {}
        self.records_path = records_path(config.cache_dir or default_cache_dir())
        self._records: dict[str, EndpointRecord] | None = None

    @classmethod
    def from_config(cls, config: LLMConfig) -> LLMClient:
        """A client with the on-disk cache the config asks for."""
        cache = None
        if config.cache:
            cache = ResponseCache((config.cache_dir or default_cache_dir()) / "responses.sqlite")
        return cls(config, cache=cache)

    def backend(self, role: Role) -> Backend:
        """One backend per distinct config, so roles sharing a server share its bounds."""
        config = self.config.for_role(role)
        identity = config.model_dump_json()
        if identity not in self._backends:
            if self._records is None:
                self._records = read_records(self.records_path)
            self._backends[identity] = make_backend(config, self._records)
        return self._backends[identity]

    def identity(self, role: Role) -> dict[str, Any]:
        """Which model answers ``role``: :func:`~papergym.llm.identity.backend_identity` of its
        backend, taken once per client (as a local model's weights are loaded once)."""
        config = self.config.for_role(role)
        key = config.model_dump_json()
        if key not in self._identities:
            self._identities[key] = backend_identity(config)
        return self._identities[key]

    @overload
    async def call(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        schema: type[T],
        params: SamplingParams | None = ...,
        stage: str = ...,
        sample_index: int = ...,
    ) -> LLMResult[T]: ...

    @overload
    async def call(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        schema: None = ...,
        params: SamplingParams | None = ...,
        stage: str = ...,
        sample_index: int = ...,
    ) -> LLMResult[BaseModel]: ...

    async def call(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        schema: type[T] | None = None,
        params: SamplingParams | None = None,
        stage: str = "",
        sample_index: int = 0,
    ) -> LLMResult[T] | LLMResult[BaseModel]:
        """One answer for ``messages`` from the model serving ``role``.

        Raises :class:`LLMTruncatedError`, :class:`LLMOutputError` (invalid after repairs) or
        :class:`LLMTransportError`; callers turn those into a drop or an unscored verdict.
        """
        backend = self.backend(role)
        config = self.config.for_role(role)
        params = (params or config.params).model_copy(update={"n": 1})
        key = cache_key(
            backend=self.identity(role),
            messages=messages,
            schema=json_schema_for(schema) if schema else None,
            params=params,
            sample_index=sample_index,
        )
        stage = stage or role
        if (hit := await self._cached(key, role, backend.model, schema, stage)) is not None:
            return hit
        try:
            completion, parsed, attempts, usage = await self._answer(
                role, backend, messages, params, schema, stage
            )
        except LLMTruncatedError as cut:
            # A cut is a property of the budget: cached like an answer, so the next run with the
            # same budget reports it at no cost, and a raised budget (another key) asks again.
            if self.cache is not None and cut.completion is not None:
                await self.cache.aput(key, cut.completion)
            raise
        if self.cache is not None:
            await self.cache.aput(key, completion)
        return LLMResult(
            text=completion.text,
            parsed=parsed,
            usage=usage,
            finish_reason=completion.finish_reason,
            model=completion.model or backend.model,
            role=role,
            attempts=attempts,
            prompt_cut=completion.prompt_cut,
        )

    async def _cached(
        self, key: str, role: Role, model: str, schema: type[T] | None, stage: str
    ) -> LLMResult[T] | None:
        """The cached answer of ``key``, recorded as such; None when there is none, or when it
        no longer parses (written by a version that checked less strictly: asked again, and the
        valid answer replaces it). Raises :class:`LLMTruncatedError` for a cached cut answer."""
        if self.cache is None or (hit := await self.cache.aget(key)) is None:
            return None
        if hit.finish_reason == "length":
            self.tracker.record(
                stage=stage,
                role=role,
                model=model,
                usage=hit.usage,
                cached=True,
                cut=hit.prompt_cut,
            )
            raise LLMTruncatedError(
                f"{role}: answer cut by the token budget in an earlier run (cached: no call made); "
                f"raise max_tokens (and max_tokens_ceiling), then run again"
            )
        try:
            parsed = parse_structured(hit.text, schema) if schema else None
        except StructuredOutputError:
            return None
        self.tracker.record(
            stage=stage, role=role, model=model, usage=hit.usage, cached=True, cut=hit.prompt_cut
        )
        return LLMResult(
            text=hit.text,
            parsed=parsed,
            finish_reason=hit.finish_reason,
            cached=True,
            model=hit.model,
            role=role,
            prompt_cut=hit.prompt_cut,
        )

    async def _complete_fitted(
        self,
        backend: Backend,
        conversation: Sequence[Message],
        params: SamplingParams,
        schema: type[BaseModel] | None,
    ) -> Completion:
        """One completion of ``conversation`` fitted to the backend's context, its reasoning
        taken out; once more, cut to what the server's error states, when its count beat ours."""
        refitted = False
        while True:
            self.tracker.check_budget()
            fitted = await fit_for(backend, conversation, params, schema)
            sent = params.model_copy(update={"max_tokens": fitted.max_tokens})
            try:
                completion = (await backend.complete(fitted.messages, sent, schema))[0]
            except LLMContextError as error:
                learn = getattr(backend, "learn_context", None)
                if refitted or learn is None or not learn(error, fitted.messages, schema):
                    raise
                refitted = True
                continue
            return without_reasoning(completion.model_copy(update={"prompt_cut": fitted.cut}))

    async def _answer(
        self,
        role: Role,
        backend: Backend,
        messages: Sequence[Message],
        params: SamplingParams,
        schema: type[T] | None,
        stage: str,
    ) -> tuple[Completion, T | None, int, Usage]:
        conversation = list(messages)
        errors: list[str] = []
        spent = Usage()
        config = self.config.for_role(role)
        repairs = config.repair_attempts
        attempt = 0
        enlarged = False
        while True:
            attempt += 1
            completion = await self._complete_fitted(backend, conversation, params, schema)
            spent = spent + completion.usage
            self.tracker.record(
                stage=stage,
                role=role,
                model=backend.model,
                usage=completion.usage,
                cached=False,
                cut=completion.prompt_cut,
            )
            if completion.finish_reason == "length":
                larger = min(params.max_tokens * 2, config.max_tokens_ceiling)
                if enlarged or larger <= params.max_tokens:
                    raise LLMTruncatedError(
                        f"{role}: answer cut at max_tokens={params.max_tokens}"
                        f"{' after one retry with a larger budget' if enlarged else ''}; raise "
                        f"max_tokens (and max_tokens_ceiling={config.max_tokens_ceiling})",
                        completion=completion,
                    )
                # A cut answer is an artefact of the budget, not of the paper: one more try
                # with room to finish (the same conversation, so the repairs left still apply).
                params = params.model_copy(update={"max_tokens": larger})
                enlarged = True
                continue
            if schema is None:
                return completion, None, attempt, spent
            try:
                parsed = parse_structured(completion.text, schema)
            except StructuredOutputError as error:
                errors.append(str(error))
                if len(errors) > repairs:
                    self.tracker.record_structured(
                        stage=stage, role=role, model=backend.model, repaired=True
                    )
                    raise LLMOutputError(
                        f"{role}: no valid {schema.__name__} after {len(errors)} attempt(s): "
                        f"{errors[-1]}",
                        last_text=completion.text,
                        errors=errors,
                    ) from None
                conversation += [
                    Message(role="assistant", content=completion.text),
                    repair_message(error, schema),
                ]
                continue
            self.tracker.record_structured(
                stage=stage, role=role, model=backend.model, repaired=bool(errors)
            )
            return completion, parsed, attempt, spent

    async def sample(
        self,
        role: Role,
        messages: Sequence[Message],
        n: int,
        *,
        schema: type[T] | None = None,
        params: SamplingParams | None = None,
        stage: str = "",
    ) -> list[LLMResult[T] | LLMResult[BaseModel]]:
        """``n`` independent samples; each is cached under its own sample index."""
        return list(
            await asyncio.gather(
                *(
                    self.call(
                        role, messages, schema=schema, params=params, stage=stage, sample_index=i
                    )
                    for i in range(n)
                )
            )
        )

    async def ping(self, roles: Sequence[Role]) -> None:
        """Check, before work starts, that the backends of ``roles`` can be reached (or loaded)."""
        for role in roles:
            backend = self.backend(role)
            ping = getattr(backend, "ping", None)
            if ping is not None:
                await ping()

    async def release(self) -> None:
        """Free what the backends hold (a local model's weights) but keep the client usable: a
        later call loads them again. Evaluating several local models one after another needs
        this, or every model would stay in memory until the end."""
        for backend in self._backends.values():
            release = getattr(backend, "release", None)  # only a local model has one
            if release is not None:
                await release()

    async def aclose(self) -> None:
        for backend in self._backends.values():
            await backend.close()
        if self.cache is not None:
            self.cache.close()
