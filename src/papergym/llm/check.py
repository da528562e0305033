"""``papergym llm-check``: does each configured endpoint answer, and can it produce JSON?

One plain and one structured call per distinct backend (roles that share a backend are checked
once), never from the cache, so a user learns before a 100k-call build whether the server is
reachable, the model name is right and structured output works. An endpoint that cannot be
reached, or fails the plain call, is not asked the structured call: one reason is enough.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from pydantic import BaseModel

from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
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
    config: LLMConfig, roles: list[Role] | None = None, max_tokens: int = 256
) -> tuple[list[BackendCheck], UsageTracker]:
    """Run the two calls against each distinct backend; errors are recorded, not raised."""
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
            await _run_calls(client, served[0], params, check)
            check.seconds = time.perf_counter() - start
            results.append(check)
    finally:
        await client.aclose()
    return results, client.tracker


async def _run_calls(
    client: LLMClient, role: Role, params: SamplingParams, check: BackendCheck
) -> None:
    """Reachability, then the plain call, then the structured one; stops at a dead endpoint."""
    try:
        await client.ping([role])
    except LLMError as error:
        check.errors.append(_first_line(error))
        return
    try:
        plain = await client.call(role, _PLAIN, params=params, stage="llm-check")
        check.plain = plain.text.strip()[:80]
    except LLMError as error:
        check.errors.append(f"plain call: {_first_line(error)}")
        if isinstance(error, LLMTransportError):
            return
    try:
        answer = await client.call(
            role, _STRUCTURED, schema=EchoCheck, params=params, stage="llm-check"
        )
        check.structured = f"valid after {answer.attempts} attempt(s)"
    except LLMError as error:
        check.errors.append(f"structured call: {_first_line(error)}")


def _first_line(error: Exception) -> str:
    text = redact(str(error))
    return text.splitlines()[0][:300] if text else type(error).__name__
