"""Filter, second half: an LLM classifier for documents no good question can be asked from.

The heuristic prefilter (:mod:`.prefilter`) has already removed what rules can see; the classifier
judges what they cannot: navigation pages that pass the ratios, fragments without enough
context, pure listings, content with nothing to ask about. It answers with a reason first and a
yes/no, and the reason travels with the drop.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from papergym.llm.client import LLMClient
from papergym.llm.types import Role
from papergym.recipes.ares.prompting import answer_or_reject, excerpt, prompt
from papergym.recipes.ares.record import AresDraft, Suitability
from papergym.recipes.steps import Reject, model_reason

ROLE: Role = "extractor"


class SuitabilityOut(BaseModel):
    """The classifier's answer: why, then whether."""

    reason: str = Field(description="One or two sentences: what the document offers or lacks.")
    suitable: bool = Field(
        description="True when a self-contained question with a substantive answer can be "
        "written from this document."
    )


@dataclass(frozen=True)
class Classifier:
    """The ``classify`` step: one structured call per document."""

    client: LLMClient
    max_words: int = 1000

    async def run(self, draft: AresDraft) -> AresDraft | Reject:
        messages = prompt("classify", document=excerpt(draft.document.text, self.max_words))

        answer = await answer_or_reject(
            self.client, ROLE, messages, SuitabilityOut, stage="ares:classify"
        )
        if isinstance(answer, Reject):
            return answer
        reason = model_reason(answer.reason)
        if not answer.suitable:
            return Reject(f"unsuitable: {reason or 'no reason given'}")
        verdict = Suitability(suitable=True, reason=reason)
        return draft.model_copy(update={"suitability": verdict})
