"""``papergym llm-check``: does each configured endpoint answer, and can it produce JSON?

One plain and one structured call per distinct backend (roles that share a backend are checked
once), never from the cache, so a user learns before a 100k-call build whether the server is
reachable, the model name is right and structured output works. An endpoint that cannot be
reached, or fails the plain call, is not asked the structured call: one reason is enough.

Then how fast it is: one answer of :data:`SPEED_TOKENS` tokens alone gives the tokens per second
of one request, and :data:`CONCURRENCY_LEVELS` requests at once (shorter ones) the total speed;
the recommended concurrency is the most requests at once that still raised the total speed by
half. What was found about an ``openai`` backend's endpoints that answered (the structured-output mode it
took, the speed, the concurrency, the model name its answers carry) is saved in
``endpoints.json`` beside the response cache, where later runs read it
(:mod:`papergym.llm.endpoints`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.endpoints import EndpointRecord, endpoint_key, write_records
from papergym.llm.grammar import off_reason
from papergym.llm.grammar import schema_mode as hf_schema_mode
from papergym.llm.types import ROLES, LLMError, LLMTransportError, Message, Role, SamplingParams
from papergym.llm.usage import UsageTracker
from papergym.redact import redact, redact_url


class EchoCheck(BaseModel):
    """The structured answer asked for: small, but with a list and a constrained field."""

    ok: bool
    words: list[str]
    language: str


_PLAIN = [Message(role="user", content="Reply with one short sentence saying that you are ready.")]
_STRUCTURED = [
    Message(
        role="user",
        content="Return JSON with ok=true, words = the three words of 'plan the experiment' "
        "as a list, and language = 'English'.",
    )
]


_SPEED = [
    Message(
        role="user",
        content="Count from 1 to 60 in words, separated by commas (one, two, three, ...).",
    )
]

SPEED_TOKENS = 64
"""Tokens asked of the speed probe: enough that generating them outweighs reading the prompt."""

CONCURRENCY_LEVELS = (4, 16)
"""Requests at once tried after the single one; the next level only while the last one raised
the total speed by :data:`SCALING_GAIN` and took under :data:`PROBE_SECONDS`."""

CONCURRENCY_TOKENS = 32
SCALING_GAIN = 1.5
PROBE_SECONDS = 30.0


@dataclass
class BackendCheck:
    """The outcome for one backend and the roles it serves."""

    roles: list[str]
    backend: str
    model: str
    endpoints: list[str]
    plain: str = ""
    structured: str = ""
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    structured_output: str = ""  # the mode the structured call was sent in
    tokens_per_s: float | None = None  # one request alone
    concurrency: dict[int, float] = field(default_factory=dict)  # requests at once → tokens/s
    recommended_concurrency: int | None = None
    answered_as: dict[str, str] = field(default_factory=dict)  # endpoint → another model's name
    speed_error: str = ""  # why the speed could not be measured (the check still passes)
    notes: list[str] = field(default_factory=list)  # said under the table (hf: decoding)

    @property
    def ok(self) -> bool:
        return not self.errors

    def failure_line(self) -> str:
        """The failure on one line: which endpoint and model, and the first reason."""
        reason = self.errors[0] if self.errors else "ok"
        for endpoint in self.endpoints:  # said once, up front
            reason = reason.replace(f"{endpoint}: ", "", 1)
        return f"model {self.model} at {', '.join(self.endpoints)}: {reason}"


def backends_by_role(
    config: LLMConfig, roles: list[Role] | None = None
) -> list[tuple[list[Role], BackendConfig]]:
    """Distinct backends with the roles they serve (roles with no backend are left out)."""
    groups: dict[str, tuple[list[Role], BackendConfig]] = {}
    for role in roles or list(ROLES):
        backend = config.roles.get(role, config.default)
        if backend is None:
            continue
        groups.setdefault(backend.model_dump_json(), ([], backend))[0].append(role)
    return list(groups.values())


async def check_backends(
    config: LLMConfig,
    roles: list[Role] | None = None,
    max_tokens: int = 256,
    *,
    record: bool = True,
) -> tuple[list[BackendCheck], UsageTracker]:
    """Run the calls against each distinct backend; errors are recorded, not raised. With
    ``record``, what was found about the endpoints that passed is saved for later runs."""
    client = LLMClient(config.model_copy(update={"cache": False}))
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens)
    results = []
    try:
        for served, backend in backends_by_role(config, roles):
            check = BackendCheck(
                roles=list(served),
                backend=backend.backend,
                model=backend.model,
                endpoints=[redact_url(url) for url in backend.base_url] or ["(default)"],
            )
            start = time.perf_counter()
            answered = await _run_calls(client, served[0], params, check)
            if answered:  # the speed is worth knowing even when the structured call failed
                await _measure_speed(client, served[0], check)
                _describe_backend(client, served[0], check)
            if (why := off_reason(backend)) is not None:
                check.notes.append(f"{backend.model}: {why}")
            check.seconds = time.perf_counter() - start
            results.append(check)
        if record:
            _record(client.records_path, config, roles, results)
    finally:
        await client.aclose()
    return results, client.tracker


async def _timed(client: LLMClient, role: Role, count: int, max_tokens: int) -> float:
    """Total tokens per second of ``count`` requests at once, each up to ``max_tokens``.

    Sent to the backend itself: an answer cut at ``max_tokens`` is the point here, not a
    truncation to ask again with a larger budget. The usage is accounted all the same.
    """
    backend = client.backend(role)
    params = SamplingParams(temperature=0.0, max_tokens=max_tokens)
    start = time.perf_counter()
    answers = await asyncio.gather(*(backend.complete(_SPEED, params, None) for _ in range(count)))
    seconds = time.perf_counter() - start
    for [completion, *_] in answers:
        client.tracker.record(
            stage="llm-check", role=role, model=backend.model, usage=completion.usage, cached=False
        )
    return sum(answer[0].usage.completion_tokens for answer in answers) / max(seconds, 1e-9)


async def _measure_speed(client: LLMClient, role: Role, check: BackendCheck) -> None:
    """Tokens per second of one request, then of several at once. A failure here is noted, not
    an error: the endpoint answered the calls that decide whether work can start."""
    try:
        check.tokens_per_s = await _timed(client, role, 1, SPEED_TOKENS)
        # the same short answers alone and together, so that only the concurrency differs
        previous = check.concurrency[1] = await _timed(client, role, 1, CONCURRENCY_TOKENS)
        check.recommended_concurrency = 1
        for level in CONCURRENCY_LEVELS:
            start = time.perf_counter()
            speed = check.concurrency[level] = await _timed(client, role, level, CONCURRENCY_TOKENS)
            if speed < previous * SCALING_GAIN:
                break
            check.recommended_concurrency = level
            previous = speed
            if time.perf_counter() - start > PROBE_SECONDS:
                break
    except LLMError as error:
        check.speed_error = _first_line(error)


def _describe_backend(client: LLMClient, role: Role, check: BackendCheck) -> None:
    """The mode the structured call went in, and the model names the answers carried."""
    backend = client.backend(role)
    schema_mode = getattr(backend, "schema_mode", None)
    endpoints = getattr(backend, "endpoints", [])
    if schema_mode is not None and endpoints:
        check.structured_output = schema_mode(endpoints[0])
    else:  # a local model: constrained by the schema's grammar, or the schema in the prompt
        check.structured_output = hf_schema_mode(client.config.for_role(role))
    answered_as = getattr(backend, "answered_as", None)
    if answered_as is not None:
        check.answered_as = answered_as()


def _record(
    path: Path, config: LLMConfig, roles: list[Role] | None, results: list[BackendCheck]
) -> None:
    """Save what was found about the endpoints of the ``openai`` backends that answered (the
    speed and the mode hold even when a small model failed the structured call)."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    updates = {}
    for (_, backend), check in zip(backends_by_role(config, roles), results, strict=True):
        answered = check.ok or check.tokens_per_s is not None
        if backend.backend != "openai" or not answered or not backend.base_url:
            continue
        for url in backend.base_url:
            shown = redact_url(url)
            updates[endpoint_key(backend.model, url)] = EndpointRecord.model_validate(
                {
                    "structured_output": check.structured_output or None,
                    "tokens_per_s": check.tokens_per_s,
                    "recommended_concurrency": check.recommended_concurrency,
                    "answered_as": check.answered_as.get(shown),
                    "checked_at": now,
                }
            )
    if updates:
        write_records(path, updates)


async def _run_calls(
    client: LLMClient, role: Role, params: SamplingParams, check: BackendCheck
) -> bool:
    """Reachability, then the plain call, then the structured one; stops at a dead endpoint.
    True when the plain call was answered."""
    try:
        await client.ping([role])
    except LLMError as error:
        check.errors.append(_first_line(error))
        return False
    answered = True
    try:
        plain = await client.call(role, _PLAIN, params=params, stage="llm-check")
        check.plain = plain.text.strip()[:80]
    except LLMError as error:
        check.errors.append(f"plain call: {_first_line(error)}")
        answered = False
        if isinstance(error, LLMTransportError):
            return False
    try:
        answer = await client.call(
            role, _STRUCTURED, schema=EchoCheck, params=params, stage="llm-check"
        )
        check.structured = f"valid after {answer.attempts} attempt(s)"
    except LLMError as error:
        check.errors.append(f"structured call: {_first_line(error)}")
    return answered


def _first_line(error: Exception) -> str:
    text = redact(str(error))
    return text.splitlines()[0][:300] if text else type(error).__name__
