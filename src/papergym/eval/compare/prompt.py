"""What a compare judge is asked and how its answer is read: the answer schema, the prompt,
the mapping of picked labels back to systems, and the setup hash of all that."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, create_model

from papergym.eval.compare.orderings import labels
from papergym.eval.compare.records import CRITERIA, TIE, CompareCriterion, Pick
from papergym.eval.compare.settings import CompareSection
from papergym.llm.structured import strip_reasoning
from papergym.llm.types import Message
from papergym.records import content_hash


class _Comparison(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


@functools.cache
def answer_schema(count: int) -> type[BaseModel]:
    """The judge's answer for ``count`` plans: the reasoning first, then one label (or "tie")
    per criterion. The labels are an enum, so a pick outside them is a validation error the
    LLM layer repairs by re-asking."""
    choice: Any = cast(Any, Literal).__getitem__((*labels(count), TIE))
    described = "The label of the best plan on this criterion, or tie."
    model: type[BaseModel] = create_model(
        f"Comparison{count}",
        __base__=_Comparison,
        reason=(str, Field(description="A few sentences comparing the plans.")),
        overall=(choice, Field(description=described)),
        method=(choice, Field(description=described)),
        experiment=(choice, Field(description=described)),
    )
    return model


def map_picks(parsed: BaseModel, ordering: Sequence[str]) -> dict[CompareCriterion, Pick]:
    """Each criterion's label mapped back to the system shown under it."""
    shown = labels(len(ordering))
    picks: dict[CompareCriterion, Pick] = {}
    for criterion in CRITERIA:
        label = str(getattr(parsed, criterion))
        system = TIE if label == TIE else ordering[shown.index(label)]
        picks[criterion] = Pick(label=label, system=system)
    return picks


# -- the prompt --------------------------------------------------------------------------------

_REFERENCE_INTRO = (
    "A reference plan, from the paper the task was taken from, is shown after the question. It "
    "is one possible approach, not the bar: a plan that differs from it may be better."
)


@functools.cache
def _template_text() -> str:
    return (
        resources.files("papergym.eval.compare")
        .joinpath("prompts", "compare.md")
        .read_text("utf-8")
    )


def _spoken(items: Sequence[str]) -> str:
    """``A, B and C``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def shown_answer(answer: str, limit: int) -> tuple[str, bool]:
    """The answer as the judge sees it: reasoning blocks removed, cut at ``limit`` characters
    (0: no limit); and whether it was cut."""
    text = strip_reasoning(answer)
    if limit and len(text) > limit:
        return text[:limit], True
    return text, False


def compare_messages(
    question: str, answers: Sequence[str], reference: str | None = None
) -> list[Message]:
    """The one user message asking to compare ``answers`` (in the order shown)."""
    shown = labels(len(answers))
    plans = "\n\n".join(
        f"Plan {label}:\n<<<\n{answer.strip()}\n>>>"
        for label, answer in zip(shown, answers, strict=True)
    )
    has_reference = bool(reference and reference.strip())
    content = Template(_template_text()).substitute(
        count=len(answers),
        labels=_spoken(shown),
        question=question.strip(),
        reference_intro=_REFERENCE_INTRO if has_reference else "",
        reference_block=f"Reference plan:\n<<<\n{(reference or '').strip()}\n>>>\n"
        if has_reference
        else "",
        plans=plans,
    )
    return [Message(role="user", content=re.sub(r"\n{3,}", "\n\n", content).strip())]


def setup_id(section: CompareSection) -> str:
    """A hash of what decides a prompt besides the question and the answers: verdicts of
    another setup must not be mixed into one report."""
    return content_hash(
        {
            "template": _template_text(),
            "reference": section.reference,
            "max_answer_chars": section.max_answer_chars,
            "sample": section.sample,
        },
        length=12,
    )
