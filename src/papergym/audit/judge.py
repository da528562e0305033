"""The LLM leakage judge (SPEC §2 step 9): per item, can each criterion be inferred from the
question alone?

One call per item with the question and all its criteria, numbered; the answer is
``{"verdicts": [{"criterion_id", "reason", "inferable"}]}`` with the reason before the verdict,
so the model argues before it decides. The schema sent for an item of ``n`` criteria requires
exactly ``n`` verdicts with ids 1..n, so a wrong count is a validation error the LLM layer
repairs by re-asking; what is still wrong after its repairs (or never arrives) makes every
criterion of the item **unscored** (``leaked=None``) with the reason — never "not leaked",
which would understate leakage exactly where the judge failed.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from importlib import resources
from string import Template

from pydantic import Field

from papergym.audit.formats import AuditItem
from papergym.llm.client import LLMClient
from papergym.llm.types import LLMError, Message, Role, SamplingParams
from papergym.llm.verdicts import (
    Judgement,
    NumberedVerdict,
    failure_reason,
    in_order,
    with_room_for,
    wrong_count_reason,
)
from papergym.llm.verdicts import judgement_schema as schema_for
from papergym.records import LeakageVerdict

STAGE = "leakage"
"""The stage name the judge's calls are accounted under in the usage table."""

TOKENS_PER_VERDICT = 120
"""Room for one verdict (id, a one-sentence reason, the boolean) when sizing ``max_tokens``.

Less than the rubric judge's :data:`papergym.reward.judge.TOKENS_PER_VERDICT` on purpose: the
leakage prompt asks for one sentence of reason, the rubric prompt for one or two."""


class JudgeVerdict(NumberedVerdict):
    """The judge's answer for one criterion: the reason first, then the verdict."""

    reason: str = Field(description="One sentence: what in the question gives it away, or not.")
    inferable: bool = Field(description="True if the criterion follows from the question alone.")


class LeakageJudgement(Judgement[JudgeVerdict]):
    """All verdicts for one item."""


def judgement_schema(count: int) -> type[LeakageJudgement]:
    """The schema for an item of ``count`` criteria: exactly one verdict per id 1..count."""
    return schema_for(LeakageJudgement, count)


@functools.cache
def _template() -> Template:
    text = resources.files("papergym.audit").joinpath("prompts", "leakage.md").read_text("utf-8")
    return Template(text)


def judge_messages(item: AuditItem) -> list[Message]:
    """The single user message asking about every criterion of ``item``."""
    numbered = "\n".join(f"{n}. {c.text}" for n, c in enumerate(item.criteria, start=1))
    content = _template().substitute(
        count=len(item.criteria), question=item.question.strip(), criteria=numbered
    )
    return [Message(role="user", content=content.strip())]


def unscored(item: AuditItem, reason: str) -> list[LeakageVerdict]:
    """One unscored judge verdict per criterion, all with ``reason``."""
    return [LeakageVerdict(method="judge", leaked=None, reason=reason) for _ in item.criteria]


def verdicts_from(judgement: LeakageJudgement, count: int) -> list[LeakageVerdict] | None:
    """Verdicts in criterion order, or ``None`` unless there is exactly one per id 1..count."""
    ordered = in_order(judgement.verdicts, count)
    if ordered is None:
        return None
    return [
        LeakageVerdict(method="judge", leaked=v.inferable, reason=v.reason.strip()) for v in ordered
    ]


def judge_params(llm: LLMClient, role: Role, count: int) -> SamplingParams:
    """The role's sampling parameters with room for every verdict (never less than configured)."""
    return with_room_for(llm.config.for_role(role).params, count, TOKENS_PER_VERDICT)


async def judge_item(llm: LLMClient, item: AuditItem, *, role: Role = "judge") -> AuditItem:
    """``item`` with a judge verdict on every criterion (unscored when the answer is unusable)."""
    if not item.criteria:
        return item
    count = len(item.criteria)
    try:
        result = await llm.call(
            role,
            judge_messages(item),
            schema=judgement_schema(count),
            params=judge_params(llm, role, count),
            stage=STAGE,
        )
    except LLMError as error:
        return item.with_verdicts(unscored(item, failure_reason(error)))
    found = verdicts_from(result.parsed, count) if result.parsed is not None else None
    if found is None:
        return item.with_verdicts(unscored(item, wrong_count_reason(count)))
    return item.with_verdicts(found)


async def judge_items(
    llm: LLMClient,
    items: Sequence[AuditItem],
    *,
    role: Role = "judge",
    on_done: Callable[[AuditItem], None] | None = None,
) -> list[AuditItem]:
    """Every item judged, in order. Concurrency is bounded by the LLM layer, not here."""

    async def one(item: AuditItem) -> AuditItem:
        judged = await judge_item(llm, item, role=role)
        if on_done is not None:
            on_done(judged)
        return judged

    return list(await asyncio.gather(*(one(item) for item in items)))
