"""QA verification: the question is self-contained and gives nothing away, the reference is
faithful to the document, and no criterion is one the question already states.

Two parts, the cheap one first so that a document it drops costs no call:

* the existing leakage screen (:func:`papergym.audit.overlap.screen_items`, the thresholds of the
  ``audit`` section) gives every criterion its overlap verdict; leaked desired criteria leave the
  rubric (named in ``qa_check.leaked``: an answer restating the question would earn them), and a
  rubric left with fewer than ``ares.min_criteria`` drops the document; a leaked pitfall stays
  (restating the question then costs reward, it cannot earn any);
* one structured LLM call answers three questions, reason first: is the question
  self-contained, is the reference faithful to the document, does the question give the answer
  away. Each "no" is its own drop reason.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pydantic import BaseModel, Field

from papergym.audit.formats import AuditCriterion, AuditItem
from papergym.audit.overlap import Embedder, screen_items
from papergym.audit.settings import AuditSection
from papergym.llm.client import LLMClient
from papergym.llm.types import Role
from papergym.recipes.ares.prompting import answer_or_reject, excerpt, prompt
from papergym.recipes.ares.record import AresDraft, CoGenerated, DraftCriterion, QACheck
from papergym.recipes.ares.settings import AresSection
from papergym.recipes.steps import Reject, model_reason

ROLE: Role = "judge"


class QAVerdictOut(BaseModel):
    """The verifier's answer: the reason, then three verdicts."""

    reason: str = Field(description="Two or three sentences covering the three checks.")
    self_contained: bool = Field(
        description="The question can be understood and answered without the document."
    )
    faithful: bool = Field(
        description="Every claim of the reference answer is supported by the document."
    )
    gives_away_answer: bool = Field(
        description="The question itself states the facts or conclusions the answer must supply."
    )


def screen_criteria(
    qa: CoGenerated, audit: AuditSection, embedder: Embedder
) -> tuple[tuple[DraftCriterion, ...], tuple[str, ...]]:
    """(criteria kept, with their overlap verdicts; texts of the desired ones the question
    states, which leave the rubric)."""
    item = AuditItem(
        id="ares",
        question=qa.question,
        criteria=tuple(AuditCriterion(text=c.text, points=c.weight) for c in qa.criteria),
        source="",
    )
    (screened,) = screen_items(
        [item],
        lexical_threshold=audit.lexical_threshold,
        embedding_threshold=audit.embedding_threshold,
        embedder=embedder,
    )
    kept: list[DraftCriterion] = []
    leaked: list[str] = []
    for criterion, audited in zip(qa.criteria, screened.criteria, strict=True):
        verdict = audited.verdict("overlap")
        # a leaked pitfall stays: restating the question then costs reward, it cannot earn any
        if verdict is not None and verdict.leaked and not criterion.pitfall:
            leaked.append(criterion.text)
        else:
            kept.append(criterion.model_copy(update={"leakage": audited.leakage}))
    return tuple(kept), tuple(leaked)


def qa_failure(verdict: QAVerdictOut) -> str | None:
    """The drop reason of a verifier's answer, or None when the pair passes every check."""
    reason = model_reason(verdict.reason) or "no reason given"
    if not verdict.self_contained:
        return f"not_self_contained: {reason}"
    if not verdict.faithful:
        return f"unfaithful: {reason}"
    if verdict.gives_away_answer:
        return f"answer_in_question: {reason}"
    return None


@dataclass(frozen=True)
class QAVerifier:
    """The ``verify_qa`` step."""

    client: LLMClient
    section: AresSection
    audit: AuditSection
    embedder: Embedder

    async def run(self, draft: AresDraft) -> AresDraft | Reject:
        qa = draft.need_qa()
        kept, leaked = await asyncio.to_thread(screen_criteria, qa, self.audit, self.embedder)
        if len(kept) < self.section.min_criteria:
            return Reject(
                f"leaked_criteria: {len(leaked)} of {len(qa.criteria)} criteria are stated by the "
                f"question, {len(kept)} left (fewer than {self.section.min_criteria})"
            )
        messages = prompt(
            "verify_qa",
            question=qa.question,
            reference=qa.reference,
            document=excerpt(draft.document.text, self.section.max_prompt_words),
        )

        verdict = await answer_or_reject(
            self.client, ROLE, messages, QAVerdictOut, stage="ares:verify_qa"
        )
        if isinstance(verdict, Reject):
            return verdict
        failure = qa_failure(verdict)
        if failure is not None:
            return Reject(failure)
        check = QACheck(
            self_contained=True,
            faithful=True,
            no_giveaway=True,
            reason=model_reason(verdict.reason),
            leaked=leaked,
        )
        return draft.model_copy(
            update={"qa": qa.model_copy(update={"criteria": kept}), "qa_check": check}
        )
