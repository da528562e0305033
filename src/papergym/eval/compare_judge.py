"""Compare's judges and the verdicts asked of them: resolving judge specs, planning every
question × ordering × judge, asking one verdict and running them all."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papergym.errors import BadInputError
from papergym.eval.compare_prompt import answer_schema, compare_messages, map_picks, shown_answer
from papergym.eval.compare_records import CompareVerdict
from papergym.eval.systems import ENDPOINT_PREFIX
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.llm.identity import identity_text
from papergym.llm.types import ROLES, BudgetExceededError, LLMError, LLMTransportError, Role
from papergym.llm.verdicts import failure_reason
from papergym.records import Instance
from papergym.redact import redact, redact_url
from papergym.settings.models import CompareSection

STAGE = "compare"
"""The stage the judges' calls are accounted under in the usage table."""


@dataclass(frozen=True)
class Judge:
    """A judge: the name recorded (a role, or ``openai:MODEL@URL`` masked), and where its
    calls go."""

    name: str
    role: Role
    config: LLMConfig

    @property
    def model(self) -> str:
        return self.config.for_role(self.role).model

    @functools.cached_property
    def backend(self) -> str:
        """Where the model is served (:func:`~papergym.llm.identity.identity_text`)."""
        return identity_text(self.config.for_role(self.role))


NO_LLM = (
    "compare needs an LLM judge and none is configured: pass --judge openai:MODEL@URL, or "
    "--base-url URL --model MODEL (llm.default.base_url= llm.default.model=), or --llm-config "
    "FILE, or -c FILE with an llm section"
)


def _endpoint_judge(spec: str, llm: LLMConfig) -> Judge:
    model, at, url = spec[len(ENDPOINT_PREFIX) :].rpartition("@")
    if not at or not model or not url.startswith(("http://", "https://")):
        raise BadInputError(
            None, f"judge {redact(spec)!r}: an endpoint judge is openai:MODEL@http(s)://HOST/v1"
        )
    # the default backend's settings (key variable, timeouts, retries, repairs, sampling) and
    # the section's prices, cache and budget apply, so an endpoint judge behind the same
    # gateway needs nothing more
    endpoint: dict[str, object] = {"backend": "openai", "model": model, "base_url": (url,)}
    if llm.default is not None:
        backend = llm.default.model_copy(update=endpoint)
    else:
        backend = BackendConfig(model=model, base_url=(url,))
    config = llm.model_copy(update={"default": None, "roles": {"judge": backend}})
    return Judge(f"{ENDPOINT_PREFIX}{model}@{redact_url(url)}", "judge", config)


def resolve_judges(specs: Sequence[str], llm: LLMConfig) -> list[Judge]:
    """Each judge spec: a role of the llm section, or ``openai:MODEL@URL``."""
    judges: list[Judge] = []
    for raw in specs:
        spec = raw.strip()
        if spec.startswith(ENDPOINT_PREFIX):
            judges.append(_endpoint_judge(spec, llm))
            continue
        if spec not in ROLES:
            raise BadInputError(
                None,
                f"judge {redact(spec)!r}: a judge is a role ({', '.join(ROLES)}) or "
                "openai:MODEL@URL",
            )
        if not llm.configured:
            raise BadInputError(None, NO_LLM)
        role: Role = spec
        llm.for_role(role)  # a role with no backend (and no default) fails here, not later
        judges.append(Judge(spec, role, llm))
    names = [j.name for j in judges]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise BadInputError(None, f"judge {repeated[0]!r} is given twice")
    return judges


@dataclass(frozen=True)
class Task:
    """One verdict to ask for."""

    instance: Instance
    ordering: tuple[str, ...]
    judge: Judge

    def key(self, setup: str) -> tuple[str, tuple[str, ...], str, str, str, str]:
        judge = self.judge
        return (self.instance.id, self.ordering, judge.name, judge.model, judge.backend, setup)


def plan_tasks(
    questions: Sequence[Instance], orderings: Sequence[tuple[str, ...]], judges: Sequence[Judge]
) -> list[Task]:
    """Every question × ordering × judge, question by question."""
    return [Task(q, o, j) for q in questions for o in orderings for j in judges]


def check_resumable(done: Sequence[CompareVerdict], planned: set[Any], where: Path) -> None:
    """Verdicts already in ``where`` must all belong to this comparison."""
    for verdict in done:
        if verdict.key not in planned:
            raise BadInputError(
                where,
                f"holds a verdict of another comparison (question {verdict.instance_id!r}, "
                f"judge {verdict.judge!r} ({verdict.backend or verdict.model}), order "
                f"{', '.join(verdict.ordering)}, setup {verdict.setup}); compare into another "
                "-o folder",
            )


async def ask(
    llm: LLMClient,
    task: Task,
    answers: dict[str, dict[str, str]],
    section: CompareSection,
    setup: str,
) -> CompareVerdict:
    """One verdict; an answer that cannot be parsed (after the LLM layer's repairs) or is cut
    by the token limit is an unparsed verdict. Endpoint failures and a spent budget propagate:
    they say nothing about the answers, so they are not recorded and the next run asks again."""
    shown = [
        shown_answer(answers[s][task.instance.id], section.max_answer_chars) for s in task.ordering
    ]
    reference = task.instance.reference_answer if section.reference else None
    messages = compare_messages(task.instance.question, [text for text, _ in shown], reference)
    truncated = tuple(s for s, (_, cut) in zip(task.ordering, shown, strict=True) if cut)
    base = {
        "instance_id": task.instance.id,
        "judge": task.judge.name,
        "model": task.judge.model,
        "backend": task.judge.backend,
        "ordering": task.ordering,
        "setup": setup,
        "truncated": truncated,
    }
    try:
        result = await llm.call(
            task.judge.role, messages, schema=answer_schema(len(task.ordering)), stage=STAGE
        )
    except (LLMTransportError, BudgetExceededError):
        raise
    except LLMError as error:
        return CompareVerdict(**base, picks=None, unparsed_reason=redact(failure_reason(error)))
    if result.parsed is None:  # cannot happen with a schema; never a silent loss if it does
        return CompareVerdict(**base, picks=None, unparsed_reason="no parsed answer")
    return CompareVerdict(
        **base,
        picks=map_picks(result.parsed, task.ordering),
        reason=redact(str(getattr(result.parsed, "reason", ""))),
    )


@dataclass
class RunOutcome:
    verdicts: list[CompareVerdict]
    failed: list[str]


async def run_tasks(
    clients: dict[str, LLMClient],
    tasks: Sequence[Task],
    answers: dict[str, dict[str, str]],
    section: CompareSection,
    setup: str,
    on_verdict: Callable[[CompareVerdict], None],
) -> RunOutcome:
    """Ask every task at once (the LLM layer bounds concurrency); each verdict is handed to
    ``on_verdict`` as it arrives, so an interrupted run keeps what it finished."""
    verdicts: list[CompareVerdict] = []
    failed: list[str] = []

    async def one(task: Task) -> None:
        try:
            verdict = await ask(clients[task.judge.name], task, answers, section, setup)
        except (LLMTransportError, BudgetExceededError) as error:
            failed.append(redact(f"{type(error).__name__}: {error}"))
            return
        verdicts.append(verdict)
        on_verdict(verdict)

    await asyncio.gather(*(one(task) for task in tasks))
    return RunOutcome(verdicts, failed)
