"""Per-criterion verdicts from an LLM judge: the answer's shape, its schema, and what a failure
leaves.

Both judges — the audit's leakage judge and the reward's rubric judge — number the criteria of
one call 1..n and ask for ``{"verdicts": [{"criterion_id", "reason", <verdict>}]}``, the reason
before the verdict so the model argues before it decides. Each judge subclasses
:class:`NumberedVerdict` with its own verdict field (``inferable: bool`` for leakage,
``verdict: 0|1`` for the rubric: the wire formats, and so the prompts and cache keys, stay as
they were) and its own wording of the reason. What they share lives here:

* :func:`judgement_schema` — the answer model for ``count`` criteria, requiring exactly one
  verdict per id 1..count, so structured decoding enforces the count and a model that ignores
  it gets a precise repair message from the LLM layer;
* :func:`in_order` — the verdicts by id 1..count, or ``None`` unless there is exactly one each;
* :func:`failure_reason` / :func:`wrong_count_reason` — the reason every criterion of a call
  is **unscored** with when the answer never arrives or is still wrong after the repairs;
* :func:`never_answered` — whether such a reason says the judge never answered (its endpoint
  failed, or the budget was spent): not a verdict, so nothing that keeps verdicts may keep it;
* :func:`with_room_for` — sampling parameters whose ``max_tokens`` fits every verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from papergym.llm.structured import exactly_one_per_id
from papergym.llm.types import BudgetExceededError, LLMError, LLMTransportError, SamplingParams

MAX_REASON_CHARS = 400
"""An unscored verdict's reason keeps this much of the error: enough to see what went wrong."""

PROMPT_TOKENS_MARGIN = 256
"""Tokens beyond the verdicts' own: the JSON wrapper and a model's preamble."""


class NumberedVerdict(BaseModel):
    """One criterion's verdict: its number and the reason; subclasses add the verdict itself.

    A subclass may redeclare ``reason`` to describe it in its own words; the field keeps its
    place (after ``criterion_id``), so the schema asks for the reason before the verdict.
    """

    model_config = ConfigDict(extra="forbid")

    criterion_id: int = Field(description="The criterion's number, 1-based, as listed.")
    reason: str


VerdictT = TypeVar("VerdictT", bound=NumberedVerdict)


class Judgement(BaseModel, Generic[VerdictT]):
    """All verdicts of one call; a judge subclasses it as ``Judgement[ItsVerdict]`` (the
    subclass's name and docstring are its schema's title and description)."""

    model_config = ConfigDict(extra="forbid")

    verdicts: list[VerdictT]


JudgementT = TypeVar("JudgementT", bound=Judgement[Any])


_SCHEMAS: dict[tuple[type[Judgement[Any]], int], type[Judgement[Any]]] = {}


def judgement_schema(base: type[JudgementT], count: int) -> type[JudgementT]:
    """``base`` for exactly ``count`` criteria: one verdict per id 1..count.

    Built per count because the count belongs in the schema, and kept (the first one built
    wins) so the JSON schema and the LLM cache key stay stable. The class keeps ``base``'s name.
    """
    key = (base, count)
    if key not in _SCHEMAS:
        _SCHEMAS.setdefault(key, exactly_one_per_id(base, count))
    return cast(type[JudgementT], _SCHEMAS[key])


def in_order(verdicts: Sequence[VerdictT], count: int) -> list[VerdictT] | None:
    """``verdicts`` sorted by id 1..count, or ``None`` unless there is exactly one per id.

    The schema already demands this; checking again here keeps a judge honest when the answer
    came from a path that did not validate against it (a cached or hand-built judgement).
    """
    by_id = {v.criterion_id: v for v in verdicts}
    if len(verdicts) != count or sorted(by_id) != list(range(1, count + 1)):
        return None
    return [by_id[n] for n in range(1, count + 1)]


def failure_reason(error: LLMError) -> str:
    """The unscored reason for a call that failed: the error's kind and its first characters."""
    detail = " ".join(str(error).split())
    if len(detail) > MAX_REASON_CHARS:
        detail = detail[: MAX_REASON_CHARS - 1] + "…"
    return f"judge failed: {type(error).__name__}: {detail}"


NO_ANSWER_ERRORS: tuple[type[LLMError], ...] = (LLMTransportError, BudgetExceededError)
"""Failures that leave no answer to judge by: the endpoint never answered (after the bounded
retries), or the run's budget was spent before the call. Asked again later, the judge may well
answer. An answer that came but could not be used (:class:`~papergym.llm.types.LLMOutputError`
after the repairs, :class:`~papergym.llm.types.LLMTruncatedError` after the larger budget) is
the judge's own outcome: asked again with the same settings, it would do the same."""


def never_answered(reason: str) -> bool:
    """Whether an unscored verdict's ``reason`` (:func:`failure_reason`) says its judge never
    answered (:data:`NO_ANSWER_ERRORS`), rather than answered unusably.

    >>> never_answered(failure_reason(LLMTransportError("http://h/v1: HTTP 503")))
    True
    >>> never_answered(wrong_count_reason(3))
    False
    """
    return any(reason.startswith(f"judge failed: {kind.__name__}:") for kind in NO_ANSWER_ERRORS)


def wrong_count_reason(count: int) -> str:
    """The unscored reason for an answer without exactly one verdict per criterion."""
    return f"judge did not return {count} verdicts"


def with_room_for(params: SamplingParams, count: int, tokens_per_verdict: int) -> SamplingParams:
    """``params`` with ``max_tokens`` raised (never lowered) to fit ``count`` verdicts."""
    needed = tokens_per_verdict * count + PROMPT_TOKENS_MARGIN
    return params.model_copy(update={"max_tokens": max(params.max_tokens, needed)})
