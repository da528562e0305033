"""The holistic judge (ARES ablation, SPEC §6): one LLM score per answer, no rubric.

The judge sees the question, the reference answer and the answer (with any ``<think>`` removed),
never the criteria, and answers ``{"reason", "score": 0..10}`` (``prompts/holistic.md``); the
score maps to ``score / 10`` (:func:`~papergym.reward.ablations.holistic_value`). The reference is
shown because the rubric judge sees it too: the ablation then removes the rubric and nothing
else. An answer the LLM layer cannot parse into that schema after its repair attempts, or that
never comes, is unscored with the reason, never 0.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from string import Template

from pydantic import BaseModel, ConfigDict, Field

from papergym.llm.client import LLMClient
from papergym.llm.structured import strip_reasoning
from papergym.llm.types import LLMError, Message, Role, SamplingParams
from papergym.llm.verdicts import failure_reason
from papergym.records import Instance, RewardMode
from papergym.reward.ablations import HOLISTIC_POINTS, holistic_value
from papergym.reward.rating import AnswerJudge, Rating

HOLISTIC_STAGE = "reward:holistic"
"""The stage the holistic judge's calls are accounted under in the usage table."""

HOLISTIC_TOKENS = 512
"""Room for the reason and the score when sizing ``max_tokens``."""


class HolisticJudgement(BaseModel):
    """The holistic judge's answer: the reason first, then the score."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(description="Two or three sentences: the answer's strengths and gaps.")
    score: int = Field(ge=0, le=HOLISTIC_POINTS, description="A whole number from 0 to 10.")


@functools.cache
def _template() -> Template:
    path = resources.files("papergym.reward").joinpath("prompts", "holistic.md")
    return Template(path.read_text("utf-8"))


def holistic_messages(question: str, reference: str, answer: str) -> list[Message]:
    """The single user message asking for one score of ``answer``."""
    content = _template().substitute(
        question=question.strip(), reference=reference.strip(), answer=answer
    )
    return [Message(role="user", content=content.strip())]


class HolisticJudge(AnswerJudge):
    """Scores a whole answer 0–10 with a frozen LLM judge that sees no rubric."""

    mode: RewardMode = "holistic"

    def __init__(self, llm: LLMClient, *, role: Role = "judge") -> None:
        self.llm = llm
        self.role: Role = role

    @property
    def name(self) -> str:
        """``holistic:<model>``."""
        return f"holistic:{self.llm.config.for_role(self.role).model}"

    @property
    def identity(self) -> str:
        """The name, endpoint and sampling settings (as the rubric judge's identity)."""
        backend = self.llm.config.for_role(self.role)
        return json.dumps(
            {
                "name": self.name,
                "backend": self.llm.identity(self.role),
                "params": backend.params.model_dump(mode="json"),
                "repair_attempts": backend.repair_attempts,
            },
            sort_keys=True,
        )

    def _params(self) -> SamplingParams:
        params = self.llm.config.for_role(self.role).params
        return params.model_copy(
            update={"temperature": 0.0, "max_tokens": max(params.max_tokens, HOLISTIC_TOKENS)}
        )

    async def rate(self, instance: Instance, answer: str) -> Rating:
        """The answer's score in ``[0, 1]``; unscored when the judge fails or cannot be parsed."""
        plan = strip_reasoning(answer)
        if not plan.strip():
            return Rating(0.0, "the answer is empty")
        messages = holistic_messages(instance.question, instance.reference_answer, plan)
        try:
            result = await self.llm.call(
                self.role,
                messages,
                schema=HolisticJudgement,
                params=self._params(),
                stage=HOLISTIC_STAGE,
            )
        except LLMError as error:
            return Rating(None, failure_reason(error))
        if result.parsed is None:
            return Rating(None, "the judge's answer could not be parsed")
        reason = " ".join(result.parsed.reason.split())
        return Rating(holistic_value(result.parsed.score), reason)
